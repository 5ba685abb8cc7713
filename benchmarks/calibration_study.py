"""Calibration study: do rankscope's intervals cover, and does its verdict hold α, on real deltas?

    python -m benchmarks.calibration_study [--trials 2000] [--null-trials 10000]
        [--resamples 1999] [--sizes observed 30] [--seed 0] [--workers 2]
        [--qrels test|dev] [--metric ndcg@10]

(``python benchmarks/calibration_study.py`` works too.) A script, not a test:
nothing asserts; it writes ``benchmarks/results/calibration.md`` and
``calibration.json``.

Data: the Cranfield demo set (``../shared/data/cranfield``), lanes bm25, tfidf
and dense plus the kernel's ``rrf`` fusion of the three, scored with the kernel on
the positives of ``qrels-test.txt`` (``--qrels dev`` for the dev file). The
per-query differences candidate − bm25 (rrf, dense, tfidf) are taken as the whole
population of queries, so the true mean difference is known.

Part 1, coverage. Each trial draws n queries with replacement from one population
(n = the observed number of positives, and n = 30), runs the kernel's
``paired_statistics`` on them (B resamples, its own seed per trial) and reads the
percentile interval and the BCa interval off the same replicates, and the paired t
interval (mean ± t_{n−1}·sd/√n), each at 95 % and at 1 − 0.05/3. Coverage = share
of trials whose interval contains the population mean (ends included); its Monte
Carlo standard error is sqrt(c(1 − c)/trials).

Part 2, the verdict under the null. Each trial draws one set of n queries (shared by
the three comparisons, as in one ``compare`` call) and, per comparison and query,
an independent fair coin that swaps the baseline and candidate values, which
multiplies that query's Δ by −1 exactly. The true mean is then 0 and the
distribution symmetric. The three rows go through ``decide`` as one family (Holm,
and Bonferroni, α = 0.05, same seed for the three rows as the CLI uses), and each
row alone as a family of one. Reported: how often any row says ``better``, any
says ``worse``, and either; plus how often each single check (randomization p,
t p, BCa and percentile intervals, p_superiority) would call a noise gap.

Determinism: every block of trials draws from its own
``numpy.random.SeedSequence([seed, part, population, n, block])``, so the numbers
do not depend on ``--workers``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from scipy import stats as sps  # noqa: E402

from benchmarks.paths import CRANFIELD as DATA  # noqa: E402
from benchmarks.paths import shown  # noqa: E402
from rankscope_tui.kernel.instruments.evaluate import add_derived_lanes  # noqa: E402
from rankscope_tui.kernel.measures import parse_metrics  # noqa: E402
from rankscope_tui.kernel.settings import LoadSettings  # noqa: E402
from rankscope_tui.kernel.statistics.intervals import percentile_bounds, wilson  # noqa: E402
from rankscope_tui.kernel.statistics.multiplicity import adjust_p  # noqa: E402
from rankscope_tui.kernel.statistics.paired import paired_statistics  # noqa: E402
from rankscope_tui.kernel.statistics.verdict import RowInput, decide  # noqa: E402
from rankscope_tui.kernel.workspace.loaded import Workspace  # noqa: E402

RESULTS = HERE / "results"
BASELINE = "bm25"
CANDIDATES = ("rrf", "dense", "tfidf")
ALPHA = 0.05
CONFIDENCE = 1.0 - ALPHA
FAMILY = len(CANDIDATES)
LEVELS = (0.95, 1.0 - ALPHA / FAMILY)  # the usual level, and Bonferroni's for a family of three
METHODS = ("percentile", "bca", "t")
BLOCK = 50  # trials per seeded block (the unit of work handed to a process)


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------


def load_populations(qrels: str, metric: str) -> tuple[list[dict], list[dict]]:
    """Per-query (baseline, candidate) values on the positives, one population per candidate."""
    ws = Workspace.load(
        lanes=[(None, str(DATA / "lanes" / f"{n}.run")) for n in ("bm25", "tfidf", "dense")],
        qrels=str(DATA / f"qrels-{qrels}.txt"),
        settings=LoadSettings(metrics=tuple(parse_metrics(metric)), resamples=0),
    )
    add_derived_lanes(ws)
    pos = ws.positives
    base = np.ascontiguousarray(ws.per_query(BASELINE, "doc")[metric][pos], dtype=np.float64)
    pops = []
    for cand in CANDIDATES:
        c = np.ascontiguousarray(ws.per_query(cand, "doc")[metric][pos], dtype=np.float64)
        d = c - base
        pops.append(
            {
                "name": f"{cand} − {BASELINE}",
                "candidate": cand,
                "baseline": BASELINE,
                "b": base,
                "c": c,
                "N": int(d.size),
                "true_mean": float(np.mean(d)),
                "sd": float(np.std(d, ddof=1)),
                "skewness": float(sps.skew(d)),
                "median": float(np.median(d)),
                "wins": int(np.count_nonzero(d > 0)),
                "losses": int(np.count_nonzero(d < 0)),
                "ties": int(np.count_nonzero(d == 0)),
                "baseline_mean": float(np.mean(base)),
                "candidate_mean": float(np.mean(c)),
            }
        )
    inputs = [f.as_dict() | {"path": shown(f.path), "role": f.role} for f in ws.inputs]
    return pops, inputs


def qid_list(n: int) -> list[str]:
    """Synthetic qids for a sample of n queries, zero-padded so they sort as bytes in draw order."""
    width = len(str(n - 1))
    return [f"s{i:0{width}d}" for i in range(n)]


def t_bounds(d: np.ndarray, level: float) -> tuple[float, float]:
    """The interval that matches the paired t-test: mean ± t_{n−1, (1+level)/2}·sd/√n."""
    n = d.size
    m = float(np.mean(d))
    se = float(np.std(d, ddof=1)) / math.sqrt(n)
    h = float(sps.t.ppf((1.0 + level) / 2.0, n - 1)) * se
    return m - h, m + h


def block_rng(seed: int, part: int, pop: int, n: int, block: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, part, pop, n, block]))


def self_check(pop: dict, B: int, seed: int) -> dict:
    """The kernel's percentile/BCa bounds against scipy.stats.bootstrap, and t_bounds against ttest_1samp."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0]))
    n = pop["N"]
    idx = rng.integers(0, n, n)
    b, c = pop["b"][idx], pop["c"][idx]
    d = c - b
    s = paired_statistics(b, c, qid_list(n), resamples=B, seed=seed, confidence=CONFIDENCE)
    boot = t_diff = 0.0
    for level in LEVELS:
        for method, ours in (("percentile", percentile_bounds(s.replicates, level)), ("BCa", s.bca_interval(level))):
            ref = sps.bootstrap((d,), np.mean, confidence_level=level, n_resamples=B, method=method,
                                rng=np.random.default_rng(seed)).confidence_interval
            boot = max(boot, abs(ours[0] - ref.low), abs(ours[1] - ref.high))
        ref_t = sps.ttest_1samp(d, 0.0).confidence_interval(level)
        ours_t = t_bounds(d, level)
        t_diff = max(t_diff, abs(ours_t[0] - ref_t.low), abs(ours_t[1] - ref_t.high))
    return {"n": n, "population": pop["name"], "max_abs_diff_bootstrap": boot, "max_abs_diff_t": t_diff}


