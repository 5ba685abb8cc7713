"""The sentences a paper needs, from a ``compare --out`` payload (seed 001, "Reporting the
result"): a results sentence per comparison, a methods paragraph for the settings actually
used, the retraining table when seeds were given, and the seven-point checklist as a
self-check.

Every number here is a field of the payload, only formatted: differences and bounds to
4 decimals, the relative gain as a percentage to 1 decimal, p as ``format_p`` prints it
(enough decimals to show the floor 1/(B + 1)), counts with thousands separators. The
tests parse each number back out of the sentence and compare it with its field.
"""

from __future__ import annotations

from .escaping import terminal_safe
from .markdown import md_prose, md_table

_CORRECTION = {"holm": "Holm-adjusted", "bonferroni": "Bonferroni-adjusted", "none": "unadjusted"}
_CORRECTION_METHOD = {
    "holm": "adjusted with Holm's sequential procedure, which controls the family-wise error rate under arbitrary "
            "dependence between hypotheses (Holm, 1979)",
    "bonferroni": "adjusted by Bonferroni (each multiplied by the number of hypotheses), which controls the "
                  "family-wise error rate under arbitrary dependence",
    "none": "not adjusted for multiplicity",
}


def _num(x: float) -> str:
    return f"{x:.4f}"


def _count(n: int) -> str:
    return f"{n:,}"


def _bound(x, sign: str) -> str:
    return ("−∞" if sign == "-" else "+∞") if x is None else _num(x)


def interval_words(row: dict, settings: dict) -> str:
    """"95 % paired-bootstrap confidence interval [lo, hi]", one-sided when the alternative is."""
    level = f"{row['confidence'] * 100:g}%"
    alt = settings.get("alternative", "two-sided")
    if row["ci_low"] is None and row["ci_high"] is None:
        return "no bootstrap interval (resamples = 0)"
    if alt == "greater":
        return f"one-sided {level} paired-bootstrap lower confidence bound {_num(row['ci_low'])} (interval [{_num(row['ci_low'])}, +∞))"
    if alt == "less":
        return f"one-sided {level} paired-bootstrap upper confidence bound {_num(row['ci_high'])} (interval (−∞, {_num(row['ci_high'])}])"
    return f"{level} paired-bootstrap confidence interval [{_bound(row['ci_low'], '-')}, {_bound(row['ci_high'], '+')}]"


def _test_words(row: dict, settings: dict) -> str:
    B = row["resamples"]
    side = {"two-sided": "two-sided", "greater": "one-sided (greater)", "less": "one-sided (less)"}[
        settings.get("alternative", "two-sided")]
    decides_t = row.get("test") == "t"
    if decides_t:
        raw, name = row["t_p"], f"paired {side} t-test"
    elif row.get("test") == "bootstrap":
        raw, name = row.get("bootstrap_p"), f"paired {side} null-centred bootstrap test with {_count(B)} resamples"
    else:
        raw, name = row["randomization_p"], f"paired {side} randomization test with {_count(B)} resamples"
    if raw is None:
        return ("paired t-test: no p-value (sd of the differences is 0)" if decides_t
                else "no randomization test was run (resamples = 0)")
    if row["verdict"] == "exploratory" and row.get("adjusted_p") is not None:  # a planned call's unplanned row
        text = (f"{name}, raw p = {_p(raw, row, decides_t)}, {_CORRECTION[row['correction']]} p = "
                f"{_p(row['adjusted_p'], row, decides_t)} among the rows beyond the plan (exploratory: corrected apart, "
                "never established)")
    elif row["verdict"] == "exploratory":
        text = f"{name}, raw p = {_p(raw, row, decides_t)} (exploratory: not adjusted, never established)"
    elif row["verdict"] == "descriptive":
        text = f"{name}, raw p = {_p(raw, row, decides_t)} (descriptive: outside the primary family)"
    elif row["adjusted_p"] is None:
        text = f"{name}, no adjusted p"
    else:
        text = f"{name}, {_CORRECTION[row['correction']]} p = {_p(row['adjusted_p'], row, decides_t)}"
    if not decides_t and B and raw == 1 / (B + 1):
        text += ", the raw p being the minimum attainable at that resample count"
    return text


