"""Measures the user defines: one registration function for the API's ``define`` and for a
file of definitions (``--measures-from FILE.py``).

A user measure is a ``Measure`` entry like any built-in one, put in the same registry and
read by the same names resolver, so it gets intervals (bootstrap; Wilson when it is a
proportion), paired tests, strata, verdict rules, LaTeX and the dashboard with nothing
added elsewhere. Its function gets the same arguments a built-in's does: the ``Columns``
of one lane at one level (every query at once), the cutoff ``k`` (None when not given)
and the relevance level ``rel`` (None = ``--relevant``), and returns one value per query
code. Because the function is not ours, its result is checked before anything reads it
(:func:`checked_values`): one value per query, all finite, and 0 or 1 when it is declared
a proportion. A function that raises is run again query by query to name the query.

A name must not clash with a built-in name or alias (in any tool's spelling, ignoring
case) nor with another user measure; :func:`unregister` and :func:`scope` take
definitions back out, so a definition made for one evaluation does not outlive it.

References
----------
- Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
  inference. *JASA* 22(158), 209-212. (the interval of a measure declared a proportion)
- Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman &
  Hall. (the percentile bootstrap interval of any other user measure)
- MacAvaney, S., Macdonald, C. & Ounis, I. (2022). Streamlining evaluation with
  ir-measures. *ECIR 2022*. (one measure known by every tool's spelling)
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from . import names as N
from . import registry as R
from .columns import Columns, Hits, Ideal
from .measure import NONE, OPTIONAL, REQUIRED, Measure, Name

# The file being loaded (path, sha256) while its code runs, so that ``define`` calls made by
# the file record where the definition came from.
_SOURCE: ContextVar[tuple[str, str] | None] = ContextVar("rankscope_measures_source", default=None)

_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def _refuse(text: str) -> InputError:
    src = _SOURCE.get()
    return InputError(text, src[0] if src else None)


def _check_name(name: str, what: str) -> None:
    if not isinstance(name, str) or not _WORD.match(name):
        raise _refuse(f"measure {what} {name!r}: use a letter then letters, digits or _")
    m = N._NAME.match(name)
    if m is None or m.group("base") != name:  # 'p_10' would read as p at cutoff 10
        raise _refuse(f"measure {what} {name!r} ends in a cutoff-like _N or _at_N; choose a name without it")
    low = name.lower()
    if any(low == r.lower() for r in N.REFUSED):
        raise _refuse(f"measure {what} {name!r} is a name other tools use with another meaning; choose another name")
    taken = N._bases().get(low)
    if taken:
        m0, n0 = taken[0]
        if m0.defined_in is None:
            raise _refuse(f"measure {what} {name!r} is taken by the built-in measure {m0.kind} ({n0.source}: {n0.shown}); "
                          "choose another name")
        raise _refuse(f"measure {what} {name!r} is taken by the measure {m0.kind} defined in {m0.defined_in}; "
                      "unregister it first")


def define(name: str, per_query: Callable[..., Any], definition: str | None = None, aliases: Iterable[str] = (),
           proportion: bool = False, cutoff: str = OPTIONAL, needs_relevant: bool = False) -> Measure:
    """Register a measure: ``per_query(cols, k, rel)`` returns one value per query code.

    ``name`` and every alias must be new (not a built-in name or alias in any tool's
    spelling, ignoring case); ``definition`` is the text report.json's ``definitions``
    block and the captions quote; ``proportion`` makes the mean's interval Wilson's (the
    values must then be 0 or 1); ``cutoff`` is ``"optional"`` (``name`` and ``name@k``),
    ``"required"`` or ``"none"``; ``needs_relevant`` makes the measure undefined on a query
    with no relevant doc. Returns the registered entry. Raises ``InputError`` (one line).
    """
    if not callable(per_query):
        raise _refuse(f"measure {name!r}: per_query must be a function (cols, k, rel) -> one value per query")
    if cutoff not in (REQUIRED, OPTIONAL, NONE):
        raise _refuse(f"measure {name!r}: cutoff must be 'required', 'optional' or 'none', not {cutoff!r}")
    alias_list = [aliases] if isinstance(aliases, str) else list(aliases)
    _check_name(name, "name")
    seen = {name.lower()}
    for a in alias_list:
        _check_name(a, "alias")
        if a.lower() in seen:
            raise _refuse(f"measure alias {a!r} repeats a name of {name!r}")
        seen.add(a.lower())
    src = _SOURCE.get()
    where = src[0] if src else "python"
    text = (definition or "defined by the user").strip()
    text = " ".join(text.split()).replace("{", "{{").replace("}", "}}")  # one line; the user's braces are literal
    shown = (lambda b: b) if cutoff == NONE else (lambda b: f"{b}@k")
    measure = Measure(
        kind=name, cutoff=cutoff, takes_rel=True, per_query=per_query,
        definition="{key}: " + text + f" (user-defined, {where})",
        formula=text, peers="user-defined", proportion=bool(proportion), needs_relevant=bool(needs_relevant),
        names=tuple(Name(b, "user", shown(b)) for b in [name, *alias_list]),
        unit_interval=False, defined_in=where, defined_sha256=src[1] if src else None,
    )
    _register(measure)
    return measure


def _register(measure: Measure) -> None:
    R.REGISTRY[measure.kind] = measure
    R.ENTRIES = (*R.ENTRIES, measure)
    N._bases.cache_clear()


def unregister(name: str) -> None:
    """Take a user-defined measure out of the registry (a built-in one cannot be)."""
    m = R.REGISTRY.get(name)
    if m is None or m.defined_in is None:
        raise InputError(f"no user-defined measure named {name!r}")
    del R.REGISTRY[name]
    R.ENTRIES = tuple(e for e in R.ENTRIES if e.kind != name)
    N._bases.cache_clear()


def user_measures() -> list[Measure]:
    """The user-defined measures now registered, in the order they were defined."""
    return [m for m in R.ENTRIES if m.defined_in is not None]


@contextlib.contextmanager
def scope() -> Iterator[None]:
    """Every definition made inside is taken back out on leaving (the registry as it was)."""
    saved = (dict(R.REGISTRY), R.ENTRIES)
    try:
        yield
    finally:
        R.REGISTRY.clear()
        R.REGISTRY.update(saved[0])
        R.ENTRIES = saved[1]
        N._bases.cache_clear()


def load_file(path: str) -> list[Measure]:
    """Run a file of definitions (Python calling ``rankscope_tui.define``) and return the
    measures it defined. A file that cannot be read, fails to import, or defines nothing
    raises ``InputError`` naming it (and the line, when known); what it had defined by
    then is taken back out."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise InputError(f"cannot read the measure definitions: {exc.strerror or exc}", path) from None
    sha = hashlib.sha256(data).hexdigest()
    before = set(R.REGISTRY)
    saved = (dict(R.REGISTRY), R.ENTRIES)
    token = _SOURCE.set((path, sha))
    ok = False
    try:
        try:
            code = compile(data, path, "exec")
        except (SyntaxError, ValueError) as exc:
            line = getattr(exc, "lineno", None)
            msg = getattr(exc, "msg", None) or str(exc)
            raise InputError(f"the measure definitions do not import: SyntaxError: {msg}", path, line) from None
        try:
            exec(code, {"__name__": "rankscope_measures_from", "__file__": path})  # noqa: S102 - the user's own file
        except InputError:
            raise
        except (Exception, SystemExit) as exc:
            tb, line = exc.__traceback__, None
            while tb is not None:
                if tb.tb_frame.f_code.co_filename == path:
                    line = tb.tb_lineno
                tb = tb.tb_next
            raise InputError(f"the measure definitions do not import: {type(exc).__name__}: {_one_line(exc)}", path,
                             line) from None
        new = [R.REGISTRY[k] for k in R.REGISTRY if k not in before]
        if not new:
            raise InputError("the file defines no measure (call rankscope_tui.define(name, per_query, ...) in it)", path)
        ok = True
        return new
    finally:
        _SOURCE.reset(token)
        if not ok:
            R.REGISTRY.clear()
            R.REGISTRY.update(saved[0])
            R.ENTRIES = saved[1]
            N._bases.cache_clear()


