"""An ``agree`` result (``kernel.instruments.agree.Agreement``, as its dict) as text or
markdown: the labels, the κ table, the confusion matrix, the strata, the systems under
both labels and the prediction-powered means. Numbers only are formatted here; every
word of judgement (what a swap changes, the interval's method) comes from the kernel."""

from __future__ import annotations

import math
from typing import Any


def _num(x: float | None, digits: int = 3) -> str:
    return "undefined" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _interval(k: dict[str, Any]) -> str:
    if k["low"] is None or k["high"] is None:
        return "no interval"
    return f"[{k['low']:.3f}, {k['high']:.3f}]"


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def agree_sections(d: dict[str, Any]) -> list[tuple[list[str], list[str], list[list[str]], int]]:
    """(lines before, header, rows, name columns) per section; a section without a table has an empty header."""
    s = d["settings"]
    a, b = d["inputs"]
    p = d["pairs"]
    out: list[tuple[list[str], list[str], list[list[str]], int]] = []
    head = [
        f"labels: A = {a['path']} ({a['pairs']:,} judged pairs), B = {b['path']} ({b['pairs']:,} judged pairs)",
        f"pairs judged in both: {p['pairs']:,} in {p['queries']:,} queries; grades {p['scale']['low']}..{p['scale']['high']}"
        + (" (declared with --grades)" if s["grades"] else ""),
        f"exact agreement: {_pct(d['exact_agreement'])} of the pairs",
    ]
    kap = d["kappa"][0]
    if kap["resamples"]:
        head.append(f"intervals: {s['confidence']:.0%} {d['interval']}; {kap['resamples']:,} resamples, seed {s['seed']}")
    else:
        head.append("intervals: none (--resamples 0 or a single query)")
    rows = []
    for k in d["kappa"]:
        name = k["label"] + (" (the default weighting)" if k["weights"] == s["weights"] else "")
        rows.append([name, _num(k["estimate"]), _interval(k)])
    bk = d["binary_kappa"]
    rows.append([f"{bk['label']}, relevant (grade >= {bk['relevant']}) or not", _num(bk["estimate"]), _interval(bk)])
    out.append((head, ["agreement", "estimate", "interval"], rows, 1))
    c = d["confusion"]
    out.append((["confusion of grades (rows: A, columns: B)"], ["A \\ B"] + [str(g) for g in c["grades"]],
                [[str(g)] + [f"{n:,}" for n in row] for g, row in zip(c["grades"], c["counts"])], 0))
    if d["strata"]:
        w = s["weights"]
        rows = [[st["stratification"], st["label"], f"{st['pairs']:,}", f"{st['queries']:,}", _pct(st["exact"]),
                 _num(st["kappa"]["estimate"]), _interval(st["kappa"]), _num(st["weighted"]["estimate"]),
                 _interval(st["weighted"])] for st in d["strata"]]
        out.append((["agreement per stratum"], ["stratification", "label", "pairs", "queries", "exact", "kappa",
                                                "interval", f"{w} weighted", "interval"], rows, 2))
    for i, m in enumerate(d["systems"]["measures"]):
        lines = [f"means under A and under B: {d['systems']['means']}"] if i == 0 else []
        lines += [f"{m['metric']}: mean of each lane under A and under B over {m['queries']:,} queries",
                  f"Kendall's tau {_num(m['kendall_tau'])}, tau_AP {_num(m['tau_ap'])} (A as the truth); {m['change']}"]
        if m["swapped"]:
            lines.append("swapped under B: " + "; ".join(f"{x} above {y} under A, below under B" for x, y in m["swapped"]))
        rows = [[ln["lane"], f"{ln['mean_a']:.4f}", f"{ln['mean_b']:.4f}", f"{ln['mean_b'] - ln['mean_a']:+.4f}",
                 str(ln["rank_a"]), str(ln["rank_b"])] for ln in m["lanes"]]
        out.append((lines, ["lane", "mean A", "mean B", "B - A", "rank A", "rank B"], rows, 1))
    if "ppi" in d:
        pp = d["ppi"]
        q = pp["queries"]
        lines = [f"prediction-powered means: B labels {q['labelled'] + q['unlabelled']:,} queries, A a subset of "
                 f"{q['labelled']:,}; mean of B on the other {q['unlabelled']:,} + the mean A - B difference on A's",
                 f"interval: {s['confidence']:.0%}, {pp['method']}; assumes {pp['assumption']}",
                 f"({pp['reference']})"]
        rows = [[r["lane"], r["metric"], f"{r['estimate']:.4f}", f"[{r['low']:.4f}, {r['high']:.4f}]",
                 f"{r['classical']:.4f}", f"[{r['classical_low']:.4f}, {r['classical_high']:.4f}]",
                 f"{r['b_mean_all']:.4f}", f"{r['rectifier']:+.4f}"] for r in pp["lanes"]]
        out.append((lines, ["lane", "measure", "PPI mean", "interval", "A alone", "interval", "B alone",
                            "A - B"], rows, 2))
    if d["notes"]:
        out.append(([f"note: {n}" for n in d["notes"]], [], [], 0))
    return out


def render_agree(d: dict[str, Any], fmt: str = "text") -> str:
    """The text (``fmt`` "text") or markdown of an ``agree`` dict."""
    blocks = []
    for lines, header, rows, names in agree_sections(d):
        if fmt == "markdown":
            from .markdown import md_prose, md_table

            part = [md_prose(x) + "  " for x in lines]
            if header:
                part += [""] + md_table(header, rows, names)
        else:
            part = list(lines)
            if header:
                widths = [max(len(x) for x in col) for col in zip(header, *rows)]
                fit = [(str.ljust if i < max(names, 1) else str.rjust) for i in range(len(header))]
                part += ["  ".join(f(h, w) for f, h, w in zip(fit, header, widths)).rstrip()]
                part += ["  ".join(f(c, w) for f, c, w in zip(fit, r, widths)).rstrip() for r in rows]
        blocks.append("\n".join(part))
    return "\n\n".join(blocks) + "\n"
