"""A comparison (``kernel.comparison.Comparison``) as text, markdown or LaTeX: the rows
table, the notes (disagreements, warnings, largest losses, why rows are exploratory)
and the caption."""

from __future__ import annotations

import math
from typing import Any

from .power import power_lines


def _f(x, digits: int = 4) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _interval(lo, hi) -> str:
    """``[lo, hi]``; a one-sided interval's open end is written ``+∞)`` / ``(−∞``, never ``inf``."""
    if lo is None or hi is None:
        return "n/a"
    if lo == hi:
        return "not informative (no variation)"
    left = "(−∞" if lo == -math.inf else f"[{lo:.4f}"
    right = "+∞)" if hi == math.inf else f"{hi:.4f}]"
    return f"{left}, {right}"


def p_number(p, resamples) -> str:
    """A p-value as a bare number, with the decimals ``format_p`` uses (a resampled p
    shows its floor 1/(B + 1)); ``n/a`` when undefined."""
    if p is None:
        return "n/a"
    if resamples:
        return f"{p:.{max(4, math.ceil(math.log10(resamples + 1)))}f}"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.3g}"


#: below this a p printed to 4 decimals would read 0.0000: it is said as "< 0.0001"
P_SHOWN_FLOOR = 1e-4


def p_cell(p) -> str:
    """A p-value without a resampling floor (the t-test's, its adjusted p) to 4 decimals;
    below 0.0001 ``< 0.0001`` (never ``0.0000``, which reads as p = 0); ``n/a`` when undefined."""
    if p is None:
        return "n/a"
    return f"< {P_SHOWN_FLOOR:.4f}" if p < P_SHOWN_FLOOR else f"{p:.4f}"