def _p(p: float, row: dict, decides_t: bool) -> str:
    """A resampled p as ``format_p`` prints it (without its floor clause: the sentence says
    that itself); a t p, which has no floor, to 4 decimals, or 3 significant digits below 0.0001."""
    if decides_t:
        return f"{p:.4f}" if p >= 1e-4 else f"{p:.3g}"
    # the comparison modules on first use: an evaluate imports this module, never a comparison's
    from ..kernel.statistics.randomization import format_p

    return format_p(p, row["resamples"]).removeprefix("p = ").split(",")[0]


def _counts_words(row: dict, settings: dict) -> str:
    if settings.get("sampling_unit") == "unit":
        return (f"n = {_count(row['n'])} queries in {_count(row['n_units'])} units, of which "
                f"{_count(row['n_nonzero'])} units scored differently under the two systems")
    return f"n = {_count(row['n'])} queries, of which {_count(row['n_nonzero'])} scored differently under the two systems"


def _seed_words(row: dict) -> str:
    r = row.get("retraining")
    if not r:
        return ""
    runs = max(len(r["baseline_seeds"]), len(r["candidate_seeds"]))
    ratio = "—" if r["ratio"] is None else f"{r['ratio']:.2f}"
    return (f"; across {runs} retraining seeds the mean difference was {_num(r['mean_difference'])} with SD over "
            f"retraining {_num(r['sd_retraining'])} beside SD over queries {_num(r['sd_queries'])} (ratio {ratio}), "
            f"and {r['reversals']} of {r['reversals_out_of']} seed differences had the other sign")


def _min_delta(settings: dict) -> float:
    return float(settings.get("min_delta") or 0.0)


def verdict_clause(row: dict, settings: dict) -> str:
    """The row's verdict in the kernel's words (``verdict.verdict_words``); an established
    better or worse row names the minimum effect it cleared when one was set."""
    from ..kernel.statistics.verdict import verdict_words  # on first use, as format_p above

    md = _min_delta(settings)
    words = row.get("verdict_text") or verdict_words(row["verdict"], md)
    if md and row["verdict"] in ("better", "worse"):
        words += f", at least min-delta {md:g}"
    return f"verdict: {words}"


def results_sentence(row: dict, settings: dict) -> str:
    """One comparison in words, direction and size first (seed 001's results sentence).

    A directional verb ("improved", "scored lower") only when the row is established
    better or worse; any other row (inconclusive, established but below min-delta,
    exploratory, descriptive) takes the neutral "differed from … by" with the signed
    difference. The sentence ends with the verdict in the kernel's words."""
    d = row["difference"]
    cand, base, metric = row["candidate"], row["baseline"], row["metric"]
    verdict = row["verdict"]
    if d == 0:
        head = f"{cand} and {base} had the same mean {metric} (difference {_num(0.0)})"
    elif verdict == "better":
        head = f"{cand} improved {metric} over {base} by {_num(d)}"
    elif verdict == "worse":
        head = f"{cand} scored lower than {base} on {metric} by {_num(-d)}"
    else:
        head = f"{cand} differed from {base} on {metric} by {d:+.4f}"
    rel = row.get("relative_gain")
    gain = "" if rel is None else f", a relative {'gain' if verdict == 'better' else 'change'} of {rel * 100:.1f}%"
    return (f"{head} ({interval_words(row, settings)}{gain}; {_test_words(row, settings)}; "
            f"{_counts_words(row, settings)}{_seed_words(row)}; {verdict_clause(row, settings)})."
            + _power_words(row))


