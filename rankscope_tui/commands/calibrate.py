"""`rankscope calibrate`: fit fusion weights and gate floors on one qrels file, write thresholds.json."""

from __future__ import annotations

import sys


def register(sub) -> None:
    from ..cli import add_loading_options

    p = sub.add_parser("calibrate", help="fit fusion weights and gate floors on calibration queries")
    add_loading_options(p)
    p.add_argument("--step", type=float, default=0.1, help="convex weight grid step (1/step must be an integer)")
    p.add_argument("--objective", default="ndcg@10", help="metric the weights maximise (mean over calibration positives)")
    p.add_argument("--alpha", type=float, default=None, help="conformal miss rate (same as --miss-rate)")
    p.add_argument("--out", required=True, metavar="thresholds.json")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..cli import gate_options, input_paths, load_workspace
    from ..kernel.output import check_output_path, dumps_strict, write_atomic
    from ..kernel.pipeline import calibrate

    check_output_path(args.out, input_paths(args))
    ws = load_workspace(args)
    opts = gate_options(args)
    if args.alpha is not None:
        opts["miss_rate"] = args.alpha
    data = calibrate(ws, opts, step=args.step, metric=args.objective)
    write_atomic(args.out, dumps_strict(data))
    fusion = data["fusion"]
    if "convex" in fusion:
        c = fusion["convex"]
        w = ", ".join(f"{k} {v:g}" for k, v in c["weights"].items())
        sys.stdout.write(f"convex weights: {w} ({c['objective']['name']} {c['objective']['value']:.4f} on "
                         f"{data['calibration']['positives']} calibration positives, {c['grid']['points']} grid points)\n")
    g = data.get("gate")
    if g:
        floor = "null" if g.get("floor") is None else f"{g['floor']:.6g}"
        sys.stdout.write(f"gate on {g['lane']}: operating floor {floor} (target FPIR {g['target_fpir']:g}"
                         f"{', conservative' if g['conservative'] else ''}; picked on {g['picked_on']} negatives)\n")
        if g.get("floor_reason"):
            sys.stdout.write(f"  {g['floor_reason']}\n")
    sys.stdout.write(f"thresholds written to {args.out}\n")
    return 0
