"""What `rankscope calibrate` prints once thresholds.json is written: every fitted quantity
(formatting only; the numbers are thresholds.json's)."""

from __future__ import annotations

from .escaping import terminal_safe
from .report import conformal_floor_line, gate_rate, gate_score, null_floor_line


def _neg(name: str | None) -> str:
    return {"in_domain": "in-domain", "out_of_domain": "out-of-domain"}.get(name or "", name or "no")


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
    if data.get("folds"):
        lines += folds_lines(data["folds"])
    lines.append(f"thresholds written to {out_path}" + (" (the values fitted on all calibration queries, the fold "
                                                          "report beside them)" if data.get("folds") else ""))
    return terminal_safe("".join(line + "\n" for line in lines))


def _v(x, fmt: str = ".4f", reason: str | None = None) -> str:
    """A fitted number, or the words for an infinite or undefined one (its reason opens with ±inf)."""
    if x is None:
        r = reason or ""
        return "+inf" if r.startswith("+inf") else "-inf" if r.startswith("-inf") else "none"
    return format(x, fmt)


def _spread(sp: dict, fmt: str = ".4f") -> str:
    """min / median / max over the folds with a finite value, and the folds without one."""
    others = [(sp[key], word) for key, word in (("folds_plus_inf", "+inf"), ("folds_minus_inf", "-inf"),
                                                ("folds_undefined", "none")) if sp.get(key)]
    counted = ", ".join(f"{n} {'fold' if n == 1 else 'folds'} {word}" for n, word in others)
    if not sp.get("folds_finite"):
        return f"{others[0][1]} in every fold" if len(others) == 1 else counted
    text = " / ".join(_v(sp[k], fmt) for k in ("min", "median", "max"))
    return text + (f" ({counted})" if others else "")


def _rate(r: dict) -> str:
    return f"{r['k']}/{r['n']}" + (f" = {r['value']:.3f} [{r['low']:.3f}, {r['high']:.3f}]" if r["n"] else " (none held out)")


def folds_lines(f: dict) -> list[str]:
    """The fold report: per fold what was fitted on the other folds and its held-out score,
    the spread (min / median / max over folds) and the pooled held-out scores."""
    sizes = ", ".join(f"{d['held_out']['positives']}+{d['held_out']['negatives']}" for d in f["per_fold"])
    by = " and ".join(["query class"] + [f"the {n} label" for n in f["stratified_by"]])
    out = [f"cross-validation: {f['k']} folds of the {f['queries']} calibration queries (seed {f['seed']}, stratified "
           f"by {by}; held out per fold, positives+negatives: {sizes}); each fold's values are fitted on the other "
           f"{f['k'] - 1} folds and scored on it alone:"]
    cv, rrf, gate = f.get("convex"), f.get("rrf"), f.get("gate")
    if f.get("reason"):
        return [out[0].rsplit(";", 1)[0] + f"; {f['reason']}"]
    for d in f["per_fold"]:
        parts = [f"fold {d['fold']}:"]
        if cv:
            w = "/".join(f"{x:g}" for x in d["convex"]["weights"].values())
            parts.append(f"weights {w} held-out {d['convex']['held_out_objective']:.4f} (fit "
                         f"{d['convex']['train_objective']:.4f});")
        if rrf:
            parts.append(f"RRF k {d['rrf']['k']:g} held-out {d['rrf']['held_out_objective']:.4f};")
        if gate:
            g = d["gate"]
            parts.append(f"floor {_v(g['floor'], 'g', g.get('floor_reason'))} held-out FNIR "
                         f"{_rate(g['held_out']['fnir'])}, FPIR {_rate(g['held_out']['fpir'])}")
        out.append("  " + " ".join(parts).rstrip(";"))
    if cv:
        obj = cv["objective"]
        out.append(f"  convex weights ({'/'.join(cv['lanes'])}), min / median / max over folds: "
                   + "; ".join(f"{lane} {_spread(sp, 'g')}" for lane, sp in cv["spread"].items()))
        out.append(f"  convex held-out {obj}: {cv['held_out_pooled']:.4f} pooled over the positives (per fold "
                   f"{_spread(cv['held_out_per_fold'])}); fitted on all and scored on all {cv['all']['in_sample']:.4f}, "
                   f"optimism {cv['optimism']:+.4f}")
    if rrf:
        out.append(f"  RRF k fitted per fold, min / median / max: {_spread(rrf['spread'], 'g')}; held-out {rrf['objective']} "
                   f"{rrf['held_out_pooled']:.4f} pooled (on all: k {rrf['all']['k']:g}, {rrf['all']['in_sample']:.4f}, "
                   f"optimism {rrf['optimism']:+.4f}); {rrf['note']}")
    if gate:
        sp = gate["spread"]
        out.append(f"  gate on {gate['lane']}, min / median / max over folds: operating floor {_spread(sp['floor'], 'g')}; "
                   f"null floor {_spread(sp['null_floor'], 'g')}; conformal floor {_spread(sp['conformal_floor'], 'g')}; "
                   f"operating margin {_spread(sp['margin'], 'g')}")
        p = gate["held_out_pooled"]
        out.append(f"  gate held out, pooled over the folds: FNIR {_rate(p['fnir'])}; FPIR {_rate(p['fpir'])} (target "
                   f"{gate['target_fpir']:g}); {gate['note']}")
    return out
