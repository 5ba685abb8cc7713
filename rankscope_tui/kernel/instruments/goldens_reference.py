"""An independent, plainly written implementation of the goldens (SPEC §8, lesson 14).

It reads the ``kind args`` part of every line of a goldens file and prints the same
line with its own answer. It is installed with the package so that the dashboard's
Goldens view (and anyone with rankscope installed) can compute every line twice, once
through the kernel (``goldens``) and once here, and show where they disagree.

Independence is the point, so this module imports nothing from ``rankscope_tui``
(``tests/test_goldens.py`` checks it, and that importing it loads no kernel measure):
scalar Python over the ``math``, ``fractions`` and ``json`` modules, written from the
spec. numpy is used only to draw the random streams of the resampling cases, because
the protocol (SPEC §3) is defined by numpy's generator.

    python -m rankscope_tui.kernel.instruments.goldens_reference goldens/reference.txt > mine.txt
    rankscope goldens --check mine.txt

Conventions of the file (see the header of goldens/reference.txt): answers are
numbers or lists of numbers, "inf"/"-inf" for infinities, null for undefined.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from fractions import Fraction
from typing import Any

INF = math.inf
EPS = 2.0**-52  # machine epsilon of a double


# ---------------------------------------------------------------------------
# encoding


def encode(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return [encode(v) for v in x]
    if x is None:
        return None
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, int):
        return x
    x = float(x)
    if x != x:
        return None
    if x == INF:
        return "inf"
    if x == -INF:
        return "-inf"
    return x


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), sort_keys=True, allow_nan=False)


# ---------------------------------------------------------------------------
# rankings and judgments


def bkey(s: str) -> bytes:
    return s.encode("utf-8")


def ranked(hits: Iterable[Sequence[Any]], depth: int | None = None) -> list[tuple[str, float]]:
    """[(doc, score)] ordered by score descending, ties by doc id descending as bytes."""
    out = sorted(((d, float(s)) for d, s in hits), key=lambda h: bkey(h[0]), reverse=True)
    out.sort(key=lambda h: -h[1])  # stable: equal scores keep doc-descending order
    if depth is not None:
        out = out[:depth]
    return out


def query_class(grades: dict[str, int], relevant: int) -> str:
    values = list(grades.values())
    if any(g >= relevant for g in values):
        return "positive"
    if any(g > 0 for g in values):
        return "partial"
    if any(g >= 0 for g in values):
        return "negative"
    return "unjudged"


def qrels_qids(qrels: dict[str, Any]) -> list[str]:
    return sorted(qrels, key=bkey)


def group_of(doc: str, sep: str) -> str:
    return doc.split(sep, 1)[0]


def judged_units(hits: Sequence[tuple[str, float]], grades: dict[str, int], level: str, sep: str | None,
                 repeats: list[bool] | None = None) -> tuple[list[int | None], list[int]]:
    """The ranked list as units with grades (None = unjudged), and the judged unit grades.

    Doc level: a unit is a doc, its grade the qrels grade when >= 0.
    Group level: the equivalent construction of SPEC §3 -- each group's first occurrence
    carries the group's grade (max judged grade of its docs); a later occurrence has
    grade 0 when its group is judged, and is unjudged otherwise. ``repeats``, when given,
    receives True for each later occurrence (bpref skips them).
    """
    if level == "doc":
        graded = {d: g for d, g in grades.items() if g >= 0}
        if repeats is not None:
            repeats.extend(False for _ in hits)
        return [graded.get(d) for d, _ in hits], list(graded.values())
    assert sep is not None, "group level needs a separator"
    group_grade: dict[str, int] = {}
    for d, g in grades.items():
        if g >= 0:
            k = group_of(d, sep)
            group_grade[k] = max(g, group_grade.get(k, g))
    seen: set[str] = set()
    units: list[int | None] = []
    for d, _ in hits:
        k = group_of(d, sep)
        if repeats is not None:
            repeats.append(k in seen)
        if k in seen:
            units.append(0 if k in group_grade else None)
        else:
            seen.add(k)
            units.append(group_grade.get(k))
    return units, list(group_grade.values())


def dcg_of(gains: Iterable[float]) -> float:
    total = 0.0
    for i, g in enumerate(gains, start=1):
        if g > 0:
            total += g / math.log2(i + 1)
    return total


def metric_value(kind: str, units: list[int | None], judged_grades: list[int], k: Any, relevant: int,
                 repeats: list[bool] | None = None) -> float:
    def is_rel(g: int | None) -> bool:
        return g is not None and g >= relevant

    n_rel = sum(1 for g in judged_grades if g >= relevant)
    if kind in ("rank_of", "rr"):
        rank = 0
        for i, g in enumerate(units, start=1):
            if is_rel(g):
                rank = i
                break
        if kind == "rank_of":
            return rank
        if k is not None and rank > k:
            return 0.0
        return 1.0 / rank if rank else 0.0
    if kind == "ap":
        found, total = 0, 0.0
        for i, g in enumerate(units if k is None else units[:k], start=1):
            if is_rel(g):
                found += 1
                total += found / i
        return total / n_rel if n_rel else 0.0
    if kind == "rprec":
        return sum(1 for g in units[:n_rel] if is_rel(g)) / n_rel if n_rel else 0.0
    if kind == "bpref":
        n_nonrel = sum(1 for g in judged_grades if 0 <= g < relevant)
        above, total = 0, 0.0
        for j, g in enumerate(units):
            if g is None or (repeats and repeats[j]):
                continue
            if g >= relevant:
                total += 1.0 - min(above, n_rel) / min(n_nonrel, n_rel) if above else 1.0
            else:
                above += 1
        return total / n_rel if n_rel else 0.0
    if kind in ("ndcg", "ndcg_exp"):
        def gain(g: int | None) -> float:
            if g is None or g <= 0:
                return 0.0
            return float(g) if kind == "ndcg" else 2.0 ** g - 1.0
        ranked_gains = [gain(g) for g in (units if k is None else units[:k])]
        ideal = sorted((gain(g) for g in judged_grades), reverse=True)
        idcg = dcg_of(ideal if k is None else ideal[:k])
        return dcg_of(ranked_gains) / idcg if idcg > 0 else 0.0
    top = units[:k]
    if kind == "hit":
        return 1.0 if any(is_rel(g) for g in top) else 0.0
    if kind == "p":
        return sum(1 for g in top if is_rel(g)) / int(k)
    if kind == "recall":
        return sum(1 for g in top if is_rel(g)) / n_rel if n_rel else 0.0
    if kind == "calibrated_recall":
        return sum(1 for g in top if is_rel(g)) / min(k, n_rel) if n_rel else 0.0
    if kind == "judged":
        return sum(1 for g in top if g is not None) / int(k)
    raise KeyError(kind)


def metric_answer(kind: str, a: dict[str, Any]) -> list[float]:
    relevant = a.get("rel", a.get("relevant", 1))  # a measure's own rel=N overrides the call's level
    k = None if kind in ("rprec", "bpref") else a.get("k")
    if kind in NEW_KINDS:
        return [new_measure(kind, a, q) for q in qrels_qids(a["qrels"])]
    out = []
    for q in qrels_qids(a["qrels"]):
        hits = ranked(a["run"].get(q, []), a.get("depth"))
        repeats: list[bool] = []
        units, judged_grades = judged_units(hits, a["qrels"][q], a.get("level", "doc"), a.get("sep"), repeats)
        out.append(metric_value(kind, units, judged_grades, k, relevant, repeats))
    return out


# --------------------------------------------------------------------------- issue 33's measures
# Written from trec_eval 10.0's definitions (m_rbp.c, m_rbp_resid.c, m_infap.c, m_iprec_at_recall.c,
# m_11pt_avg.c, m_Rprec_mult.c, m_set_*.c, m_num_*.c), Chapelle et al. 2009 (ERR with gdeval's
# g_max = 4) and ranx's f1@k, one query at a time, walking the ranked list as those programs do.

NEW_KINDS = ("rbp", "rbp_resid", "err", "nerr", "infap", "iprec_at_recall", "11pt_avg", "rprec_mult", "num_ret",
             "num_rel", "num_rel_ret", "set_p", "set_recall", "set_f", "f1")
CUT_KINDS = ("rbp", "rbp_resid", "err", "nerr", "f1")  # the others take no cutoff


def c_lround(x: float) -> int:
    """C's lround for x >= 0 (half away from zero), on the exact value of the double."""
    f = Fraction(x)
    whole = math.floor(f)
    return whole + (1 if f - whole >= Fraction(1, 2) else 0)