# ---------------------------------------------------------------------------
# part 1: coverage
# ---------------------------------------------------------------------------


def coverage_block(job: tuple) -> np.ndarray:
    """Bounds for one block: array [trial, method, level, (low, high)]; nan where undefined."""
    b, c, n, trials, seed, pop_index, block, B = job
    rng = block_rng(seed, 1, pop_index, n, block)
    qids = qid_list(n)
    out = np.full((trials, len(METHODS), len(LEVELS), 2), np.nan)
    for t in range(trials):
        idx = rng.integers(0, b.size, n)
        bb, cc = b[idx], c[idx]
        s = paired_statistics(bb, cc, qids, resamples=B, seed=int(rng.integers(0, 2**31 - 1)), confidence=CONFIDENCE)
        d = cc - bb
        for j, level in enumerate(LEVELS):
            out[t, 0, j] = percentile_bounds(s.replicates, level)
            bca = s.bca_interval(level)
            if bca is not None:
                out[t, 1, j] = bca
            if s.sd > 0:
                out[t, 2, j] = t_bounds(d, level)
        # the kernel's own percentile interval is the one read here at 95 %
        assert (s.ci_low, s.ci_high) == tuple(out[t, 0, 0])
    return out


def summarise_coverage(bounds: np.ndarray, mu: float) -> dict:
    trials = bounds.shape[0]
    res = {}
    for i, m in enumerate(METHODS):
        for j, level in enumerate(LEVELS):
            lo, hi = bounds[:, i, j, 0], bounds[:, i, j, 1]
            ok = np.isfinite(lo) & np.isfinite(hi)
            covered = int(np.count_nonzero(ok & (lo <= mu) & (mu <= hi)))
            above = int(np.count_nonzero(ok & (lo > mu)))  # interval wholly above the true mean
            below = int(np.count_nonzero(ok & (hi < mu)))
            c = covered / trials
            res[f"{m}@{level:.4f}"] = {
                "method": m,
                "level": level,
                "trials": trials,
                "covered": covered,
                "coverage": c,
                "mc_se": math.sqrt(c * (1.0 - c) / trials),
                "missed_above": above,
                "missed_below": below,
                "undefined": int(trials - np.count_nonzero(ok)),
                "mean_width": float(np.mean((hi - lo)[ok])) if ok.any() else None,
            }
    return res


