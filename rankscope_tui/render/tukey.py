"""``compare --all-pairs`` (``kernel.tukey.TukeyResult``) as text, markdown or LaTeX: the
letters table (each lane with the letters of the lanes it beats, as ranx's ``compare``)
and every pair with its Tukey HSD p, paired interval and W/L/T."""

from __future__ import annotations

from ..kernel.statistics.randomization import format_p
from .escaping import escape_markdown, terminal_safe


def _interval(lo, hi) -> str:
    if lo is None or hi is None:
        return "—"
    if lo == hi:
        return "not informative (no variation)"
    return f"[{lo:+.4f}, {hi:+.4f}]"


def _p(p: float, B: int) -> str:
    """A Tukey p as ``format_p`` prints it; at the floor 1/(B + 1) marked "(floor)" (the caption says what it is)."""
    text = format_p(p, B).removeprefix("p = ").split(",")[0]
    return text + " (floor)" if p == 1 / (B + 1) else text


def letters_table(res) -> tuple[list[str], list[list[str]]]:
    header = ["", "lane", f"mean {res.metric}", "beats"]
    rows = [[letter, lane, f"{mean:.4f}", ", ".join(res.beats(lane)) or "—"]
            for lane, letter, mean in zip(res.lanes, res.letters, res.means)]
    return header, rows


def pairs_table(res) -> tuple[list[str], list[list[str]]]:
    header = ["pair", "delta", f"paired CI ({res.confidence * 100:g} %)", "Tukey HSD p", "W/L/T", "established"]
    rows = []
    for p in res.pairs:
        rows.append([f"{p.b} − {p.a}", f"{p.difference:+.4f}", _interval(p.ci_low, p.ci_high),
                     "—" if p.p is None else _p(p.p, res.resamples),
                     f"{p.wins}/{p.losses}/{p.ties}", f"yes: {p.winner} higher" if p.winner else "no: inconclusive"])
    return header, rows


def caption(res) -> str:
    unit = "units" if res.sampling_unit == "unit" else "queries"
    return (f"Randomised Tukey HSD over {len(res.lanes)} lanes on {res.metric}, B = {res.resamples:,} permutations "
            f"of each of the {res.n_units:,} {unit}' scores across the lanes (seed {res.seed}); a lane beats another "
            f"when its mean is higher and the pair's p ≤ α = {res.alpha:.4g} (family-wise over all "
            f"{len(res.pairs)} pairs; \"(floor)\" marks the minimum attainable p, 1/(B + 1) = {1 / (res.resamples + 1):.4g}). "
            f"Intervals are per pair, not simultaneous, and describe variation over "
            f"{unit} for these fixed runs, not over training seeds.")


def render_all_pairs(res, fmt: str = "text") -> str:
    tables = [letters_table(res), pairs_table(res)]
    cap = caption(res)
    notes = list(res.warnings)
    # the omnibus test is read first (its sentence is the kernel's): whether the lanes differ at all
    first = [res.omnibus.sentence] if getattr(res, "omnibus", None) is not None else []
    if fmt == "markdown":
        lines = [f"**{escape_markdown(s)}**" for s in first] + ([""] if first else [])
        for header, rows in tables:
            lines += ["| " + " | ".join(escape_markdown(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
            lines += ["| " + " | ".join(escape_markdown(c) for c in r) + " |" for r in rows] + [""]
        lines += [f"- {escape_markdown(n)}" for n in notes] + ["*" + escape_markdown(cap) + "*"]
        return terminal_safe("\n".join(lines) + "\n")
    if fmt == "latex":
        from .latex import render_all_pairs_latex

        return terminal_safe(render_all_pairs_latex(res, cap, first + notes) + "\n")
    lines = first + ([""] if first else [])
    for header, rows in tables:
        widths = [max(len(x) for x in col) for col in zip(header, *rows)]
        lines += ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows] + [""]
    lines += notes + [cap]
    return terminal_safe("\n".join(lines) + "\n")