def interpolated(units: list[int | None], n_rel: int, x: float, is_rel: Callable[[int | None], bool]) -> float:
    """trec_eval's loop: from the bottom of the list up, keep the best precision seen; when the
    count of relevant docs at or above a relevant doc equals the cut, that best is the value."""
    cut = c_lround(x * n_rel)
    n_ret = len(units)
    rel_ret = sum(1 for g in units if is_rel(g))
    if cut > rel_ret or n_ret == 0:
        return 0.0
    best = rel_ret / n_ret
    so_far = rel_ret
    for i in range(n_ret, 0, -1):
        if so_far == 0:
            break
        best = max(best, so_far / i)
        if is_rel(units[i - 1]):
            if so_far == cut:
                return best
            so_far -= 1
    return best  # cut = 0: the best precision over the whole list


def new_measure(kind: str, a: dict[str, Any], q: str) -> float:
    relevant = a.get("rel", a.get("relevant", 1))
    level = a.get("level", "doc")
    k = a.get("k") if kind in CUT_KINDS else None
    raw = a["qrels"][q]
    hits = ranked(a["run"].get(q, []), a.get("depth"))
    units, judged_grades = judged_units(hits, raw, level, a.get("sep"))
    # doc level: a doc in the qrels with a negative grade is pooled but unjudged (infAP);
    # group level: a group's grade comes from its judged docs only, so none is
    pooled = [level == "doc" and d in raw and raw[d] < 0 for d, _ in hits]
    if k is not None:
        units, pooled = units[:k], pooled[:k]

    def is_rel(g: int | None) -> bool:
        return g is not None and g >= relevant

    n_rel = sum(1 for g in judged_grades if g >= relevant)
    rel_ret = sum(1 for g in units if is_rel(g))
    n_ret = len(units)
    if kind in ("rbp", "rbp_resid"):
        p = float(a.get("p", 0.9))
        if kind == "rbp":
            top = max([1] + judged_grades)
            total, weight = 0.0, 1.0
            for g in units:
                if "rel" in a:
                    gain = 1.0 if is_rel(g) else 0.0
                else:
                    gain = g / top if g is not None and g > 0 else 0.0
                total += gain * weight
                weight *= p
            return (1 - p) * total
        total, weight, unjudged = 0.0, 1.0, 0
        for g in units:
            if g is None:
                unjudged += 1
                total += weight
            weight *= p
        return weight + (1 - p) * total if unjudged else 0.0
    if kind in ("err", "nerr"):
        all_grades = [g for docs in a["qrels"].values() for g in docs.values()]
        scale = 2.0 ** max([4] + all_grades)

        def err(grades: Iterable[int | None]) -> float:
            total, reach = 0.0, 1.0
            for i, g in enumerate(grades, start=1):
                r = (2.0 ** g - 1) / scale if g is not None and g > 0 else 0.0
                total += reach * r / i
                reach *= 1 - r
            return total

        value = err(units)
        if kind == "err":
            return value
        best = err(sorted((g for g in judged_grades if g > 0), reverse=True)[:k])
        return value / best if best > 0 else 0.0
    if kind == "infap":
        total = 0.0
        rel_above = nonrel_above = unj_above = 0
        for j, (g, pool) in enumerate(zip(units, pooled)):
            if pool:
                unj_above += 1
            elif g is None:
                continue
            elif g < relevant:
                nonrel_above += 1
            else:
                if j == 0:
                    total += 1.0
                else:
                    eps = 0.00001
                    total += (1 / (j + 1) + j / (j + 1) * ((rel_above + nonrel_above + unj_above) / j)
                              * ((rel_above + eps) / (rel_above + nonrel_above + 2 * eps)))
                rel_above += 1
        return total / n_rel if n_rel else 0.0
    if kind == "iprec_at_recall":
        return interpolated(units, n_rel, a.get("x", 0.5), is_rel)
    if kind == "11pt_avg":
        return sum(interpolated(units, n_rel, x / 10, is_rel) for x in range(10, -1, -1)) / 11
    if kind == "rprec_mult":
        cut = math.floor(a.get("x", 0.5) * n_rel + 0.9)
        return sum(1 for g in units[:cut] if is_rel(g)) / cut if cut else 0.0
    if kind == "num_ret":
        return n_ret
    if kind == "num_rel":
        return n_rel
    if kind == "num_rel_ret":
        return rel_ret
    set_p = rel_ret / n_ret if n_ret else 0.0
    set_recall = rel_ret / n_rel if n_rel else 0.0
    if kind == "set_p":
        return set_p
    if kind == "set_recall":
        return set_recall
    if kind == "set_f":
        return 2 * set_p * set_recall / (set_p + set_recall) if rel_ret else 0.0
    if kind == "f1":
        assert k is not None  # f1 is in CUT_KINDS: its case always names k
        p_k = rel_ret / k
        r_k = rel_ret / n_rel if n_rel else 0.0
        return 2 * p_k * r_k / (p_k + r_k) if rel_ret else 0.0
    raise KeyError(kind)


