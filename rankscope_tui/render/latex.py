"""The evaluate report and a comparison as LaTeX tables a paper takes (booktabs).

Layout (the choice the issue left open): each cell is the mean on one row and its
interval under it in ``\\scriptsize`` (``0.3056`` over ``[0.2644, 0.3466]``), so that a
column is as wide as an interval in small type; at most :data:`METRICS_PER_BLOCK`
metrics sit side by side, and a longer metric list continues in a further block of the
same table under its own header row. With lane names of up to about 12 characters every
table fits ``\\textwidth`` of a one-column article (10 pt); the tests compile them and
check the log for an overfull box.

- One caption carries the definitions (the first table's); every other table's caption
  refers to it by ``\\ref``. Each table has a ``\\label`` (``tab:rankscope-...``).
- The best mean per column (and per level: doc and group means are not comparable) is in
  bold; ties at the printed precision are all bold.
- ``compare``: a table of means with significance letters (as ranx prints them: each lane
  gets a letter, and a mean carries as superscript the letters of the lanes it is
  established better than -- the test, the correction and the level are in the caption),
  then the comparison rows (difference with its paired interval, p, adjusted p, W/L/T,
  verdict); the full set of columns (t-test, BCa, effect size, unpaired interval) is in
  ``--format markdown`` and ``--out``.

Needs ``\\usepackage{booktabs}``; nothing else.
"""

from __future__ import annotations

import re
import string

from ..kernel.report.caveats import SMALL_SAMPLE_FOOTNOTE, SMALL_SAMPLE_MARK, best_marks, small_sample
from .compare import p_number
from .escaping import escape_latex
from .report import _gate_latex

METRICS_PER_BLOCK = 4
PREAMBLE = "% rankscope tables: need \\usepackage{booktabs}"
#: The longest lane name with which the tables were measured to fit \textwidth (10 pt article).
FITS_NAME_CHARS = 12


def _width_note(names) -> list[str]:
    """A comment when a name is longer than the layout was measured for (said, not hidden)."""
    long = [n for n in names if len(n) > FITS_NAME_CHARS]
    if not long:
        return []
    return [f"% note: {len(long)} lane name(s) longer than {FITS_NAME_CHARS} characters; a table may be wider than "
            "\\textwidth (shorten the names with --lane NAME=PATH, or wrap the tabular in \\resizebox)"]


def _num(x) -> str:
    return "n/a" if x is None else f"{x:.4f}"


def _interval(lo, hi, one_sided: str | None = None) -> str:
    """``[lo, hi]``; with ``one_sided`` ("greater" or "less") the missing end is the open
    one, ``$+\\infty$)`` or ``($-\\infty$``; otherwise a missing end leaves the cell empty."""
    if one_sided == "greater" and lo is not None and hi is None:
        return f"[{lo:.4f}, $+\\infty$)"
    if one_sided == "less" and hi is not None and lo is None:
        return f"($-\\infty$, {hi:.4f}]"
    if lo is None or hi is None:
        return ""
    if lo == hi:
        return "no variation"
    return f"[{lo:.4f}, {hi:.4f}]"


def _small(text: str) -> str:
    return r"{\scriptsize " + text + "}" if text else ""


#: the small-sample mark as LaTeX writes it beside a mean (the kernel's dagger)
DAGGER = r"\textsuperscript{\dag}"


def label_key(text: str) -> str:
    """A ``\\label`` key part: letters, digits and hyphens only (names may hold anything)."""
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"


def _open(spec: str) -> list[str]:
    return [r"\begin{table}[htbp]", r"\centering", r"\footnotesize", r"\setlength{\tabcolsep}{4pt}",
            r"\begin{tabular}{" + spec + "}", r"\toprule"]


def _close(cap: str, label: str) -> list[str]:
    return [r"\bottomrule", r"\end{tabular}", r"\caption{" + cap + "}", r"\label{" + label + "}", r"\end{table}", ""]


def _metric_blocks(metrics: list[str]) -> list[list[str]]:
    return [metrics[i:i + METRICS_PER_BLOCK] for i in range(0, len(metrics), METRICS_PER_BLOCK)]


