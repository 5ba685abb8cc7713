"""What `rankscope calibrate` prints once thresholds.json is written."""

from __future__ import annotations

from .escaping import terminal_safe


def calibrate_text(data: dict, out_path: str) -> str:
    """The summary lines: convex weights, the gate's operating floor (and why it is
    unattainable), and where the thresholds went."""
    lines = []
    fusion = data["fusion"]
    if "convex" in fusion:
        c = fusion["convex"]
        w = ", ".join(f"{k} {v:g}" for k, v in c["weights"].items())
        lines.append(f"convex weights: {w} ({c['objective']['name']} {c['objective']['value']:.4f} on "
                     f"{data['calibration']['positives']} calibration positives, {c['grid']['points']} grid points)")
    g = data.get("gate")
    if g:
        floor = "null" if g.get("floor") is None else f"{g['floor']:.6g}"
        lines.append(f"gate on {g['lane']}: operating floor {floor} (target FPIR {g['target_fpir']:g}"
                     f"{', conservative' if g['conservative'] else ''}; picked on {g['picked_on']} negatives)")
        if g.get("floor_reason"):
            lines.append(f"  {g['floor_reason']}")
    lines.append(f"thresholds written to {out_path}")
    return terminal_safe("".join(line + "\n" for line in lines))
