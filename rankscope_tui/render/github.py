"""The step summary: ``diff`` and ``verdict`` as GitHub-flavoured markdown for a CI job's
summary page (``--step-summary FILE``; GitHub Actions gives ``$GITHUB_STEP_SUMMARY``, any
other CI a file it shows or keeps as an artifact).

Every word that decides comes from the kernel: a diff row's state
(``kernel.instruments.diff.STATUS_WORDS``), a rule's point and interval decisions and the
tally line (``kernel.instruments.rules``), the small-sample mark and its footnote
(``kernel.report.caveats``), the caption on intervals (``kernel.statistics.verdict.CAPTION``).
Names are escaped as in the markdown report (``render.markdown``); numbers are written as
the text output writes them, so a value copied from the summary parses.
"""

from __future__ import annotations

from typing import Any

from ..kernel.instruments.diff import CORRECTION, INTERVALS_NOTE, STATUS_WORDS, row_losses
from ..kernel.instruments.rules import AGAINST_NOTE, FAIL, NOT_APPLICABLE, PASS, SCALAR_NOTE
from ..kernel.report.caveats import SMALL_SAMPLE_FOOTNOTE, SMALL_SAMPLE_MARK, small_sample
from ..kernel.statistics.verdict import CAPTION
from .escaping import escape_markdown
from .markdown import md_prose, md_table
from .rules import rule_cells

#: How many largest-loss queries a regression lists by default.
DEFAULT_LOSSES = 5


def _cell(report: dict[str, Any], lane: str, level: str, metric: str) -> dict[str, Any] | None:
    """The report's cell (value, low, high, note) of a lane's metric; None when it holds none."""
    cell = ((report.get("lanes") or {}).get(lane) or {}).get(level, {}).get(metric)
    return cell if isinstance(cell, dict) else None


def _interval(cell: dict[str, Any] | None, mean: float) -> tuple[str, bool]:
    """``0.3056 [0.2627, 0.3459]`` (the report's interval, small-sample marked), or the
    paired mean alone with "(no interval)" when the report holds none; and whether marked."""
    if cell is None or cell.get("low") is None or cell.get("high") is None:
        return f"{mean:.4f} (no interval)", False
    marked = small_sample(cell)
    return f"{cell['value']:.4f} [{cell['low']:.4f}, {cell['high']:.4f}]" + (SMALL_SAMPLE_MARK if marked else ""), marked


def _p(p: float | None) -> str:
    return "n/a" if p is None else f"{p:.4f}"


def diff_summary(diff: Any, before: dict[str, Any], after: dict[str, Any], losses: int = DEFAULT_LOSSES) -> str:
    """The diff of two reports as a step summary: a heading with the count of established
    regressions, one table row per (lane, level, metric) with each report's mean and
    interval, Δ, the Holm-adjusted p and the row's state; under it each regression's
    ``losses`` largest-loss queries, then the caveats."""
    regressions = diff.regressions
    n = len(regressions)
    head = f"{n} established regression{'s' if n != 1 else ''}" if n else "no established regression"
    s = diff.settings
    out = [f"### rankscope diff: {head}", "",
           md_prose(f"before {diff.before}, after {diff.after}: Δ = after − before, the paired randomization test "
                    f"({s.resamples} resamples, seed {s.seed}), {CORRECTION.capitalize()} over the {len(diff.rows)} rows, "
                    f"α = {1 - s.confidence:.2g}, min-delta {s.min_delta:g}"), ""]
    rows, marked = [], False
    for r in diff.rows:
        b, mb = _interval(_cell(before, r.lane, r.level, r.metric), r.before_mean)
        a, ma = _interval(_cell(after, r.lane, r.level, r.metric), r.after_mean)
        marked = marked or mb or ma
        rows.append([r.lane, r.level, r.metric, str(r.n), b, a, f"{r.difference:+.4f}", _p(r.randomization_p),
                     _p(r.adjusted_p), f"**{STATUS_WORDS[r.status]}**" if r.regression else STATUS_WORDS[r.status]])
    out += md_table(["lane", "level", "metric", "n", "before [interval]", "after [interval]", "Δ", "p", "adj p", "status"],
                    rows, 3)
    if regressions and losses:
        out += ["", "#### Largest-loss queries of each regression", ""]
        for r in regressions:
            worst = row_losses(before, after, r, losses)
            listed = ", ".join(f"{escape_markdown(x.qid)} ({x.before:.4f} → {x.after:.4f}, {x.difference:+.4f})"
                               for x in worst)
            out.append(f"- {escape_markdown(r.lane)} {escape_markdown(r.level)} {escape_markdown(r.metric)}: {listed}")
    out += ["", "Caveats:", ""]
    if marked:
        out.append(f"- {SMALL_SAMPLE_MARK} {md_prose(SMALL_SAMPLE_FOOTNOTE)}")
    out.append(f"- {md_prose(CAPTION)}")
    out.append("- " + md_prose(INTERVALS_NOTE))
    return "\n".join(out) + "\n\n"


def verdict_summary(v: Any) -> str:
    """Pre-registered rules judged on a report as a step summary: a heading with the tally's
    outcome, one table row per rule (value and interval, threshold or against-value, both
    decisions), the rules not judged, and the notes the text output prints."""
    failed = bool(v.failures) or bool(v.errors)
    out = [f"### rankscope verdict: {FAIL if failed else PASS}", "",
           md_prose(f"gates {v.gates} sha256 {v.sha256}; report {v.report}"), ""]
    if v.git:
        out += [md_prose(f"warning: the gates file is {v.git} in git; write the rules before the run and commit them"), ""]
    rows = [rule_cells(r) for r in v.results]
    out += md_table(["rule", "value [interval]", "threshold or against-value [interval]", "point", "interval"], rows, 1)
    out.append("")
    for rule, error in v.errors:
        out.append(f"- not judged: {md_prose(rule.describe())}: {md_prose(error)}")
    out.append(md_prose(f"deciding column: {v.on}{' (strict: undecided fails)' if v.strict else ''}; "
                        f"{v.tally.summary(v.on, v.strict)}"))
    notes = []
    if any(r.rule.against for r in v.results):
        notes.append(AGAINST_NOTE)
    if any(r.interval == NOT_APPLICABLE for r in v.results):
        notes.append(SCALAR_NOTE)
    if notes:
        out += ["", "Caveats:", ""] + [f"- {md_prose(n)}" for n in notes]
    return "\n".join(out) + "\n\n"


def appended(path: str, text: str) -> bytes:
    """The step-summary file's bytes with ``text`` appended: a CI summary file collects every
    step's section, so what is already there is kept (written back whole and atomically)."""
    import os

    try:
        with open(path, "rb") as f:
            old = f.read()
    except FileNotFoundError:
        old = b""
    except OSError as exc:
        from ..kernel.errors import InputError

        raise InputError(f"cannot read the step summary: {os.strerror(exc.errno or 0) or exc}", path) from None
    if old and not old.endswith(b"\n"):
        old += b"\n"
    return old + text.encode("utf-8")