def _section_table(block: dict, metrics: list[str]) -> list[str]:
    """Header rows and body rows of one section (lanes x levels) in metric blocks."""
    width = min(len(metrics), METRICS_PER_BLOCK)
    rows: list[str] = []
    for b, chunk in enumerate(_metric_blocks(metrics)):
        pad = [""] * (width - len(chunk))
        if b:
            rows.append(r"\midrule")
        rows.append(" & ".join(["lane", "level"] + [escape_latex(m) for m in chunk] + pad) + r" \\")
        rows.append(r"\midrule")
        levels = sorted({lv for lanes in block.values() for lv in lanes}, key=lambda lv: (lv != "doc", lv))
        best = {}
        for lv in levels:
            for m in chunk:
                entries = [(lane, block[lane][lv][m].get("value")) for lane in block if lv in block[lane]]
                flags = best_marks([v for _, v in entries], m)
                best.update({(lane, lv, m): f for (lane, _), f in zip(entries, flags)})
        for lane, lanes in block.items():
            for lv, cells in lanes.items():
                means, ivs = [], []
                for m in chunk:
                    c = cells[m]
                    text = _num(c.get("value"))
                    if best.get((lane, lv, m)):
                        text = r"\textbf{" + text + "}"
                    if small_sample(c):
                        text += DAGGER
                    means.append(text)
                    ivs.append(_small(_interval(c.get("low"), c.get("high"))))
                rows.append(" & ".join([escape_latex(lane), escape_latex(lv)] + means + pad) + r" \\")
                if any(ivs):
                    rows.append(" & ".join(["", ""] + ivs + pad) + r" \\")
    return rows


def _sections(report: dict):
    yield None, None, report["lanes"]
    for strat, labels in report.get("strata", {}).items():
        for label, block in labels.items():
            yield strat, label, block


def _section_n(block: dict):
    for lanes in block.values():
        for cells in lanes.values():
            for c in cells.values():
                return c.get("n")
    return None


def render_report_latex(report: dict) -> str:
    metrics = report["inputs"]["settings"]["metrics"]
    d = report["definitions"]
    width = min(len(metrics), METRICS_PER_BLOCK)
    spec = "ll" + "r" * width
    out = [PREAMBLE] + _width_note(report["lanes"]) + [""]
    first = "tab:rankscope-overall"
    for i, (strat, label, block) in enumerate(_sections(report)):
        n = _section_n(block)
        n_text = f"n = {n} positive queries" if n is not None else "no positive query"
        if strat is None:
            parts = ["Overall", f"{n_text}."]
            if report.get("synthetic"):
                parts.insert(0, "Synthetic demo data.")
            parts.append("Each cell: the mean over the positive queries, its interval below; "
                         "bold: the best mean of the column at that level (none when the means tie, or for judged@k).")
            parts += [d[m] + "." for m in metrics] + [d["intervals"] + "."]
            cap = escape_latex(" ".join(parts))
            key = first
        else:
            cap = (escape_latex(f"Stratum {strat} = {label}, {n_text}. Cells as in Table") + " \\ref{" + first + "}.")
            key = f"tab:rankscope-stratum-{i}-{label_key(strat)}-{label_key(label)}"
        if any(small_sample(cells.get(m)) for lanes in block.values() for cells in lanes.values() for m in metrics):
            cap += " " + escape_latex(f"{SMALL_SAMPLE_MARK} {SMALL_SAMPLE_FOOTNOTE}.")
        out += _open(spec) + _section_table(block, metrics) + _close(cap, key)
    out += _gate_latex(report) + _latency_latex(report)
    return "\n".join(out)


def _latency_latex(report: dict) -> list[str]:
    """The response-time table (report.json's ``latency`` block), only when a lane carries
    per-query seconds: the text report's rows (``report.latency_rows``), the definition as caption."""
    if not report.get("latency"):
        return []
    from .report import LATENCY_HEADER, latency_rows, latency_title

    rows = [" & ".join(escape_latex(c) for c in LATENCY_HEADER) + r" \\", r"\midrule"]
    rows += [" & ".join([escape_latex(r[0])] + r[1:]) + r" \\" for r in latency_rows(report)]
    cap = escape_latex(f"{latency_title(report)}. {report['latency']['definition']}.")
    return _open("l" + "r" * (len(LATENCY_HEADER) - 1)) + rows + _close(cap, "tab:rankscope-response-time")


# --------------------------------------------------------------------------- compare


