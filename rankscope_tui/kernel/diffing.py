"""Matching two reports for `diff`: lanes by name, then level and metric, on the shared qids."""

from __future__ import annotations

import math

import numpy as np

from .compare import DiffInput
from .errors import InputError


def _shape_error(path: str, what: str) -> InputError:
    return InputError(f"not a rankscope report: {what}", path, 1)


def check_report(report: dict, path: str) -> None:
    """The parts of a report `diff` reads, checked before use."""
    inputs = report.get("inputs")
    if not isinstance(inputs, dict):
        raise _shape_error(path, "'inputs' is missing or not an object")
    if not isinstance(inputs.get("qrels"), dict):
        raise _shape_error(path, "'inputs.qrels' is missing or not an object")
    if not isinstance(inputs.get("settings"), dict):
        raise _shape_error(path, "'inputs.settings' is missing or not an object")
    pq = report.get("per_query")
    if not isinstance(pq, dict):
        raise _shape_error(path, "'per_query' is missing or not an object")
    for lane, levels in pq.items():
        if not isinstance(levels, dict):
            raise _shape_error(path, f"per_query.{lane} is not an object")
        for level, rows in levels.items():
            if not isinstance(rows, dict):
                raise _shape_error(path, f"per_query.{lane}.{level} is not an object")
            for qid, vals in rows.items():
                if not isinstance(vals, dict):
                    raise _shape_error(path, f"per_query.{lane}.{level}.{qid} is not an object")
                for m, v in vals.items():
                    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                        raise _shape_error(path, f"per_query.{lane}.{level}.{qid}.{m} is not a finite number")


def comparable(before: dict, after: dict, path_a: str, path_b: str) -> None:
    """nDCG and friends compare only on the same judgments and settings: refuse otherwise."""
    check_report(before, path_a)
    check_report(after, path_b)
    qa, qb = before["inputs"]["qrels"].get("sha256"), after["inputs"]["qrels"].get("sha256")
    if qa != qb:
        raise InputError(f"the reports were computed on different qrels (sha256 {str(qa)[:12]}… vs {str(qb)[:12]}…)", path_b)
    sa, sb = before["inputs"]["settings"], after["inputs"]["settings"]
    for key in ("depth", "relevant", "group_sep"):
        if sa.get(key) != sb.get(key):
            raise InputError(f"setting {key} differs between the reports ({sa.get(key)!r} vs {sb.get(key)!r})", path_b)


def diff_inputs(before: dict, after: dict, metrics: list[str], path_a: str = "--before", path_b: str = "--after") -> list[DiffInput]:
    items = []
    pa, pb = before["per_query"], after["per_query"]
    for lane in [n for n in pa if n in pb]:
        for level in [lv for lv in pa[lane] if lv in pb[lane]]:
            qa, qb = pa[lane][level], pb[lane][level]
            shared = sorted(set(qa) & set(qb), key=lambda q: q.encode())
            if len(shared) < 2:
                continue
            keys = [k for k in qa[shared[0]] if k != "rank" and (not metrics or k in metrics)]
            for m in keys:
                for rows, path in ((qa, path_a), (qb, path_b)):
                    missing = next((q for q in shared if m not in rows[q]), None)
                    if missing is not None:
                        raise InputError(f"not a rankscope report: per_query.{lane}.{level}.{missing} has no {m}", path, 1)
                items.append(DiffInput(lane, level, m, tuple(shared),
                                       np.array([qa[q][m] for q in shared], dtype=np.float64),
                                       np.array([qb[q][m] for q in shared], dtype=np.float64)))
    if not items:
        raise InputError("the reports share no lane, level and metric with at least two common queries", "--after")
    return items