def doc_index(runs: Iterable[dict[str, Any]]) -> dict[str, int]:
    ids = sorted({d for run in runs for hits in run.values() for d, _ in hits}, key=bkey)
    return {d: i for i, d in enumerate(ids)}


def all_qids(runs: Iterable[dict[str, Any]]) -> list[str]:
    return sorted({q for run in runs for q in run}, key=bkey)


# ---------------------------------------------------------------------------
# fusion


def rrf_lists(a: dict[str, Any]) -> dict[str, list[tuple[str, float]]]:
    k = a.get("k", 60)
    depth = a.get("depth")
    out = {}
    for q in all_qids(a["lanes"]):
        ranks: dict[str, list[int]] = {}
        for run in a["lanes"]:
            for r, (d, _) in enumerate(ranked(run.get(q, []), depth), start=1):
                ranks.setdefault(d, []).append(r)
        scores = []
        for d, rs in ranks.items():
            total = 0.0
            for r in sorted(rs):  # largest term first
                total += 1.0 / (k + r)
            scores.append((d, total))
        out[q] = ranked(scores, depth)
    return out


def minmax_map(hits: Sequence[tuple[str, float]]) -> dict[str, float]:
    """doc -> min-max normalised score over one lane's list (a constant list gives ones)."""
    if not hits:
        return {}
    lo = min(s for _, s in hits)
    hi = max(s for _, s in hits)
    if hi == lo:
        return {d: 1.0 for d, _ in hits}
    return {d: (s - lo) / (hi - lo) for d, s in hits}


