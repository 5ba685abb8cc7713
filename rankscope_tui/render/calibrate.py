"""What `rankscope calibrate` prints once thresholds.json is written: every fitted quantity
(formatting only; the numbers are thresholds.json's)."""

from __future__ import annotations

from .escaping import terminal_safe
from .report import conformal_floor_line, gate_rate, gate_score, null_floor_line


def _neg(name: str | None) -> str:
    return {"in_domain": "in-domain", "out_of_domain": "out-of-domain"}.get(name or "", name or "no")


def _method_lines(m: dict | None) -> list[str]:
    """The fusion methods side by side (``fusion.methods``): dev, held-out test, weights."""
    if not m:
        return []
    test = "test_positives" in m
    head = f"fusion methods ({m['objective']}; dev: {m['dev_positives']} positives, in-sample where weights are fitted"
    head += f"; test: {m['test_positives']} held-out positives, dev weights):" if test else "):"
    out = [head]
    width = max(len(name) for name in m["methods"])
    for name, r in m["methods"].items():
        line = f"  {name:<{width}}  dev {r['dev']:.4f}"
        if test:
            line += f"  test {r['test']:.4f}"
        if "weights" in r:
            line += "  weights " + ", ".join(f"{k} {v:g}" for k, v in r["weights"].items())
            line += f" ({r['grid_points']} grid points)"
        out.append(line)
    chosen = f"chosen on dev: {m['chosen_on_dev']}"
    if test:
        chosen += (f"; best on test: {m['best_on_test']}; optimism of choosing on dev {m['optimism']:.4f} "
                   "(best test mean minus the dev choice's test mean)")
    out.append("  " + chosen)
    return out


def calibrate_text(data: dict, out_path: str) -> str:
    """The calibration queries, the convex weights with their objective, RRF k, and the
    gate: null floor per negative set with its empirical FPIR, conformal floor, operating
    floor (and why it is +inf when it is), operating margin, mutual r; where they went."""
    lines = []
    cal = data["calibration"]
    lines.append(f"calibration queries from {cal['qrels']}: {cal['positives']} positives, {cal['negatives']} in-domain "
                 f"negatives ({len(cal['qids'])} queries)")
    fusion = data["fusion"]
    if "convex" in fusion:
        c = fusion["convex"]
        w = ", ".join(f"{k} {v:g}" for k, v in c["weights"].items())
        lines.append(f"convex weights: {w} (maximise {c['objective']['name']}: {c['objective']['value']:.4f} mean over "
                     f"{cal['positives']} calibration positives; {c['grid']['points']} grid points, step {c['step']:g}; "
                     f"{c['fused_queries']} calibration queries fused)")
        if c.get("tie"):
            lines.append(f"  warning: {c['tie']}")
    elif fusion.get("convex_reason"):
        lines.append(f"convex weights: {fusion['convex_reason']}")
    lines.append(f"RRF k: {fusion['rrf_k']:g} ({fusion['rrf_k_source']})")
    lines += _method_lines(fusion.get("methods"))
    g = data.get("gate")
    if g:
        basis = "Wilson upper bound, --conservative" if g["conservative"] else "point estimate"
        lines.append(f"gate on {g['lane']} (target FPIR {g['target_fpir']:g} on the {basis}; conformal miss rate "
                     f"{g['miss_rate']:g}):")
        sub = [null_floor_line(name, nf) for name, nf in g["null_floor"].items()]
        sub.append(conformal_floor_line(g["conformal_floor"]))
        floor = gate_score(g.get("floor"))  # the operating point: null is +inf (reject all)
        line = f"operating floor (picked on {_neg(g.get('picked_on'))} negatives): {floor}"
        if g.get("floor") is None and g.get("floor_reason"):
            line += f": {g['floor_reason']}"
        sub.append(line)
        op = g.get("operating_point")
        if op:
            fp = ", ".join(f"{_neg(k)} {gate_rate(v)}" for k, v in op["fpir"].items())
            fnir = gate_rate(op["fnir"]) if op["positives"] else "no positives"
            sub.append(f"  there on the calibration queries: FNIR {fnir} (rejected {op['rejected']}, wrong accept "
                       f"{op['wrong_accept']}); FPIR {fp}")
        om = g.get("operating_margin")
        if om is not None:
            if om.get("margin") is None and str(om.get("margin_reason", "")).startswith("+inf"):
                sub.append(f"operating margin (the margin alone, on {_neg(om['negative_set'])} negatives): +inf (only lone "
                           "hits pass), not written to thresholds.json, so no margin is applied")
            elif om.get("margin") is None:
                sub.append(f"operating margin (the margin alone, on {_neg(om['negative_set'])} negatives): none, so no margin "
                           f"is applied: {om.get('margin_reason', 'unattainable')}")
            else:
                fp = ", ".join(f"{_neg(k)} {gate_rate(v)}" for k, v in om["fpir"].items())
                sub.append(f"operating margin (the margin alone, on {_neg(om['negative_set'])} negatives): "
                           f"{gate_score(om['margin'])}; FNIR {gate_rate(om['fnir'])}, FPIR {fp}; "
                           "`evaluate --thresholds` applies it ANDed with the floor (--margin overrides it)")
        else:
            sub.append("operating margin: none (no negatives to fit one on)")
        if g.get("mutual_r") is None:
            sub.append("mutual r: off")
        else:
            ms = g.get("mutual") or {}
            share = "—" if ms.get("vacuous_share") is None else f"{100 * ms['vacuous_share']:.1f} %"
            sub.append(f"mutual r: {g['mutual_r']} (`evaluate --thresholds` applies it ANDed with the floor); lists built "
                       f"from a batch of {ms.get('built_from', '—')} calibration queries, vacuous for "
                       f"{ms.get('vacuous_queries', '—')} ({share})")
        lines += ["  " + s for s in sub]
    lines.append(f"thresholds written to {out_path}")
    return terminal_safe("".join(line + "\n" for line in lines))
