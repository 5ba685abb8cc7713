"""What the engine, the partitioner and the Dask engine share: the failure of a bucket,
how long the driver waits at a time, and memory sizes as users write them.

Kept apart from ``engine`` so that ``partition`` (which the engine runs) never imports
the engine back.
"""

from __future__ import annotations

import re

from ..errors import InputError

#: The driver waits for its workers this long at a time. A signal (Ctrl-C, SIGTERM) that
#: the kernel hands to another thread of the process (DuckDB's, the digest's) does not
#: wake a main thread blocked on a lock; Python runs its handler once the wait returns.
WAIT_S = 0.25


class BucketFailed(InputError):
    """A bucket did not finish (it raised, or its worker died): the whole run fails."""


_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_size(text: str) -> int:
    """Bytes of ``2GB``, ``512MB``, ``1.5GiB``, ``800000000`` (decimal units as DuckDB reads
    them: GB = 10^9, GiB = 2^30)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", str(text))
    unit = m.group(2).lower() if m else ""
    if not m or unit not in _UNITS or float(m.group(1)) <= 0:
        raise InputError(f"expected a size such as 2GB, 512MB or 1.5GiB, got {text!r}"[:200], "--memory-limit")
    return int(float(m.group(1)) * _UNITS[unit])