def convex_lists(lanes: list[dict[str, Any]], weights: Sequence[float], depth: int | None = None,
                 cut: int | None = None) -> dict[str, list[tuple[str, float]]]:
    out = {}
    for q in all_qids(lanes):
        norms = [minmax_map(ranked(run.get(q, []), depth)) for run in lanes]
        docs = []
        for nm in norms:
            for d in nm:
                if d not in docs:
                    docs.append(d)
        scores = []
        for d in docs:
            total = 0.0
            for w, nm in zip(weights, norms):
                total += w * nm.get(d, 0.0)
            scores.append((d, total))
        out[q] = ranked(scores, depth if cut is None else cut)
    return out


def compositions(n_parts: int, total: int) -> Iterator[tuple[int, ...]]:
    if n_parts == 1:
        yield (total,)
        return
    for c in range(total + 1):
        for rest in compositions(n_parts - 1, total - c):
            yield (c, *rest)


def grid_n(step: float) -> int:
    n = round(1.0 / step)
    if abs(1.0 / step - n) > 1e-9:
        raise ValueError("1/step is not an integer")
    return n


def convex_fit(a: dict[str, Any]) -> list[float]:
    relevant = a.get("relevant", 1)
    kind, _, k = a["metric"].partition("@")
    k = int(k)
    positives = [q for q in qrels_qids(a["qrels"]) if query_class(a["qrels"][q], relevant) == "positive"]
    n = grid_n(a["step"])
    best: tuple[tuple[int, ...], float] | None = None
    for comp in compositions(len(a["lanes"]), n):
        weights = [c / n for c in comp]
        fused = convex_lists(a["lanes"], weights, a.get("depth"))
        values = []
        for q in positives:
            units, judged_grades = judged_units(fused.get(q, []), a["qrels"][q], "doc", None)
            values.append(metric_value(kind, units, judged_grades, k, relevant))
        objective = math.fsum(values) / len(values)
        if best is None or objective > best[1]:
            best = (comp, objective)
    assert best is not None  # a grid holds at least one composition
    return [*best[0], best[1]]


