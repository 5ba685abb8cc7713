"""Process start-up tuning for the ``rankscope`` command (never applied on a library
import: a notebook that imports the kernel keeps its own settings)."""

from __future__ import annotations

import gc
import os

_collector_paused = False
_managed = False  # the rankscope command paused the collector at start (its freezes apply)

#: gen-1 collections between two full ones once the dashboard runs (Python's default: 10)
FULL_COLLECTION_THRESHOLD = 100


def tune_allocator() -> None:
    """Keep freed large blocks in the process for reuse (Linux, glibc). Called by the
    ``rankscope`` process at start-up, never on import: a notebook that imports the
    kernel keeps its own allocator settings.

    The kernel allocates and frees many arrays of tens of megabytes. glibc serves each
    from a fresh ``mmap`` and unmaps it on free, so every array is paid for again in
    page faults -- a large share of the time on a virtual machine (benchmarks/README.md).
    With mmap off for malloc and a high trim threshold, freed memory is reused; with
    one arena, memory freed by pyarrow's or the kernel's worker threads is reused by the
    main thread too (several arenas measured ~200 MB more peak at 7M rows). Opt out
    with RANKSCOPE_MALLOC=default; glibc's own MALLOC_* environment settings are left
    alone.
    """
    if os.environ.get("RANKSCOPE_MALLOC", "") == "default" or not os.uname().sysname == "Linux":
        return
    if any(k.startswith("MALLOC_") for k in os.environ) or "GLIBC_TUNABLES" in os.environ:
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_top_pad, m_mmap_max, m_arena_max = -1, -2, -4, -8
        libc.mallopt(m_mmap_max, 0)
        libc.mallopt(m_trim_threshold, 1 << 30)
        libc.mallopt(m_top_pad, 64 << 20)
        libc.mallopt(m_arena_max, 1)  # threads share one heap, so memory freed on one is reused on another
    except (OSError, AttributeError):
        pass


def pause_collector() -> None:
    """Stop the cyclic garbage collector while the dashboard starts: importing Textual and
    the kernel and reading the inputs allocate hundreds of thousands of long-lived objects,
    and the collector would traverse them again and again (5-15 % of the start measured).
    :func:`resume_collector` turns it back on once the first frame with data is drawn."""
    global _collector_paused, _managed
    if gc.isenabled():
        gc.disable()
        _collector_paused = True
        _managed = True


def freeze_long_lived() -> None:
    """Freeze what is tracked now (``gc.freeze``) once the dashboard's report is in, when the
    ``rankscope`` command manages the collector (:func:`pause_collector` ran; a no-op
    otherwise). The report and the workspace it was computed on live as long as the app; at
    2 × 7M lines they were ~110,000 objects every full collection traversed again, each
    collection holding the event loop 150-430 ms during slider steps (40 ms after)."""
    if _managed and not _collector_paused:
        gc.freeze()


def resume_collector() -> None:
    """Turn the collector back on after :func:`pause_collector` (a no-op otherwise). Every
    object tracked now is frozen first (``gc.freeze``), so later collections never traverse
    the modules, styles and loaded inputs again: a full collection over them would stall the
    event loop for tens of milliseconds, and so would collecting here. What start-up left
    as cyclic garbage stays frozen with them (a one-time few megabytes at most).

    Full collections are made ten times rarer (the third threshold 10 → 100): each one
    traverses every widget, style and cached line the views made since, and a view's first
    show runs several (5 in the eight first visits on Cranfield), each holding the event loop
    100-200 ms. The young generations are collected as before, so short-lived cycles are
    still freed at once; only garbage that survived two collections waits longer."""
    global _collector_paused
    if _collector_paused:
        _collector_paused = False
        gc.freeze()
        t0, t1, t2 = gc.get_threshold()
        gc.set_threshold(t0, t1, max(t2, FULL_COLLECTION_THRESHOLD))
        gc.enable()