# ---------------------------------------------------------------------------
# part 2: the verdict under the null
# ---------------------------------------------------------------------------

# per trial and row: codes for verdicts, then single-check decisions
V_CODE = {"better": 1, "worse": -1, "inconclusive": 0}
NULL_FIELDS = (
    "holm", "bonferroni", "single",  # verdicts (+1 better, −1 worse, 0 inconclusive)
    "rand_p", "t_p", "bca95_excludes", "bca_level_excludes", "pct95_excludes", "p_sup_crosses", "mean",
)  # fmt: skip


def null_block(job: tuple) -> np.ndarray:
    """One block of null trials: array [trial, row, field] (see ``NULL_FIELDS``)."""
    pairs, n, trials, seed, block, B = job
    rng = block_rng(seed, 2, 0, n, block)
    qids = qid_list(n)
    N = pairs[0][0].size
    out = np.full((trials, len(pairs), len(NULL_FIELDS)), np.nan)
    for t in range(trials):
        idx = rng.integers(0, N, n)  # one query set for the whole family
        flips = rng.integers(0, 2, size=(len(pairs), n)).astype(bool)  # independent ±1 per row and query
        rseed = int(rng.integers(0, 2**31 - 1))  # one seed for every row of the call, as in the CLI
        rows = []
        for r, (b, c) in enumerate(pairs):
            bb, cc = b[idx], c[idx]
            # swapping the two values of a query turns Δ into −Δ exactly (IEEE subtraction is antisymmetric)
            bb2 = np.where(flips[r], cc, bb)
            cc2 = np.where(flips[r], bb, cc)
            s = paired_statistics(bb2, cc2, qids, resamples=B, seed=rseed, confidence=CONFIDENCE)
            rows.append(RowInput(BASELINE, CANDIDATES[r], "ndcg", s))
            out[t, r, 3] = s.randomization_p
            out[t, r, 4] = np.nan if s.t_p is None else s.t_p
            bca95 = s.bca_interval(CONFIDENCE)
            out[t, r, 5] = np.nan if bca95 is None else float(bca95[0] > 0 or bca95[1] < 0)
            out[t, r, 7] = float(s.ci_low > 0 or s.ci_high < 0)
            out[t, r, 8] = float(s.p_superiority >= CONFIDENCE or s.p_superiority <= 1 - CONFIDENCE)
            out[t, r, 9] = s.difference
        for k, res in enumerate((decide(rows, correction="holm"), decide(rows, correction="bonferroni"))):
            for r, row in enumerate(res.rows):
                out[t, r, k] = V_CODE[row.verdict]
                if k == 0:
                    out[t, r, 6] = (
                        np.nan if row.bca_low is None else float(row.bca_low > 0 or row.bca_high < 0)
                    )
        for r, ri in enumerate(rows):
            out[t, r, 2] = V_CODE[decide([ri], correction="holm").rows[0].verdict]
    return out


