"""A ``plan`` (``kernel.instruments.plan.QueryPlan``) as text or markdown: the pilot, the
formula and the table of the sample needed over target difference × power."""

from __future__ import annotations

from typing import Any


def _n(x: int | None, limit: int) -> str:
    return f"> {limit:,}" if x is None else f"{x:,}"


def plan_lines(plan: Any) -> tuple[list[str], list[str], list[list[str]], list[str]]:
    """(lines before the table, header, rows, lines after)."""
    d = plan.as_dict()
    s, pilot = d["settings"], d["pilot"]
    unit = plan.sampled
    head = [
        f"pilot: {plan.candidate} vs {plan.baseline} on {pilot['metric']}, {plan.pilot_queries} queries"
        + (f" in {plan.pilot_n} units" if unit == "units" else "")
        + f"; mean delta {plan.observed:+.4f}, sd of the differences {plan.sd:.4f}",
        f"alpha = {s['alpha']:.4g} over a family of J = {s['family_size']}: each test planned at alpha/J = "
        f"{s['alpha_per_test']:.4g} (Bonferroni, for planning), {s['alternative']}",
        f"uncorrected, {s['family_size']} independent tests at alpha would give at least one false \"established\" "
        f"with probability 1 - (1 - alpha)^J = {s['family_false_positive']['uncorrected']:.3f}; "
        f"{s['family_false_positive']['holds']}",
        f"{unit} needed = the smallest n >= 2 with power(delta/sd, n, alpha/J) >= the target power "
        f"({d['approximation']}; topic set size design, Sakai 2016)",
    ]
    header = ["delta", "power", f"{unit} needed"] + (["queries"] if unit == "units" else [])
    rows = []
    for c in plan.cells:
        row = [f"{c.delta:.4f}", f"{c.power:.2f}", _n(c.needed, d["limit"])]
        if unit == "units":
            row.append(_n(c.queries, d["limit"]))
        rows.append(row)
    tail = [f"with the pilot's {plan.pilot_n} {unit}, delta >= {mde:.4f} would be established with {p:.0%} power"
            for p, mde in plan.pilot_mde.items()]
    if unit == "units":
        tail.append(f"queries = units x the pilot's {plan.pilot_queries / plan.pilot_n:.2f} queries per unit")
    tail.append(f"the sd is the pilot's estimate from {plan.pilot_n} {unit}: a small pilot can be off by a fifth or more")
    return head, header, rows, tail


def render_plan(plan: Any, fmt: str = "text") -> str:
    head, header, rows, tail = plan_lines(plan)
    if fmt == "markdown":
        from .markdown import md_prose, md_table

        out = ["- " + md_prose(x) for x in head] + [""] + md_table(header, rows, 0) + [""]
        out += ["- " + md_prose(x) for x in tail]
        return "\n".join(out) + "\n"
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    lines = head + [""] + ["  ".join(h.rjust(w) for h, w in zip(header, widths))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines + [""] + tail) + "\n"
