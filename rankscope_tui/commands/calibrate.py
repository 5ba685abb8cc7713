"""`rankscope calibrate`: fit fusion weights and gate floors on one qrels file, write thresholds.json."""

from __future__ import annotations

from ..kernel.settings import CalibrationSettings


def register(sub) -> None:
    from .options import add_engine_options, add_loading_options

    p = sub.add_parser("calibrate", help="fit fusion weights and gate floors on calibration queries")
    add_loading_options(p)
    add_engine_options(p)
    p.add_argument("--step", type=float, default=CalibrationSettings.step, help="convex weight grid step (1/step must be an integer)")
    p.add_argument("--objective", default=CalibrationSettings.objective, help="metric the weights maximise (mean over calibration positives)")
    p.add_argument("--folds", type=int, default=None, metavar="K",
                   help="K-fold cross-validation of the fitted weights, RRF k and gate floors (folds dealt from --seed, "
                        "stratified by query class and --strata); the fold report is written beside the fit on all queries")
    p.add_argument("--alpha", type=float, default=None, help="conformal miss rate (same as --miss-rate)")
    p.add_argument("--out", required=True, metavar="thresholds.json")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..kernel import calibrate
    from ..kernel.report.output import check_output_path, dumps_strict
    from ..render.calibrate import calibrate_text
    from .options import CliError, engine_settings, gate_options, input_paths, load_workspace, run_buckets, write_with_text

    check_output_path(args.out, input_paths(args))
    engine = engine_settings(args)
    cal = CalibrationSettings(step=args.step, objective=args.objective, folds=args.folds)
    if engine.bucketed and cal.folds is not None:
        raise CliError("--folds does not run with --buckets: the folds score RRF at every k on the whole "
                       "workspace; calibrate in memory, or without --folds", "--folds")
    if engine.bucketed:  # the buckets keep every convex grid point's per-query objective
        ws, _, engine = run_buckets(args, engine, calibration=cal)
    else:
        ws = load_workspace(args)
    gate = gate_options(args)  # --alpha is --miss-rate
    data = calibrate(ws, gate, cal)
    if engine.bucketed:
        data["settings"] = {**data["settings"], "engine": engine.as_dict()}
    write_with_text([(args.out, dumps_strict(data))], calibrate_text(data, args.out))
    return 0