def ensure_loaded(files: Iterable[tuple[str, str]]) -> None:
    """Load each ``(path, sha256)`` file of definitions not loaded yet (a bucket worker
    starts with the built-in measures only); a file whose bytes changed since the driver
    read it is refused, as its numbers would not be the recorded definition's."""
    for path, sha in files:
        if any(m.defined_in == path for m in user_measures()):
            continue
        got = load_file(path)
        if got[0].defined_sha256 != sha:
            raise InputError("the measure definitions changed while the run was in progress (sha256 differs)", path)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def _where(m: Measure) -> str | None:
    return None if m.defined_in in (None, "python") else m.defined_in


def _query(code: int, query_ids: Sequence[Any] | NDArray[Any] | None) -> str:
    return f"query {str(query_ids[code])!r}" if query_ids is not None and code < len(query_ids) else f"query code {code}"


def checked_values(m: Measure, cols: Columns, hits: Hits, ideal: Ideal, k: int | None, rel: int | None, key: str,
                   query_ids: Sequence[Any] | NDArray[Any] | None = None) -> NDArray[np.float64]:
    """A user measure's values on ``cols``, refused (``InputError`` naming the measure and
    the query) when its function raises, returns other than one value per query, gives a
    value that is not finite, or a value other than 0 or 1 for a proportion."""
    where = _where(m)
    try:
        raw = m.per_query(cols, k, rel)
        values = np.asarray(raw, dtype=np.float64)
    except Exception as exc:
        code = _failing_query(m, cols, hits, ideal, k, rel)
        at = "" if code is None else f" on {_query(code, query_ids)}"
        raise InputError(f"measure {key!r} raised {type(exc).__name__}: {_one_line(exc)}{at}", where) from None
    if values.shape != (cols.n,):
        got = "a single value" if values.ndim == 0 else f"{values.size} values"
        raise InputError(f"measure {key!r} returned {got}; it must return one value per query ({cols.n}, one per query code)",
                         where)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        x = float(values[bad[0]])
        what = "not a number" if x != x else ("+infinity" if x > 0 else "-infinity")
        raise InputError(f"measure {key!r} gave {what} on {_query(int(bad[0]), query_ids)}; "
                         "every value must be a finite number", where)
    if m.proportion:
        bad = np.flatnonzero((values != 0.0) & (values != 1.0))
        if bad.size:
            raise InputError(f"measure {key!r} is declared a proportion but gave {float(values[bad[0]])!r} on "
                             f"{_query(int(bad[0]), query_ids)}; a proportion's values are 0 or 1", where)
    out: NDArray[np.float64] = values.copy()
    return out


def _failing_query(m: Measure, cols: Columns, hits: Hits, ideal: Ideal, k: int | None, rel: int | None) -> int | None:
    """The first query code on which the function raises when given that query alone."""
    for code in range(cols.n):
        h = hits.qid == code
        i = ideal.qid == code
        one = Columns(Hits(hits.qid[h], hits.rank[h], hits.grade[h], None if hits.repeat is None else hits.repeat[h]),
                      Ideal(ideal.qid[i], ideal.grade[i]), cols.n, cols.relevant)
        try:
            m.per_query(one, k, rel)
        except Exception:
            return code
    return None