def rate(count: int, trials: int, target: float | None = None) -> dict:
    c = count / trials
    w = wilson(count, trials, 0.95)
    d = {"count": int(count), "trials": trials, "rate": c, "mc_se": math.sqrt(c * (1.0 - c) / trials),
         "wilson95_low": w.low, "wilson95_high": w.high}
    if target is not None:
        # "beyond Monte Carlo error": more than 2 standard errors of a rate equal to the target
        se0 = math.sqrt(target * (1.0 - target) / trials)
        d["target"] = target
        d["exceeds_target_beyond_mc_error"] = bool(c > target + 2.0 * se0)
    return d


def summarise_null(arr: np.ndarray) -> dict:
    trials, R, _ = arr.shape
    fam = {}
    for k, name in enumerate(("holm", "bonferroni")):
        v = arr[:, :, k]
        fam[name] = {
            "any_better": rate(int(np.count_nonzero((v == 1).any(axis=1))), trials, ALPHA),
            "any_worse": rate(int(np.count_nonzero((v == -1).any(axis=1))), trials, ALPHA),
            "any_either": rate(int(np.count_nonzero((v != 0).any(axis=1))), trials, ALPHA),
        }
    # what the other checks would say over the same family (any of the three rows)
    t_holm = np.array([adjust_p(np.where(np.isfinite(row), row, 1.0), "holm") for row in arr[:, :, 4]])
    fam["other_checks"] = {
        "any_holm_t_p_le_alpha": rate(int(np.count_nonzero((t_holm <= ALPHA).any(axis=1))), trials, ALPHA),
        "any_bca_at_row_level_excludes_0": rate(int(np.count_nonzero((arr[:, :, 6] == 1).any(axis=1))), trials, ALPHA),
        "any_percentile95_excludes_0_uncorrected": rate(
            int(np.count_nonzero((arr[:, :, 7] == 1).any(axis=1))), trials, 1.0 - (1.0 - ALPHA) ** R
        ),
    }
    single = {}
    for r in range(R):
        col = arr[:, r]
        t_p = col[:, 4]
        single[CANDIDATES[r]] = {
            "better": rate(int(np.count_nonzero(col[:, 2] == 1)), trials, ALPHA),
            "worse": rate(int(np.count_nonzero(col[:, 2] == -1)), trials, ALPHA),
            "either": rate(int(np.count_nonzero(col[:, 2] != 0)), trials, ALPHA),
            "randomization_p_le_alpha": rate(int(np.count_nonzero(col[:, 3] <= ALPHA)), trials, ALPHA),
            "t_p_le_alpha": rate(int(np.count_nonzero(np.isfinite(t_p) & (t_p <= ALPHA))), trials, ALPHA),
            "percentile95_excludes_0": rate(int(np.count_nonzero(col[:, 7] == 1)), trials, ALPHA),
            "bca95_excludes_0": rate(int(np.count_nonzero(col[:, 5] == 1)), trials, ALPHA),
            # ≥ 0.95 or ≤ 0.05: two one-sided 5 % bars, so a calibrated rate is 0.10
            "p_superiority_crosses": rate(int(np.count_nonzero(col[:, 8] == 1)), trials, 2 * ALPHA),
            "mean_of_sample_means": float(np.mean(col[:, 9])),
            "randomization_p_undefined": int(np.count_nonzero(~np.isfinite(col[:, 3]))),
        }
    return {"trials": trials, "family": fam, "single": single}


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------