def _power_words(row: dict) -> str:
    """The row's power clause as a sentence of its own (``statistics.power.RowPower.sentence``,
    the kernel's words): what this n and spread could establish, and what the target needs."""
    said = (row.get("power") or {}).get("sentence")
    return f" {said[0].upper()}{said[1:]}." if said else ""


def methods_paragraph(payload: dict) -> str:
    """The methods for the settings actually used."""
    s = payload["settings"]
    rows = payload["comparisons"]
    unit = s.get("sampling_unit", "query")
    over = ("per unit (a topic and its query variants, from the unit file): each unit's queries are reduced to the "
            "mean of their differences, so a unit counts once however many queries it has" if unit == "unit"
            else "one per query")
    alt = s.get("alternative", "two-sided")
    side = "two-sided" if alt == "two-sided" else f"one-sided ({alt}: is the candidate {'better' if alt == 'greater' else 'worse'}?)"
    B = s["resamples"]
    level = f"{s['confidence'] * 100:g}%"
    sampled = "units" if unit == "unit" else "queries"
    parts = [
        f"For every query with at least one relevant document we computed the per-query metric and report its mean "
        f"over those queries; all systems were evaluated on identical queries and judgments. "
        f"To compare a candidate with a baseline we formed paired differences, {over}, and report their mean."]
    if s.get("test") == "t":
        check = (f"a paired randomization test with {_count(B)} sign assignments is reported beside it as a check"
                 if B else "no randomization test was run (resamples = 0)")
        parts.append(f"Statistical significance was decided by a paired {side} t-test on those differences; {check}.")
    elif s.get("test") == "bootstrap" and B:
        parts.append(
            f"Statistical significance was assessed with a paired {side} null-centred bootstrap test: the paired "
            f"differences were shifted to mean zero, resampled with replacement over the {sampled} B = {_count(B)} "
            f"times, and we report one plus the number of resampled means at least as extreme as the observed mean "
            f"difference, divided by B plus one (Efron and Tibshirani, 1993, §16.4). A paired randomization test is "
            f"reported beside it as a check.")
    elif not B:
        parts.append("No randomization test was run and no bootstrap interval computed (resamples = 0), so no "
                     "comparison can be established; the paired t-test is reported for reference only.")
    else:
        parts.append(
            f"Statistical significance was assessed with a paired {side} randomization test: under the null hypothesis "
            f"that the two systems are interchangeable for each of the {sampled}, the sign of every paired difference is "
            f"arbitrary, so we drew B = {_count(B)} uniform sign assignments and report the Monte Carlo p-value, one plus "
            f"the number of assignments at least as extreme as the observed mean difference, divided by B plus one "
            f"(Smucker et al., 2007; Phipson and Smyth, 2010). A paired t-test is reported beside it as a check.")
    if B:
        parts.append(f"Uncertainty in the effect size is reported as a {side} {level} percentile confidence interval "
                     f"from a paired bootstrap over {sampled} with {_count(B)} replicates (Efron, 1979).")
    J = s.get("family_size", 0)
    primary = f" (the rows of the primary metric {s['primary']})" if s.get("primary") else ""
    plan = s.get("plan")
    if J:
        what = "The one tested comparison" if J == 1 else f"The {J} tested comparisons"
        if plan:
            source = "given as --pair options" if plan["source"] == "--pair" else f"pre-registered in {plan['source']}"
            what += f" ({source}, each against its own baseline)"
        parts.append(f"{what}{primary} form{'s' if J == 1 else ''} one family; {'its p-value was' if J == 1 else 'their p-values were'} "
                     f"{_CORRECTION_METHOD[s['correction']]}, and significance was assessed at the family-wise level "
                     f"{s['alpha']:.4g}.")
        if s.get("earlier_tests"):
            parts.append(f"Because the same test queries had been used before, the {s['earlier_tests']} comparisons "
                         f"logged earlier on them were adjusted together with this family (J = "
                         f"{s['earlier_tests'] + J}).")
        fam = s.get("family_false_positive")
        if fam and fam["family_size"] > 1:
            parts.append(f"Uncorrected, {fam['family_size']} independent tests at {fam['alpha']:.4g} would give at "
                         f"least one false positive with probability 1 − (1 − α)^J = {fam['uncorrected']:.3f}; "
                         f"the correction holds that to at most {fam['corrected']:.3g}.")
    if J and _min_delta(s):
        parts.append(_min_delta_words(s, rows))
    if plan and any(r["verdict"] == "exploratory" for r in rows):
        parts.append("Comparisons beyond the plan are labelled exploratory: their p-values were adjusted apart, as a "
                     "family of their own, and none is called established.")
    elif any(r["verdict"] == "exploratory" for r in rows):
        parts.append("Comparisons chosen after seeing these results are labelled exploratory and were not tested.")
    parts.append("These intervals are per comparison, not simultaneous, and quantify variation across evaluation "
                 f"{sampled} conditional on the fixed runs (one trained model each); "
                 + ("variation across retraining seeds is reported separately beside them."
                    if any(r.get("retraining") for r in rows) else
                    "they do not cover variation across training seeds, which was not measured."))
    return " ".join(parts)