def fusion_answer(kind: str, a: dict[str, Any]) -> Any:
    lanes = a["lanes"]
    index = doc_index(lanes)
    if kind == "minmax":
        out: list[float] = []
        run = lanes[0]
        for q in all_qids(lanes):
            nm = minmax_map(ranked(run[q], a.get("depth")))
            out.extend(nm[d] for d, _ in run[q] if d in nm)
        return out
    if kind == "convex_fit":
        return convex_fit(a)
    fused = rrf_lists(a) if kind.startswith("rrf") else convex_lists(lanes, a["weights"], a.get("depth"))
    out = []
    for q in all_qids(lanes):
        for d, s in fused[q]:
            out.append(index[d] if kind.endswith("_order") else s)
    return out


# ---------------------------------------------------------------------------
# normal distribution (no scipy): Φ from erfc, Φ⁻¹ by bisection


def phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def phi_inv(p: float) -> float:
    if p <= 0.0:
        return -INF
    if p >= 1.0:
        return INF
    lo, hi = -40.0, 40.0
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if phi(mid) < p:
            lo = mid
        else:
            hi = mid
    return hi if abs(phi(hi) - p) <= abs(phi(lo) - p) else lo


def z_of(confidence: float) -> float:
    return phi_inv(1.0 - (1.0 - confidence) / 2.0)


def wilson(k: int, n: int, confidence: float) -> tuple[float, float]:
    z = z_of(confidence)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


def wald(k: int, n: int, confidence: float) -> tuple[float, float]:
    p = k / n
    half = z_of(confidence) * math.sqrt(p * (1 - p) / n)
    return max(0.0, p - half), min(1.0, p + half)


def negatives_needed(t: float, confidence: float) -> list[int]:
    z2 = z_of(confidence) ** 2
    n = 0
    while z2 / (n + z2) > t:  # Wilson upper limit after 0 events in n
        n += 1
    return [n, math.ceil(Fraction(3) / Fraction(str(t)))]


# ---------------------------------------------------------------------------
# the gate


def gate_view(a: dict[str, Any]) -> dict[str, dict[str, Any]]:
    relevant = a.get("relevant", 1)
    qrels = a["qrels"]
    info = {}
    for q in qrels_qids(qrels):
        cls = query_class(qrels[q], relevant)
        if cls not in ("positive", "negative"):
            continue
        hits = ranked(a["run"].get(q, []), a.get("depth"))
        rel = [qrels[q].get(d, -1) >= relevant for d, _ in hits]
        first_rel = next((s for (d, s), r in zip(hits, rel) if r), None)
        info[q] = {
            "cls": cls,
            "hits": hits,
            "top": hits[0][1] if hits else -INF,
            "present": bool(hits),
            "margin": (hits[0][1] - hits[1][1]) if len(hits) > 1 else (INF if hits else -INF),
            "top_rel": bool(hits) and rel[0],
            "first_rel": first_rel,
        }
    return info


