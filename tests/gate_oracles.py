"""Test oracles for the gate kernel: re-evaluate from scratch what the kernel computes in
one pass, so a test (or the benchmark) can check the fast path against the definition."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from rankscope_tui.kernel.gate.mutual import MutualNN
from rankscope_tui.kernel.gate.scores import TopScores, _mask, _neg_sets
from rankscope_tui.kernel.gate.sweep import Sweep, _candidates, _fixed_conditions


def sweep_brute_force(
    top: TopScores,
    positives: np.ndarray,
    negatives: Mapping[str, np.ndarray] | np.ndarray | None,
    margin: float | None = None,
    mutual: MutualNN | None = None,
    r: int | None = None,
    confidence: float = 0.95,
    candidates: np.ndarray | None = None,
    variable: str = "floor",
) -> Sweep:
    """Reference implementation: re-evaluate the gate from scratch at every candidate
    (O(candidates × queries)): the oracle :func:`gate.sweep` and :func:`gate.margin_sweep` must match."""
    n_q = top.n_queries
    pos = _mask(positives, n_q, "positives")
    negs = _neg_sets(negatives, n_q)
    if variable == "floor":
        ok, name = _fixed_conditions(top, margin, mutual, r)
        key = top.top
    else:
        ok, name = np.ones(n_q, dtype=bool), "none"
        key = top.margin
    evaluated = pos.copy()
    for m in negs.values():
        evaluated |= m
    cand = _candidates(key, evaluated & top.present) if candidates is None else np.asarray(candidates, dtype=np.float64)
    n_pos = int(np.count_nonzero(pos))
    correct = np.zeros(cand.size, dtype=np.int64)
    wrong = np.zeros(cand.size, dtype=np.int64)
    accepted = {k: np.zeros(cand.size, dtype=np.int64) for k in negs}
    for i, x in enumerate(cand.tolist()):
        acc = top.present & ok & (key >= x)
        correct[i] = np.count_nonzero(acc & pos & top.top_relevant)
        wrong[i] = np.count_nonzero(acc & pos & ~top.top_relevant)
        for k, m in negs.items():
            accepted[k][i] = np.count_nonzero(acc & m)
    n_neg = {k: int(np.count_nonzero(m)) for k, m in negs.items()}
    return Sweep(variable, name, cand, n_pos, correct, wrong, n_pos - correct - wrong, accepted, n_neg, confidence)

