"""`rankscope plot KIND --report report.json [--compare compare.json] --out FILE`: each
figure the dashboard draws (and two more) as a file (``kernel/report/figures.py`` gives the
numbers, ``render/figures.py`` writes them)."""

from __future__ import annotations

import os


def register(sub) -> None:
    from ..kernel.report.figures import KINDS

    p = sub.add_parser("plot", help="a figure as a file: .vl.json (Vega-Lite), .svg/.pdf/.png (the plots extra)")
    p.add_argument("kind", choices=KINDS, help="the figure")
    p.add_argument("--report", required=True, metavar="report.json", help="written by `rankscope evaluate --out`")
    p.add_argument("--compare", metavar="compare.json", help="written by `rankscope compare --out` (compare-intervals; "
                   "per-query-delta takes its first row's baseline, candidate and metric)")
    p.add_argument("--out", required=True, action="append", metavar="FILE",
                   help="FILE.vl.json, FILE.svg, FILE.pdf or FILE.png; repeatable (the same figure in several formats)")
    p.add_argument("--metric", default=None, help="the metric drawn (default: the compare row's, else the report's first)")
    p.add_argument("--baseline", default=None, help="per-query-delta: the baseline lane (default: the first lane)")
    p.add_argument("--candidate", default=None, help="per-query-delta: the candidate lane (default: the second lane)")
    p.add_argument("--level", choices=["doc", "group"], default="doc")
    p.add_argument("--step", type=float, default=0.1, help="convex-grid: the weight grid's step")
    p.add_argument("--stratum", default=None, metavar="NAME",
                   help="pr-curve: one panel per label of this stratification (a --strata file evaluate read)")
    p.set_defaults(func=run)


def _resolve(recorded: str, report_path: str) -> str:
    """An input path as report.json recorded it: as given (from the directory evaluate ran
    in), else beside the report."""
    if os.path.isabs(recorded) or os.path.exists(recorded):
        return recorded
    beside = os.path.join(os.path.dirname(os.path.abspath(report_path)), recorded)
    return beside if os.path.exists(beside) else recorded


def workspace_of_report(report: dict, report_path: str, with_strata: bool = False):
    """The lanes and qrels report.json names, reloaded with its settings (and, with
    ``with_strata``, its strata files); a file whose sha256 differs from the recorded one is
    refused (the figure would not be the report's)."""
    from ..kernel.errors import InputError
    from ..kernel.inputs.files import check_file, sha256_of
    from ..kernel.measures import parse_metrics
    from ..kernel.settings import LoadSettings
    from ..kernel.workspace.loaded import Workspace

    inp = report["inputs"]
    s = inp["settings"]

    def checked(info: dict) -> str:
        path = _resolve(info["path"], report_path)
        if not os.path.exists(path):
            raise InputError("named in the report's inputs and not found (run plot from the directory evaluate ran in, "
                             "or keep the inputs beside the report)", info["path"])
        if check_file(path) != "regular":  # a directory or device is refused by check_file itself
            # a pipe cannot be read twice (once for its sha256, once to load it): reading it
            # would wait on a writer, then find it spent
            raise InputError("is a pipe now, not the file the report read; plot re-reads the report's inputs and "
                             "checks their sha256 (give the files themselves)", path)
        if info.get("sha256") and sha256_of(path) != info["sha256"]:
            raise InputError(f"changed since the report was written (sha256 {info['sha256'][:12]}… recorded)", path)
        return path

    lanes = [(name, checked(info)) for name, info in inp["lanes"].items()]
    settings = LoadSettings(metrics=tuple(parse_metrics(",".join(s["metrics"]))), depth=s.get("depth"),
                            relevant=s.get("relevant", 1), group_sep=s.get("group_sep"), window=s.get("window", 10),
                            seed=s.get("seed", 0), resamples=0, confidence=s.get("confidence", 0.95),
                            rrf_k=s.get("rrf_k", 60), rrf_k_source=s.get("rrf_k_source", "default"),
                            ignore_self=bool(s.get("ignore_self", False)),  # the lists the report saw
                            fuse=tuple(s.get("fuse", ())))  # its --fuse lanes (added only by add_derived_lanes)
    strata = [checked(info) for info in inp.get("strata", [])] if with_strata else []
    return Workspace.load(lanes, checked(inp["qrels"]), settings, strata)


def run(args) -> int:
    from ..kernel.errors import InputError
    from ..kernel.inputs.files import load_json, read_text
    from ..kernel.report import figures as FG
    from ..kernel.report.output import check_outputs
    from ..kernel.report.payload import read_report
    from ..render.figures import check_suffix, figure_bytes
    from .options import write_with_text

    suffixes = [check_suffix(out) for out in args.out]
    inputs = [args.report] + ([args.compare] if args.compare else [])
    check_outputs([("--out", out) for out in args.out], inputs)
    report = read_report(args.report)
    compare = None
    if args.compare:
        compare = load_json(read_text(args.compare), args.compare)
        if not isinstance(compare, dict) or not isinstance(compare.get("comparisons"), list):
            raise InputError("not a compare --out file (no 'comparisons' list)", args.compare, 1)
    if args.kind in FG.NEEDS_COMPARE and compare is None:
        raise InputError(f"{args.kind} draws a comparison: give --compare compare.json (written by `rankscope compare --out`)",
                         "--compare")
    metrics = report["inputs"]["settings"]["metrics"]
    first = (compare or {}).get("comparisons") or [{}]
    metric = args.metric or first[0].get("metric") or metrics[0]
    if metric not in metrics:
        raise InputError(f"metric {metric!r} is not in the report (it has {', '.join(metrics)})", "--metric")
    try:
        if args.kind == "rrf-k":
            ws = workspace_of_report(report, args.report)
            if len(ws.input_lanes) < 2:
                raise InputError("rrf-k needs two or more input lanes in the report", args.report)
            fig = FG.rrf_k_figure(ws, metric)
        elif args.kind == "convex-grid":
            ws = workspace_of_report(report, args.report)
            if len(ws.input_lanes) < 2:
                raise InputError("convex-grid needs two or more input lanes in the report", args.report)
            fig = FG.convex_grid_figure(ws, metric, args.step)
        elif args.kind == "pr-curve":
            from ..kernel.instruments.evaluate import add_derived_lanes

            ws = workspace_of_report(report, args.report, with_strata=args.stratum is not None)
            add_derived_lanes(ws)  # the rrf lane beside the inputs, at the report's k, as evaluate adds it
            fig = FG.pr_curve_figure(ws, args.level, args.stratum)
        elif args.kind == "gate":
            fig = FG.gate_figure(report)
        elif args.kind == "compare-intervals" and compare is not None:  # (NEEDS_COMPARE: given, checked above)
            fig = FG.compare_intervals_figure(compare)
        elif args.kind == "per-query-delta":
            lanes = list(report["per_query"])
            base = args.baseline or first[0].get("baseline") or lanes[0]
            cand = args.candidate or first[0].get("candidate") or (lanes[1] if len(lanes) > 1 else lanes[0])
            fig = FG.per_query_delta_figure(report, base, cand, metric, args.level)
        else:
            fig = FG.forest_figure(report, metric, args.level)
    except ValueError as exc:
        raise InputError(str(exc), args.report) from None
    write_with_text([(out, figure_bytes(fig, suffix)) for out, suffix in zip(args.out, suffixes)],  # all or nothing
                    f"{args.kind} ({len(fig.rows)} points) written to {', '.join(args.out)}\n")
    return 0