def rates_at(info: dict[str, dict[str, Any]], floor: float,
             margin: float | None = None) -> tuple[float | None, float | None, int, int]:
    pos = [v for v in info.values() if v["cls"] == "positive"]
    neg = [v for v in info.values() if v["cls"] == "negative"]

    def accepted(v: dict[str, Any]) -> bool:
        return v["present"] and v["top"] >= floor and (margin is None or v["margin"] >= margin)

    correct = sum(1 for v in pos if accepted(v) and v["top_rel"])
    fnir = (len(pos) - correct) / len(pos) if pos else None
    fpir = sum(1 for v in neg if accepted(v)) / len(neg) if neg else None
    return fnir, fpir, sum(1 for v in neg if accepted(v)), len(neg)


def candidates(info: dict[str, dict[str, Any]]) -> list[float]:
    tops = {v["top"] for v in info.values() if v["present"]}
    return sorted(tops) + [INF]


def gate_answer(kind: str, a: dict[str, Any]) -> Any:
    info = gate_view(a)
    if kind == "null_floor":
        neg = [v for v in info.values() if v["cls"] == "negative"]
        tops = [v["top"] for v in neg if v["present"]]
        if len(tops) < 2:
            return [None, None]
        mean = math.fsum(tops) / len(tops)
        sd = math.sqrt(math.fsum((t - mean) ** 2 for t in tops) / (len(tops) - 1))
        floor = mean + 3 * sd
        return [floor, sum(1 for t in tops if t >= floor) / len(neg)]
    if kind == "conformal_floor":
        alpha = Fraction(str(a["alpha"]))
        s = sorted(-v["first_rel"] if v["first_rel"] is not None else INF for v in info.values() if v["cls"] == "positive")
        n = len(s)
        k = math.ceil((1 - alpha) * (n + 1))
        if k > n or s[k - 1] == INF:
            return [k, -INF]
        return [k, -s[k - 1]]
    if kind == "mutual_nn":
        # L(d): the evaluated queries whose list holds d, read by d's rank in them
        ranks_of: dict[str, list[int]] = {}
        for v in info.values():
            for r, (d, _) in enumerate(v["hits"], start=1):
                ranks_of.setdefault(d, []).append(r)
        count_rule = a.get("tie_rule", "share") == "count"
        out = []
        for q in qrels_qids(a["qrels"]):
            if q not in info:
                continue
            for r, (d, _) in enumerate(info[q]["hits"], start=1):
                if count_rule:
                    out.append(sum(1 for x in ranks_of[d] if x <= r))
                else:
                    out.append(1 + sum(1 for x in ranks_of[d] if x < r))
        return out
    if kind == "sweep":
        swept: list[float | None] = []
        for f in candidates(info):
            fnir, fpir, _, _ = rates_at(info, f, a.get("margin"))
            swept.extend([f, fnir, fpir])
        return swept
    if kind == "operating_point":
        conf = a.get("confidence", 0.95)
        cands = candidates(info)
        chosen = cands[-1]  # +inf: reject all, when no finite floor qualifies
        for f in cands[:-1]:
            _, fpir, acc, n_neg = rates_at(info, f)
            if n_neg == 0:
                break
            bound = wilson(acc, n_neg, conf)[1] if a.get("conservative") else fpir
            if bound <= a["target"]:
                chosen = f
                break
        fnir, fpir, _, _ = rates_at(info, chosen)
        return [chosen, fnir, fpir]
    raise KeyError(kind)


# ---------------------------------------------------------------------------
# resampling (SPEC §3 protocol; numpy only for the random stream)