def lane_letters(rows: list[dict]) -> dict[str, str]:
    """a, b, c, ... in the order the lanes first appear (the baseline first)."""
    order: list[str] = []
    for r in rows:
        for lane in (r["baseline"], r["candidate"]):
            if lane not in order:
                order.append(lane)
    letters = string.ascii_lowercase
    return {lane: (letters[i] if i < 26 else f"{letters[i // 26 - 1]}{letters[i % 26]}") for i, lane in enumerate(order)}


def significance(rows: list[dict]) -> dict[tuple[str, str], set[str]]:
    """(lane, metric) -> the lanes it is established better than: a row whose verdict is
    ``better`` marks the candidate over the baseline, ``worse`` the baseline over the candidate."""
    out: dict[tuple[str, str], set[str]] = {}
    for r in rows:
        if r["verdict"] == "better":
            out.setdefault((r["candidate"], r["metric"]), set()).add(r["baseline"])
        elif r["verdict"] == "worse":
            out.setdefault((r["baseline"], r["metric"]), set()).add(r["candidate"])
    return out


#: what the verdict column holds, said once in the caption (the words are the kernel's,
#: ``verdict.VERDICT_TEXT``, as every other face prints them)
VERDICT_KEY = ("verdict: established better or established worse (adjusted p at most alpha and the difference at "
               "least the minimum effect), established but below min-delta, inconclusive (not established), "
               "exploratory (not a test), descriptive (outside the primary family).")


def _verdict_cell(row: dict) -> str:
    """The row's verdict in the kernel's words; exploratory and descriptive rows lose their
    parenthesis here (the caption says it)."""
    from ..kernel.statistics.verdict import VERDICT_TEXT  # on first use: evaluate never needs the test code

    text = row.get("verdict_text") or VERDICT_TEXT[row["verdict"]]
    return text.split(" (", 1)[0]


def _p(p, resamples) -> str:
    return p_number(p, resamples)


def render_compare_latex(payload: dict) -> str:
    """``payload`` is ``Comparison.as_dict()`` (``compare --out``)."""
    rows = payload["comparisons"]
    s = payload["settings"]
    out = [PREAMBLE, ""]
    if not rows:
        return "\n".join(out + ["% no comparison rows"]) + "\n"
    letters = lane_letters(rows)
    out[1:1] = _width_note(letters)
    sig = significance(rows)
    metrics = list(dict.fromkeys(r["metric"] for r in rows))
    means: dict[tuple[str, str], float] = {}
    for r in rows:
        means[(r["baseline"], r["metric"])] = r["baseline_mean"]
        means[(r["candidate"], r["metric"])] = r["candidate_mean"]
    n = sorted({r["n"] for r in rows})
    conf = s.get("confidence", rows[0]["confidence"])
    alpha = 1 - conf
    test = ("paired randomization test" + (f", {rows[0]['resamples']:,} resamples" if rows[0].get("resamples") else "")
            + f", {s.get('alternative', 'two-sided')}")
    correction = {"holm": "Holm", "bonferroni": "Bonferroni", "none": "no"}.get(s.get("correction"), s.get("correction"))
    family = s.get("family_size")
    min_delta = s.get("min_delta") or 0
    # table 1: means with significance letters
    body = [" & ".join(["lane"] + [escape_latex(m) for m in metrics]) + r" \\", r"\midrule"]
    best = {}
    for m in metrics:
        entries = [(lane, means.get((lane, m))) for lane in letters]
        best.update({(lane, m): f for (lane, _), f in zip(entries, best_marks([v for _, v in entries], m))})
    for lane, letter in letters.items():
        cells = [f"({letter}) " + escape_latex(lane)]
        for m in metrics:
            v = means.get((lane, m))
            if v is None:
                cells.append("")
                continue
            text = _num(v)
            if best.get((lane, m)):
                text = r"\textbf{" + text + "}"
            beaten = sorted(letters[x] for x in sig.get((lane, m), ()))
            if beaten:
                text += r"\textsuperscript{" + "".join(beaten) + "}"
            cells.append(text)
        body.append(" & ".join(cells) + r" \\")
    cap1 = escape_latex(
        f"Mean over n = {', '.join(map(str, n))} positive queries ({s.get('level', 'doc')} level); bold: the best mean "
        f"of the column. A superscript lists the letters of the lanes this lane is established better than: {test}, "
        f"{correction} correction over the family of {family} rows, level alpha = {alpha:.4g}"
        + (f", and a mean difference of at least {min_delta:g}" if min_delta else "")
        + ". Only the rows compared are tested (each candidate against the baseline).")
    out += _open("l" + "r" * len(metrics)) + body + _close(cap1, "tab:rankscope-compare-means")
    # table 2: the comparison rows
    one_base = len({r["baseline"] for r in rows}) == 1
    # every row on the same n (the usual case): n is said once in the caption, which leaves
    # the verdict column room for the kernel's words
    one_n = len(n) == 1
    head = ([] if one_base else ["baseline"]) + ["candidate", "metric"] + ([] if one_n else ["n"]) + [
        "diff.", "p", "adj. p", "W/L/T", "verdict"]
    body = [" & ".join(head) + r" \\", r"\midrule"]
    for r in rows:
        lead = ([] if one_base else [escape_latex(r["baseline"])]) + [escape_latex(r["candidate"]), escape_latex(r["metric"])]
        lead += [] if one_n else [str(r["n"])]
        verdict = _verdict_cell(r)
        body.append(" & ".join(lead + [f"{r['difference']:+.4f}", _p(r.get("randomization_p"), r.get("resamples")),
                                       _num(r.get("adjusted_p")), f"{r['wins']}/{r['losses']}/{r['ties']}",
                                       escape_latex(verdict)]) + r" \\")
        iv = _small(_interval(r.get("ci_low"), r.get("ci_high"), s.get("alternative")))
        if iv:
            body.append(" & ".join([""] * len(lead) + [iv, "", "", "", ""]) + r" \\")
    base = f"against {rows[0]['baseline']}" if one_base else "against each row's baseline"
    base += f" over n = {n[0]} positive queries" if one_n else ""
    cap2 = (escape_latex(f"Comparisons {base} (lane letters as in Table") + " \\ref{tab:rankscope-compare-means}"
            + escape_latex(
                f"): mean difference candidate minus baseline with its paired bootstrap interval "
                f"({conf:.4g}) below; p from the {test}; adj. p after {correction} correction; W/L/T: queries won, lost, "
                f"tied; {VERDICT_KEY} " + payload.get("caption", "")))
    spec = ("l" if not one_base else "") + "ll" + ("" if one_n else "r") + "rrrrl"
    fam = _family_words(s)
    if fam:
        cap2 += " " + escape_latex(fam)
    out += _open(spec) + body + _close(cap2, "tab:rankscope-compare-rows")
    out += _power_table(rows, one_base)
    return "\n".join(out)