def _min_delta_words(s: dict, rows: list[dict]) -> str:
    """What the minimum effect (``--min-delta``) did: the rule, and how many rows it decided."""
    md = _min_delta(s)
    tested = [r for r in rows if r["verdict"] not in ("exploratory", "descriptive")]
    below = sum(r["verdict"] == "below_min_delta" for r in tested)
    decided = (f"it decided {below} of the {len(tested)} tested verdicts, which are reported as established but "
               "below the minimum effect" if below else
               f"it decided none of the {len(tested)} tested verdicts")
    return (f"A difference established at that level was called better or worse only when the absolute mean "
            f"difference was at least the minimum effect {md:g} (--min-delta); {decided}.")


def retraining_table(payload: dict) -> tuple[list[str], list[list[str]]] | None:
    """Seed 001's table: mean, SD (queries), SD (retraining), ratio, widens by, reversals."""
    rows = [r for r in payload["comparisons"] if r.get("retraining")]
    if not rows:
        return None
    header = ["comparison", "metric", "seeds", "mean", "SD (queries)", "SD (retraining)", "ratio", "widens by",
              "other sign", "rule"]
    out = []
    for r in rows:
        t = r["retraining"]
        seeds = max(len(t["baseline_seeds"]), len(t["candidate_seeds"]))
        out.append([f"{r['candidate']} vs {r['baseline']}", r["metric"], str(seeds), _num(t["mean_difference"]),
                    _num(t["sd_queries"]), _num(t["sd_retraining"]), "—" if t["ratio"] is None else f"{t['ratio']:.2f}",
                    "—" if t["widens_by"] is None else f"{t['widens_by'] * 100:.1f}%",
                    f"{t['reversals']} of {t['reversals_out_of']}", t["rule"]])
    return header, out