def blocks(trials: int) -> list[tuple[int, int]]:
    return [(k, min(BLOCK, trials - k * BLOCK)) for k in range(-(-trials // BLOCK))]


def run_jobs(fn, jobs: list, workers: int) -> list:
    if workers <= 1:
        return [fn(j) for j in jobs]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, jobs))


def fmt_rate(x: dict, digits: int = 3) -> str:
    return f"{x['rate']:.{digits}f} ± {x['mc_se']:.{digits}f}"


def fmt_cov(x: dict) -> str:
    return f"{x['coverage']:.3f} ± {x['mc_se']:.3f}"


def git_head() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or None
    except Exception:
        return None


def write_markdown(res: dict, path: Path) -> str:
    s = res["settings"]
    lv = [f"{level:.4f}".rstrip("0") for level in LEVELS]
    L = []
    L.append("# Calibration study: interval coverage and the verdict's false-positive rate\n")
    L.append(
        f"Data: Cranfield demo set, `qrels-{s['qrels']}.txt`, {s['metric']} (trec_eval ndcg_cut: linear gain, "
        f"log2(i+1) discount, ideal over all judged docs) on the {res['populations'][0]['N']} positive queries; "
        f"Δ = candidate − {BASELINE}, `rrf` being the kernel's reciprocal-rank fusion of bm25, tfidf and dense "
        f"(k = 60). Each observed Δ vector is treated as the population, so its mean is the true mean. "
        f"B = {s['resamples']:,} resamples inside every trial; seed {s['seed']}; "
        f"{s['trials']:,} coverage trials and {s['null_trials']:,} null trials per cell. "
        f"Reproduce: `python -m benchmarks.calibration_study` (took {res['wall_seconds']:.0f} s with "
        f"{s['workers']} worker processes; the numbers do not depend on the worker count).\n"
    )
    L.append("## Populations\n")
    L.append("| comparison | N | true mean Δ | median Δ | sd | skewness | wins / losses / ties |")
    L.append("|---|---:|---:|---:|---:|---:|---|")
    for p in res["populations"]:
        L.append(
            f"| {p['name']} | {p['N']} | {p['true_mean']:+.4f} | {p['median']:+.4f} | {p['sd']:.4f} | "
            f"{p['skewness']:+.2f} | {p['wins']} / {p['losses']} / {p['ties']} |"
        )
    L.append("")
    L.append("## Coverage of the true mean Δ (± Monte Carlo standard error)\n")
    L.append(
        f"Percentile and BCa intervals are read off the same {s['resamples']:,} paired-bootstrap replicates of "
        f"`paired_statistics`; t is mean ± t(n−1)·sd/√n. {lv[1]} = 1 − 0.05/3, the Bonferroni level for three "
        f"comparisons. The standard error of a coverage near 0.95 with {s['trials']:,} trials is "
        f"{math.sqrt(0.95 * 0.05 / s['trials']):.4f}.\n"
    )
    head = " | ".join(f"{m} {lev}" for lev in lv for m in ("percentile", "BCa", "t"))
    L.append(f"| comparison | n | {head} |")
    L.append("|---|---:|" + "---:|" * 6)
    for cell in res["coverage"]:
        vals = [fmt_cov(cell["results"][f"{m}@{level:.4f}"]) for level in LEVELS for m in METHODS]
        L.append(f"| {cell['comparison']} | {cell['n']} | " + " | ".join(vals) + " |")
    L.append("")
    L.append("Where the misses fall (95 % intervals): trials whose interval lies wholly above / wholly below the true mean.\n")
    L.append("| comparison | n | percentile above / below | BCa above / below | t above / below | mean width percentile / BCa / t |")
    L.append("|---|---:|---|---|---|---|")
    for cell in res["coverage"]:
        r = cell["results"]
        k = [r[f"{m}@{LEVELS[0]:.4f}"] for m in METHODS]
        L.append(
            f"| {cell['comparison']} | {cell['n']} | "
            + " | ".join(f"{x['missed_above']} / {x['missed_below']}" for x in k)
            + " | " + " / ".join(f"{x['mean_width']:.4f}" for x in k) + " |"
        )
    L.append("")
    L.append("## The verdict when the null holds (random signs: true mean Δ = 0, symmetric)\n")
    L.append(
        "One `compare` call per trial: the three comparisons on one shared sample of n queries, each query's Δ "
        "multiplied by its own ±1 per comparison, `decide` with α = 0.05 (two-sided randomization test, "
        f"B = {s['resamples']:,}, min-delta 0). A rate is flagged when it exceeds its target by more than 2 Monte "
        "Carlo standard errors of a rate equal to the target. For a family, Holm and Bonferroni reject *something* "
        "in exactly the same trials (both need the smallest p ≤ α/3), so their last column is equal by construction.\n"
    )
    L.append("| n | procedure | any `better` | any `worse` | any `better` or `worse` | target | flagged |")
    L.append("|---:|---|---:|---:|---:|---:|---|")
    for cell in res["null"]:
        n = cell["n"]
        for name, label in (("holm", "family of 3, Holm"), ("bonferroni", "family of 3, Bonferroni")):
            f = cell["results"]["family"][name]
            flag = any(f[k]["exceeds_target_beyond_mc_error"] for k in ("any_better", "any_worse", "any_either"))
            L.append(
                f"| {n} | {label} | {fmt_rate(f['any_better'])} | {fmt_rate(f['any_worse'])} | "
                f"{fmt_rate(f['any_either'])} | ≤ {ALPHA} | {'**yes**' if flag else 'no'} |"
            )
        for cand, g in cell["results"]["single"].items():
            flag = any(g[k]["exceeds_target_beyond_mc_error"] for k in ("better", "worse", "either"))
            L.append(
                f"| {n} | single comparison ({cand} − {BASELINE}, signs flipped) | {fmt_rate(g['better'])} | "
                f"{fmt_rate(g['worse'])} | {fmt_rate(g['either'])} | ≤ {ALPHA} | {'**yes**' if flag else 'no'} |"
            )
    L.append("")
    L.append("What the other checks would have established over the same family (any of the three rows):\n")
    L.append(
        "| n | Holm-adjusted t p ≤ 0.05 | BCa at its Holm row level excludes 0 | "
        "percentile 95 % excludes 0, no correction (1 − 0.95³ = 0.143 if independent) |"
    )
    L.append("|---:|---:|---:|---:|")
    for cell in res["null"]:
        o = cell["results"]["family"]["other_checks"]
        L.append(
            f"| {cell['n']} | {fmt_rate(o['any_holm_t_p_le_alpha'])} | {fmt_rate(o['any_bca_at_row_level_excludes_0'])} | "
            f"{fmt_rate(o['any_percentile95_excludes_0_uncorrected'])} |"
        )
    L.append("")
    L.append(
        "Each check alone on one comparison, no correction (a calibrated test rejects 0.05 of the time; "
        "p_superiority ≥ 0.95 or ≤ 0.05 is two one-sided 5 % bars, so its calibrated rate is 0.10):\n"
    )
    L.append(
        "| n | population (signs flipped) | randomization p ≤ 0.05 | t p ≤ 0.05 | percentile 95 % excludes 0 | "
        "BCa 95 % excludes 0 | p_superiority ≥ 0.95 or ≤ 0.05 |"
    )
    L.append("|---:|---|---:|---:|---:|---:|---:|")
    for cell in res["null"]:
        for cand, g in cell["results"]["single"].items():
            L.append(
                f"| {cell['n']} | {cand} − {BASELINE} | {fmt_rate(g['randomization_p_le_alpha'])} | "
                f"{fmt_rate(g['t_p_le_alpha'])} | {fmt_rate(g['percentile95_excludes_0'])} | "
                f"{fmt_rate(g['bca95_excludes_0'])} | {fmt_rate(g['p_superiority_crosses'])} |"
            )
    L.append("")
    chk = res["self_check"]
    L.append(
        f"Self-check before the study (one sample of n = {chk['n']}): the kernel's percentile and BCa bounds equal "
        f"`scipy.stats.bootstrap` on the same seed to {chk['max_abs_diff_bootstrap']:.1e}, and the t interval "
        f"equals `scipy.stats.ttest_1samp(...).confidence_interval` to {chk['max_abs_diff_t']:.1e}.\n"
    )
    L.append(f"{res['machine']}\n")
    text = "\n".join(L)
    path.write_text(text, encoding="utf-8")
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=2000, help="coverage trials per (comparison, n) (default 2000)")
    ap.add_argument("--null-trials", type=int, default=10000, help="null trials per n (default 10000)")
    ap.add_argument("--resamples", type=int, default=1999, help="B inside every trial (default 1999)")
    ap.add_argument("--sizes", nargs="+", default=["observed", "30"], help="sample sizes: 'observed' and/or integers")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="worker processes (results do not depend on it)")
    ap.add_argument("--qrels", choices=("test", "dev"), default="test")
    ap.add_argument("--metric", default="ndcg@10")
    ap.add_argument("--out", default=str(RESULTS / "calibration"), help="output path without extension")
    a = ap.parse_args(argv)

    t0 = time.perf_counter()
    load_start = os.getloadavg()[0]
    pops, inputs = load_populations(a.qrels, a.metric)
    N = pops[0]["N"]
    sizes = [N if x == "observed" else int(x) for x in a.sizes]
    print(f"{len(pops)} populations of N = {N} queries; sizes {sizes}; B = {a.resamples}", flush=True)
    for p in pops:
        print(f"  {p['name']}: true mean Δ = {p['true_mean']:+.4f}, sd {p['sd']:.4f}, skew {p['skewness']:+.2f}")

    check = self_check(pops[0], a.resamples, a.seed)
    print(f"self-check against scipy: bootstrap bounds {check['max_abs_diff_bootstrap']:.1e}, t {check['max_abs_diff_t']:.1e}")

    coverage = []
    for pi, p in enumerate(pops):
        for n in sizes:
            jobs = [(p["b"], p["c"], n, k, a.seed, pi, blk, a.resamples) for blk, k in blocks(a.trials)]
            tc = time.perf_counter()
            bounds = np.concatenate(run_jobs(coverage_block, jobs, a.workers))
            cell = {"comparison": p["name"], "n": n, "results": summarise_coverage(bounds, p["true_mean"])}
            coverage.append(cell)
            r = cell["results"]
            print(
                f"coverage {p['name']:14s} n={n:4d}: "
                + ", ".join(f"{m} {r[f'{m}@{LEVELS[0]:.4f}']['coverage']:.3f}/{r[f'{m}@{LEVELS[1]:.4f}']['coverage']:.3f}" for m in METHODS)
                + f"  ({time.perf_counter() - tc:.0f} s)",
                flush=True,
            )

    null = []
    pairs = [(p["b"], p["c"]) for p in pops]
    for n in sizes:
        jobs = [(pairs, n, k, a.seed, blk, a.resamples) for blk, k in blocks(a.null_trials)]
        tc = time.perf_counter()
        arr = np.concatenate(run_jobs(null_block, jobs, a.workers))
        cell = {"n": n, "results": summarise_null(arr)}
        null.append(cell)
        f = cell["results"]["family"]["holm"]
        print(
            f"null n={n:4d}: Holm family any better {f['any_better']['rate']:.4f}, any worse "
            f"{f['any_worse']['rate']:.4f}, either {f['any_either']['rate']:.4f}  ({time.perf_counter() - tc:.0f} s)",
            flush=True,
        )

    wall = time.perf_counter() - t0
    import scipy

    res = {
        "what": "coverage of percentile, BCa and t intervals, and the verdict's false-positive rate under a sign-flip null",
        "settings": {
            "qrels": a.qrels, "metric": a.metric, "baseline": BASELINE, "candidates": list(CANDIDATES),
            "resamples": a.resamples, "seed": a.seed, "trials": a.trials, "null_trials": a.null_trials,
            "sizes": sizes, "levels": list(LEVELS), "alpha": ALPHA, "family_size": FAMILY, "workers": a.workers,
            "block": BLOCK, "coverage_rule": "low <= true mean <= high",
        },
        "inputs": inputs,
        "self_check": check,
        "populations": [{k: v for k, v in p.items() if k not in ("b", "c")} for p in pops],
        "coverage": coverage,
        "null": null,
        "wall_seconds": wall,
        "git_head": git_head(),
        "machine": (
            f"Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
            f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs; load average "
            f"{load_start:.2f} at the start and {os.getloadavg()[0]:.2f} at the end."
        ),
    }
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(res, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    write_markdown(res, out.with_suffix(".md"))
    print(f"wrote {out.with_suffix('.md')} and {out.with_suffix('.json')} in {wall:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
