"""Matching two reports for `diff`: lanes by name, then level and metric, on the shared qids."""

from __future__ import annotations

import numpy as np

from .compare import DiffInput
from .errors import InputError


def comparable(before: dict, after: dict, path_a: str, path_b: str) -> None:
    """nDCG and friends compare only on the same judgments and settings: refuse otherwise."""
    qa, qb = before["inputs"]["qrels"].get("sha256"), after["inputs"]["qrels"].get("sha256")
    if qa != qb:
        raise InputError(f"the reports were computed on different qrels (sha256 {str(qa)[:12]}… vs {str(qb)[:12]}…)", path_b)
    sa, sb = before["inputs"]["settings"], after["inputs"]["settings"]
    for key in ("depth", "relevant", "group_sep"):
        if sa.get(key) != sb.get(key):
            raise InputError(f"setting {key} differs between the reports ({sa.get(key)!r} vs {sb.get(key)!r})", path_b)


def diff_inputs(before: dict, after: dict, metrics: list[str]) -> list[DiffInput]:
    items = []
    pa, pb = before.get("per_query", {}), after.get("per_query", {})
    for lane in [n for n in pa if n in pb]:
        for level in [lv for lv in pa[lane] if lv in pb[lane]]:
            qa, qb = pa[lane][level], pb[lane][level]
            shared = sorted(set(qa) & set(qb), key=lambda q: q.encode())
            if len(shared) < 2:
                continue
            keys = [k for k in next(iter(qa.values())) if k != "rank" and (not metrics or k in metrics)]
            for m in keys:
                if m not in qb[shared[0]]:
                    continue
                items.append(DiffInput(lane, level, m, tuple(shared),
                                       np.array([qa[q][m] for q in shared], dtype=np.float64),
                                       np.array([qb[q][m] for q in shared], dtype=np.float64)))
    if not items:
        raise InputError("the reports share no lane, level and metric with at least two common queries", "--after")
    return items