def quantile(sorted_vals: Sequence[float], q: float) -> float:
    """numpy's default (linear, type 7) quantile of sorted values."""
    h = (len(sorted_vals) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (h - lo) * (sorted_vals[hi] - sorted_vals[lo])


def index_rows(seed: int, n: int, rows: int, draws: int = 1) -> list[list[list[int]]]:
    import numpy as np

    rng = np.random.default_rng(seed)
    return [rng.integers(0, n, size=(rows, n)).tolist() for _ in range(draws)]


def sign_rows(seed: int, n: int, rows: int) -> list[list[int]]:
    import numpy as np

    rng = np.random.default_rng(seed)
    signs: list[list[int]] = (1 - 2 * rng.integers(0, 2, size=(rows, n))).tolist()
    return signs


def mean(xs: Sequence[float]) -> float:
    return math.fsum(xs) / len(xs)


def resampled_means(values: Sequence[float], idx_rows: list[list[int]]) -> list[float]:
    return [mean([values[i] for i in row]) for row in idx_rows]


def paired_replicates(a: dict[str, Any]) -> tuple[list[float], list[float]]:
    d = [c - b for b, c in zip(a["baseline"], a["candidate"])]
    (rows,) = index_rows(a["seed"], len(d), a["B"])
    return d, resampled_means(d, rows)


def percentile_interval(reps: Sequence[float], confidence: float) -> tuple[float, float]:
    s = sorted(reps)
    return quantile(s, (1 - confidence) / 2), quantile(s, (1 + confidence) / 2)


def bca(a: dict[str, Any]) -> list[float | None]:
    d, reps = paired_replicates(a)
    theta = mean(d)
    below = sum(1 for r in reps if r < theta) + sum(1 for r in reps if r <= theta)
    z0 = phi_inv(below / (2 * len(reps)))
    u = [x - theta for x in d]
    s2 = math.fsum(x * x for x in u)
    if s2 == 0 or math.isinf(z0):
        return [None, None]
    acc = math.fsum(x**3 for x in u) / (6 * s2**1.5)
    z_a = phi_inv((1 - a["level"]) / 2)
    lo_p = phi(z0 + (z0 + z_a) / (1 - acc * (z0 + z_a)))
    hi_p = phi(z0 + (z0 - z_a) / (1 - acc * (z0 - z_a)))
    s = sorted(reps)
    return [quantile(s, lo_p), quantile(s, hi_p)]


def randomization_p(a: dict[str, Any]) -> float:
    d = a["deltas"]
    alternative = a.get("alternative", "two-sided")
    obs = mean(d)
    tol = 100 * EPS * abs(obs)
    hits = 0
    for signs in sign_rows(a["seed"], len(d), a["B"]):
        m = mean([s * x for s, x in zip(signs, d)])
        if alternative == "two-sided":
            hits += abs(m) >= abs(obs) - tol
        elif alternative == "greater":
            hits += m >= obs - tol
        else:
            hits += m <= obs + tol
    return (1 + hits) / (int(a["B"]) + 1)


def t_abs_cdf(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with integer df (Abramowitz & Stegun 26.7.3-4)."""
    theta = math.atan(t / math.sqrt(df))
    c, s = math.cos(theta), math.sin(theta)
    if df % 2 == 1:
        total = 0.0
        if df > 1:
            term = c
            total = term
            for j in range(1, (df - 3) // 2 + 1):
                term *= c * c * (2 * j) / (2 * j + 1)
                total += term
        return 2 / math.pi * (theta + s * total)
    term = 1.0
    total = 1.0
    for j in range(1, (df - 2) // 2 + 1):
        term *= c * c * (2 * j - 1) / (2 * j)
        total += term
    return s * total


def t_test(a: dict[str, Any]) -> float | None:
    d = a["deltas"]
    n = len(d)
    m = mean(d)
    sd = math.sqrt(math.fsum((x - m) ** 2 for x in d) / (n - 1))
    if sd == 0:
        return None
    t = m / (sd / math.sqrt(n))
    two = 1 - t_abs_cdf(abs(t), n - 1)  # P(|T| >= |t|)
    alternative = a.get("alternative", "two-sided")
    if alternative == "two-sided":
        return min(1.0, two)
    upper = two / 2 if t >= 0 else 1 - two / 2  # P(T >= t)
    return upper if alternative == "greater" else 1 - upper


def holm(p: Sequence[float]) -> list[float]:
    order = sorted(range(len(p)), key=lambda i: p[i])  # stable: ties keep call order
    out = [0.0] * len(p)
    running = 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, p[i] * (len(p) - j)))
        out[i] = running
    return out


def stats_answer(kind: str, a: dict[str, Any]) -> Any:
    conf = a.get("confidence", 0.95)
    if kind == "wilson":
        return list(wilson(a["k"], a["n"], conf))
    if kind == "wald":
        return list(wald(a["k"], a["n"], conf))
    if kind == "wilson_upper_zero":
        z2 = z_of(conf) ** 2
        return z2 / (a["n"] + z2)
    if kind == "rule_of_three":
        return 3 / a["n"]
    if kind == "negatives_needed":
        return negatives_needed(a["t"], conf)
    if kind == "bootstrap_mean":
        v = a["values"]
        (rows,) = index_rows(a["seed"], len(v), a["B"])
        return [mean(v), *percentile_interval(resampled_means(v, rows), conf)]
    if kind == "paired_bootstrap":
        _, reps = paired_replicates(a)
        return [*percentile_interval(reps, conf), sum(1 for r in reps if r > 0) / len(reps)]
    if kind == "unpaired_bootstrap":
        b, c = a["baseline"], a["candidate"]
        rows_i, rows_j = index_rows(a["seed"], len(b), a["B"], draws=2)
        reps = [mean([c[j] for j in rj]) - mean([b[i] for i in ri]) for ri, rj in zip(rows_i, rows_j)]
        return list(percentile_interval(reps, conf))
    if kind == "bca":
        return bca(a)
    if kind == "randomization_p":
        return randomization_p(a)
    if kind == "t_test":
        return t_test(a)
    if kind == "holm":
        return holm(a["p"])
    if kind == "bonferroni":
        return [min(1.0, x * len(a["p"])) for x in a["p"]]
    if kind == "holm_thresholds":
        order = sorted(range(len(a["p"])), key=lambda i: a["p"][i])
        out = [0.0] * len(order)
        for j, i in enumerate(order):
            out[i] = a.get("alpha", 0.05) / (len(order) - j)
        return out
    raise KeyError(kind)


# ---------------------------------------------------------------------------


def answer(kind: str, a: dict[str, Any]) -> Any:
    if kind in ("rank_of", "hit", "recall", "p", "rr", "ndcg", "judged", "ap", "rprec", "bpref", "ndcg_exp",
                "calibrated_recall", *NEW_KINDS):
        return metric_answer(kind, a)
    if kind == "trec_order":
        index = doc_index([a["run"]])
        return [index[d] for q in all_qids([a["run"]]) for d, _ in ranked(a["run"][q], a.get("depth"))]
    if kind in ("rrf", "rrf_order", "minmax", "convex", "convex_order", "convex_fit"):
        return fusion_answer(kind, a)
    if kind == "grid_size":
        return math.comb(grid_n(a["step"]) + a["n_lanes"] - 1, a["n_lanes"] - 1)
    if kind == "conformal_k":
        return math.ceil((1 - Fraction(str(a["alpha"]))) * (a["n"] + 1))
    if kind == "conformal_min_n":
        return max(1, math.ceil(1 / Fraction(str(a["alpha"])) - 1))
    if kind in ("null_floor", "conformal_floor", "mutual_nn", "sweep", "operating_point"):
        return gate_answer(kind, a)
    return stats_answer(kind, a)


def case_of(line: str) -> tuple[str, dict[str, Any]]:
    """(kind, args) of a ``kind args -> answer`` line (the answer is ignored)."""
    head = line.rsplit(" -> ", 1)[0]
    kind, raw = head.split(" ", 1)
    return kind, json.loads(raw)


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as fh:
        for raw in fh:
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                print(line)
                continue
            kind, args = case_of(line)
            print(f"{kind} {dumps(args)} -> {dumps(encode(answer(kind, args)))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