def _family_words(s: dict) -> str:
    """The family's false-positive chance beside J (and the exploratory rows' own family
    of a planned call), for the rows table's caption."""
    out = []
    for key, what in (("family_false_positive", "the tested family"),
                      ("exploratory_family_false_positive", "the exploratory rows, corrected apart")):
        fam = s.get(key)
        if not fam or not fam.get("family_size"):
            continue
        # in words, as the rest of the captions say alpha: no math mode beside escaped names
        holds = str(fam["holds"]).replace("≤", "at most").replace("α", "alpha")
        out.append(f"For {what} (J = {fam['family_size']}) the chance of at least one false established row is "
                   f"1 - (1 - alpha)^J = {fam['uncorrected']:.3f} uncorrected; {holds}.")
    return " ".join(out)


def _power_table(rows: list[dict], one_base: bool) -> list[str]:
    """What each row could establish (``statistics.power``): the sd of its differences, the
    minimum detectable effect at its power and α, the randomization test's floor, and the
    queries (units) its target difference needs. Nothing when no row has a power block."""
    rows = [r for r in rows if r.get("power")]
    if not rows:
        return []
    # the metric leads (the rows table is the one a row is found in by its candidate)
    head = ["metric", "comparison", "n", "sd", "MDE", "alpha", "floor p", "target", "needed"]
    body = [" & ".join(head) + r" \\", r"\midrule"]
    for r in rows:
        pw = r["power"]
        lead = [escape_latex(r["metric"]), escape_latex(r["candidate"] if one_base else
                                                        f"{r['candidate']} vs {r['baseline']}")]
        floor = "n/a" if pw.get("randomization_floor") is None else f"{pw['randomization_floor']:.4g}"
        if pw.get("resolvable") is False:
            floor += " (unresolvable)"
        target = "n/a" if pw.get("target_delta") is None else f"{pw['target_delta']:.4f}"
        needed = "n/a" if pw.get("needed") is None else f"{pw['needed']:,}"
        body.append(" & ".join(lead + [str(pw["n"]), f"{pw['sd']:.4f}", _num(pw.get("mde")), f"{pw['alpha']:.4g}",
                                       floor, target, needed]) + r" \\")
    first = rows[0]["power"]
    what = "--min-delta" if first.get("target_from") == "min_delta" else "the observed mean difference"
    cap = escape_latex(
        f"What each comparison could establish ({first['approximation']}): MDE, the smallest mean difference "
        f"established with {first['power']:.0%} power at the row's alpha (after the family's correction) given the sd "
        f"of its paired differences and n; floor p, the randomization test's p for a perfect result with these "
        f"non-zero differences and resamples (unresolvable: above alpha); needed, the {first['sampled']} that detect "
        f"the target ({what}) with that power.")
    spec = "ll" + "rrrrrrr"
    return _open(spec) + body + _close(cap, "tab:rankscope-compare-power")



