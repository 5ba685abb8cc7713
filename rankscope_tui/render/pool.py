"""A ``pool`` suggestion (``kernel.instruments.pool.PoolResult``) as text: what was
suggested against depth-k pooling, the rule, and per pooled lane and measure the holes and
the bound gap before and after judging the suggested pairs."""

from __future__ import annotations

from typing import Any


def render_pool(result: Any, out: str | None) -> str:
    d = result.as_dict()
    where = f"written to {out}" if out else "not written (no --out)"
    lines = [
        f"pool: {d['suggested']:,} of {d['candidates']:,} unjudged pairs inside the top k of "
        f"{', '.join(d['lanes'])} ({', '.join(d['metrics'])}) on {d['queries']:,} positive queries; "
        f"depth-k pooling would judge all {d['candidates']:,}",
        f"file to judge: {where}, one line 'qid 0 docid {d['placeholder_grade']}' per pair in priority order "
        f"(grade {d['placeholder_grade']}: in the pool, not judged; replace it with the grade)",
        f"rule: {d['rule']}",
        "",
    ]
    rows = [["lane", "measure", "holes before", "after", "gap before", "after"]]
    for c in d["changes"]:
        rows.append([c["lane"], c["metric"], f"{c['holes_before']:.2f}", f"{c['holes_after']:.2f}",
                     f"{c['gap_before']:.4f}", f"{c['gap_after']:.4f}"])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines) + "\n"