def compare_table(result, p_prefix: bool = True) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the table; ``result`` is a ``verdict.CompareResult`` (or a ``Comparison``).
    ``p_prefix=False`` (markdown): the p column holds the bare number, a floor is said in a note."""
    # the comparison modules on first use: evaluate's renderers import this module too
    from ..kernel.statistics.randomization import format_p

    header = ["baseline", "candidate", "metric", "n", "base", "cand", "delta", "CI", "p", "adj p", "t p", "BCa (level)",
              "effect", "unpaired CI", "W/L/T", "verdict"]
    if getattr(result, "test", "randomization") == "t":
        header[9] = "adj t p"  # --test t: the adjusted p that decides is the t-test's
    elif getattr(result, "test", "randomization") == "bootstrap":
        header[9] = "adj boot p"  # --test bootstrap: the null-centred bootstrap test's p, adjusted
    md = getattr(result, "min_delta", 0.0)
    if md:
        header[-1] = f"verdict (min-delta {md:g})"
    rows = []
    for r in result.rows:
        bca = _interval(r.bca_low, r.bca_high) + f" ({r.bca_level:.4f})"
        if p_prefix:
            p = format_p(r.randomization_p, r.resamples) if r.randomization_p is not None else "n/a"
        else:
            p = p_number(r.randomization_p, r.resamples)
        # the adjusted randomization p with the decimals of its floor; an adjusted t p as the t p
        adjusted = (p_cell(r.adjusted_p) if getattr(result, "test", "randomization") == "t"
                    else p_number(r.adjusted_p, r.resamples))
        rows.append([r.baseline, r.candidate, r.metric, str(r.n), _f(r.baseline_mean), _f(r.candidate_mean), f"{r.difference:+.4f}",
                     _interval(r.ci_low, r.ci_high), p,
                     adjusted, p_cell(r.t_p), bca, _f(r.effect_size, 3), _interval(r.unpaired_ci_low, r.unpaired_ci_high),
                     f"{r.wins}/{r.losses}/{r.ties}", r.verdict_text])
    return header, rows


def compare_footnotes(result) -> list[str]:
    """What the columns need said once: why the BCa level varies by row, a p at its floor."""
    out = []
    levels = sorted({round(r.bca_level, 12) for r in result.rows})
    if len(levels) > 1:
        # the level matches the test's threshold, but the interval and the test are different
        # procedures and can still disagree (each disagreement is a note of its row)
        apart = any(r.verdict == "exploratory" and r.adjusted_p is not None for r in result.rows)
        out.append("BCa (level): each row's BCa interval is at 1 minus the threshold its adjusted test uses "
                   f"({result.rows[0].correction} step-down over the tested family"
                   + ("; the rows beyond the plan over their own family" if apart else "")
                   + "; rows outside the family at the "
                   "nominal level), so the interval and the test are read at the same level; where the interval "
                   "and the test still disagree, the row's note says so")
    floors = [r for r in result.rows if r.randomization_p is not None and r.resamples
              and math.isclose(r.randomization_p, 1 / (r.resamples + 1), rel_tol=1e-9)]
    if floors:
        out.append(f"p = 1/(B + 1) is the minimum attainable with B = {floors[0].resamples:,} resamples")
    return out


def _notes(result, reasons: dict) -> list[str]:
    out = []
    for r in result.rows:
        tag = f"{r.candidate} vs {r.baseline} on {r.metric}"
        for d in r.disagreements:
            out.append(f"{tag}: {d}")
        for w in r.warnings:
            out.append(f"{tag}: {w}")
        if r.largest_losses:
            out.append(f"{tag}: largest losses " + ", ".join(f"{x.qid} ({x.difference:+.3f})" for x in r.largest_losses))
    for k, v in reasons.items():
        out.append(f"exploratory ({'all rows' if k == '*' else k}): {v}")
    out += list(result.warnings)
    md = getattr(result, "min_delta", 0.0)
    if md:
        out.append(f"min-delta {md:g}: an established difference is called better or worse only when |delta| >= {md:g}; "
                   "a smaller one is \"established but below min-delta\"")
    return out


def compare_text(comparison: Any) -> str:
    """The comparison's table, notes and caption as plain text (the results sentence is
    added by ``render.formats.render_compare``); ``comparison`` is a
    ``kernel.instruments.compare.Comparison``."""
    result = comparison.result
    header, rows = compare_table(result)
    notes = _notes(result, comparison.plan.exploratory_reasons)
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    lines += [""] + notes + ["", result.caption]
    lines += [""] + power_lines(result)
    return "\n".join(lines) + "\n"


def log_reuse_line(earlier: int, qrels_sha256: str) -> str:
    """Printed after the table when the call is logged: how many comparisons were logged
    on these test queries before it."""
    return (f"{earlier} earlier comparison call(s) were logged on these test queries (qrels sha256 {qrels_sha256[:12]}…); "
            "reusing test queries is multiple testing\n")


def log_lines(fmt: str, *, sha: str | None, path: str | None, before: int | None, written: bool, explicit: bool,
              problems: list[str], folded: int, reuse_correct: bool) -> tuple[str, str]:
    """What ``compare`` says about the comparison log, as (lines for stdout, lines for
    stderr): the earlier calls counted (and where the log is), that nothing was logged and
    why, a cache that could not be used, the earlier rows ``--reuse-correct`` folded in.

    An explicit ``--log FILE``'s count and the ``--reuse-correct`` line (it changes the
    results) go with the output; what the per-user cache says goes to stderr, so that the
    output's bytes stay a function of the inputs and settings alone. In LaTeX a stdout
    line is a comment, so the document still compiles."""
    out, err = [], []
    if sha is None:
        err.append("nothing was logged: per-query tables without --qrels have no qrels fingerprint to count "
                   "test-set reuse by (give --qrels)")
    elif before is not None:
        line = log_reuse_line(before, sha).rstrip("\n")
        if explicit:
            out.append(line)
        else:
            err.append(f"{line} (log: {path}; --no-log turns logging off)")
    elif not written:
        err.append("nothing was logged (--no-log): this comparison is not counted as a reuse of these test queries")
    err += [f"warning: {x}" for x in problems]
    if reuse_correct:
        out.append(f"--reuse-correct: {folded} earlier logged comparison row(s) on these test queries were adjusted "
                   "together with this call's family")
    if fmt == "latex":
        text = "".join(f"% {x}\n" for x in out)
    elif fmt == "markdown":
        text = ("\n" + "".join(f"- {x}\n" for x in out)) if out else ""
    else:
        text = "".join(f"{x}\n" for x in out)
    return text, "".join(f"rankscope: {x}\n" for x in err)