# --------------------------------------------------------------------------- compare --all-pairs


def render_all_pairs_latex(res, cap: str, notes: list[str]) -> str:
    """``compare --all-pairs`` (``statistics.tukey.TukeyResult``) in ``compare``'s style: a
    means table with lane letters, bold best and the letters of the lanes each lane beats
    as superscript; then a table of every pair (difference b − a with its paired interval
    below, the Tukey HSD p, W/L/T and whether it is established). ``cap`` (the Tukey
    caption) goes with the first table, which the second refers to; each has a label."""
    key = label_key(res.metric)
    means_label, pairs_label = f"tab:rankscope-all-pairs-means-{key}", f"tab:rankscope-all-pairs-{key}"
    letter = dict(zip(res.lanes, res.letters))
    out = [PREAMBLE] + _width_note(res.lanes) + [""]
    body = [" & ".join(["lane", escape_latex(f"mean {res.metric}")]) + r" \\", r"\midrule"]
    for lane, bold in zip(res.lanes, best_marks(list(res.means), res.metric)):
        mean = res.means[res.lanes.index(lane)]
        text = _num(mean)
        if bold:
            text = r"\textbf{" + text + "}"
        beaten = res.beats(lane)
        if beaten:
            text += r"\textsuperscript{" + "".join(beaten) + "}"
        body.append(f"({letter[lane]}) {escape_latex(lane)} & {text}" + r" \\")
    cap1 = escape_latex(f"Mean {res.metric} over n = {res.n} positive queries; bold: the best mean. A superscript "
                        "lists the letters of the lanes this lane is established better than. " + cap
                        + "".join(f" {n}" for n in notes))
    out += _open("lr") + body + _close(cap1, means_label)
    body = [" & ".join(["pair", "diff.", "Tukey HSD p", "W/L/T", "verdict"]) + r" \\", r"\midrule"]
    for p in res.pairs:
        pair = f"({letter[p.b]}) {escape_latex(p.b)} - ({letter[p.a]}) {escape_latex(p.a)}"
        pv = "n/a" if p.p is None else p_number(p.p, res.resamples)
        if p.p is not None and res.resamples and p.p == 1 / (res.resamples + 1):
            pv += " (floor)"  # the caption says what the floor is
        verdict = f"established: {escape_latex(p.winner)}" if p.winner else "inconclusive"
        body.append(" & ".join([pair, f"{p.difference:+.4f}", pv, f"{p.wins}/{p.losses}/{p.ties}", verdict]) + r" \\")
        iv = _small(_interval(p.ci_low, p.ci_high))
        if iv:
            body.append(" & ".join(["", iv, "", "", ""]) + r" \\")
    cap2 = (escape_latex("Every pair (lane letters as in Table") + " \\ref{" + means_label + "}"
            + escape_latex(f"): mean difference b minus a with its paired bootstrap interval ({res.confidence:.4g}) "
                           "below, per pair and not simultaneous; the Tukey HSD p, family-wise over all pairs; "
                           f"W/L/T: {'units' if res.sampling_unit == 'unit' else 'queries'} where b is higher, lower, "
                           "tied; verdict: established (p at most alpha) and the lane with the higher mean, or inconclusive."))
    out += _open("lrrrl") + body + _close(cap2, pairs_label)
    return "\n".join(out)
