"""The sidecar of a run made by asking a retriever (``retrieve``): ``RUN.provenance.json``.

It holds what made the run (the retriever, the time, rankscope's version, ``k``), the
sha256 of the run's bytes, and the seconds each query took as a column of
``[query_id, seconds]`` rows. A reader of the run takes the latency from it only when the
sidecar is for these very bytes: an edited run keeps no stale latency.
"""

from __future__ import annotations

import json
import math
import os

#: The sidecar a written run's provenance and per-query latency go to: ``RUN`` + this suffix.
SIDECAR_SUFFIX = ".provenance.json"
#: The sidecar's schema name (a reader checks it before trusting the latency in it).
SIDECAR_SCHEMA = "rankscope.run-provenance/1"



def read_sidecar_latency(run_path: str, sha256: str) -> tuple[dict[str, float] | None, str | None]:
    """The per-query seconds of ``RUN.provenance.json`` beside ``run_path``: (latency, None),
    or (None, why it was not used) when the sidecar is there but does not belong to these
    bytes (``run_sha256`` differs: the run was edited) or is not one; (None, None) without one."""
    side = run_path + SIDECAR_SUFFIX
    if not os.path.isfile(side):
        return None, None
    try:
        with open(side, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError, RecursionError):
        return None, "not a readable provenance file; its latency is not used"
    if not isinstance(data, dict) or data.get("schema") != SIDECAR_SCHEMA or not isinstance(data.get("latency"), list):
        return None, "not a rankscope run provenance file; its latency is not used"
    if data.get("run_sha256") != sha256:
        return None, f"written for other bytes than {run_path} (edited since); its latency is not used"
    out: dict[str, float] = {}
    for row in data["latency"]:
        if (not isinstance(row, list) or len(row) != 2 or not isinstance(row[0], str) or isinstance(row[1], bool)
                or not isinstance(row[1], (int, float)) or not math.isfinite(row[1]) or row[1] < 0):
            return None, "a latency row is not [query id, seconds]; its latency is not used"
        out[row[0]] = float(row[1])
    return out, None