def checklist(payload: dict) -> list[str]:
    """Seed 001's seven points, each stated or named as missing in one line."""
    s = payload["settings"]
    rows = payload["comparisons"]
    metrics = list(dict.fromkeys(r["metric"] for r in rows))
    defs = s.get("definitions", {})
    unit = s.get("sampling_unit", "query")
    out = ["1. metric: " + "; ".join(defs.get(m, f"{m}: definition not recorded") for m in metrics)]
    md = _min_delta(s)
    out.append("2. direction and size: each results sentence leads with the mean difference (candidate − baseline); "
               + (f"minimum effect {md:g} (--min-delta): an established difference smaller than it is not called "
                  "better or worse" if md else "no minimum effect set (--min-delta 0)"))
    if rows and rows[0]["ci_low"] is None and rows[0]["ci_high"] is None:
        out.append("3. interval and level: missing — no bootstrap interval (resamples = 0)")
    elif rows:
        alt = s.get("alternative", "two-sided")
        out.append(f"3. interval and level: paired-bootstrap percentile interval, {rows[0]['confidence'] * 100:g}% "
                   f"{'two-sided' if alt == 'two-sided' else 'one-sided (' + alt + ')'} (per comparison, not simultaneous)")
    if unit == "unit":
        counts = ", ".join(sorted({f"n = {_count(r['n'])}, n_units = {_count(r['n_units'])}" for r in rows}))
        out.append(f"4. sampling unit: units from {s.get('units')} ({counts}; n_nonzero per row in the sentences)")
    else:
        counts = ", ".join(sorted({f"n = {_count(r['n'])}" for r in rows}))
        out.append(f"4. sampling unit: the query ({counts}; n_nonzero per row in the sentences)")
    test = "paired t-test" if s.get("test") == "t" else f"paired randomization test, B = {_count(s['resamples'])}"
    if s.get("test") != "t" and not s["resamples"]:
        test = "missing — no randomization test was run (resamples = 0)"
    J = s.get("family_size", 0)
    fam = s.get("family_false_positive") or {}
    chance = ("" if not fam.get("family_size") else
              f" (uncorrected chance of a false positive 1 − (1 − α)^J = {fam['uncorrected']:.3f}, "
              f"held to ≤ {fam['corrected']:.3g})")
    earlier = f" with {s['earlier_tests']} earlier logged rows (J = {J + s['earlier_tests']})" if s.get("earlier_tests") else ""
    family = (f"p-values {_CORRECTION[s['correction']]} over a family of {J}{earlier}{chance}" if J
              else "no row was tested (every row exploratory or descriptive)")
    out.append(f"5. test: {test}; {family}")
    if any(r.get("retraining") for r in rows):
        out.append("6. seeds: the intervals describe one trained model per system; the retraining spread is reported "
                   "beside them as a separate quantity")
    else:
        out.append("6. seeds: missing — no retraining seeds given; the intervals describe one trained model per system "
                   "(give SYSTEM@SEED lanes with --seed-runs for any stochastic system)")
    if s.get("primary"):
        out.append(f"7. primary metric: {s['primary']}, declared with --primary")
    else:
        out.append("7. primary metric: missing — none declared (--primary); every metric's rows are in the tested family")
    return out


def with_sentences(payload: dict) -> dict:
    """The payload with a ``sentence`` per comparison, the ``methods`` paragraph and the
    ``checklist`` added (the ``compare --out`` fields the printed text is built from)."""
    out = dict(payload)
    out["comparisons"] = [{**r, "sentence": results_sentence(r, payload["settings"])} for r in payload["comparisons"]]
    out["methods"] = methods_paragraph(payload)
    out["checklist"] = checklist(payload)
    return out


def render_sentences(payload: dict, fmt: str = "text") -> str:
    """Results, the retraining table (when seeds were given), methods and the checklist."""
    sentences = [results_sentence(r, payload["settings"]) for r in payload["comparisons"]]
    table = retraining_table(payload)
    methods = methods_paragraph(payload)
    points = checklist(payload)
    if fmt == "markdown":
        e = md_prose  # names escaped, numbers and their brackets as they are
        lines = ["", "**Results**", ""] + [f"- {e(x)}" for x in sentences]
        if table:
            header, rows = table
            lines += ["", "**Retraining** (a separate quantity from the intervals)", ""] + md_table(header, rows, names=2)
        lines += ["", "**Methods**", "", e(methods), "", "**Checklist**", ""] + [e(p) for p in points]
        return terminal_safe("\n".join(lines) + "\n")
    lines = ["", "Results"] + [f"  {x}" for x in sentences]
    if table:
        header, rows = table
        widths = [max(len(x) for x in col) for col in zip(header, *rows)]
        lines += ["", "Retraining (a separate quantity from the intervals)",
                  "  " + "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
        lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines += ["", "Methods", f"  {methods}", "", "Checklist"] + [f"  {p}" for p in points]
    return terminal_safe("\n".join(lines) + "\n")
