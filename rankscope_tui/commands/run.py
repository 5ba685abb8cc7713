"""`rankscope run`: a TREC run made by asking a retriever (a command or a local URL) per query
(``kernel.inputs.retrieve``), written with its provenance sidecar (``kernel.report.run_file``)."""

from __future__ import annotations

import sys

#: ``--k``'s default: the depth most runs are evaluated at (trec_eval's default is 1000; a
#: retriever asked per query is usually asked for fewer).
DEFAULT_K = 100


def register(sub) -> None:
    p = sub.add_parser("run", help="make a TREC run by asking a command or a local HTTP endpoint once per query")
    p.add_argument("--queries", required=True, metavar="FILE", help="the queries, 'qid<TAB>text' per line")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--command", metavar="'CMD {query}'",
                   help="a command run per query without a shell ({query}, {qid} replaced inside its words); it "
                        "prints 'DOC SCORE' per line, or JSON as --url answers")
    g.add_argument("--url", metavar="'http://127.0.0.1:PORT/search?q={query}'",
                   help="a URL asked per query (GET; {query}, {qid} percent-encoded); it answers JSON "
                        "[[doc, score], ...] or {\"hits\": [{\"id\": doc, \"score\": s}, ...]}")
    p.add_argument("--k", type=int, default=DEFAULT_K, metavar="N", help=f"hits kept per query (default {DEFAULT_K})")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="the longest a query may take (default: no limit)")
    p.add_argument("--name", default=None, metavar="NAME", help="the run's name, its TREC tag (default: from --out)")
    p.add_argument("--allow-remote", action="store_true",
                   help="let --url name a host other than this machine (default: localhost and loopback only)")
    p.add_argument("--out", required=True, metavar="RUN", help="the TREC run; RUN.provenance.json gets the provenance "
                                                               "and the seconds per query")
    p.set_defaults(func=run)


def _version() -> str:
    # the package is loaded before any command runs; importing it from here would be an import circle
    return str(getattr(sys.modules.get("rankscope_tui"), "__version__", "0+unknown"))


def run(args) -> int:
    import math

    from ..kernel import retrieve, write_run
    from ..kernel.errors import InputError
    from ..kernel.inputs.retrieve import command_ask, read_queries, url_ask
    from ..kernel.inputs.rows import check_lane_name, lane_name_from_path
    from ..kernel.report.run_file import check_run_outputs

    if args.k < 1:
        raise InputError(f"must be at least 1, not {args.k}", "--k")
    if args.timeout is not None and not (math.isfinite(args.timeout) and args.timeout > 0):
        raise InputError(f"must be a positive number of seconds, not {args.timeout:g}", "--timeout")
    if args.allow_remote and not args.url:
        raise InputError("only applies to --url", "--allow-remote")
    name = args.name if args.name is not None else lane_name_from_path(args.out)
    check_lane_name(name, "--name" if args.name is not None else args.out, "name the run with --name")
    check_run_outputs(args.out, [args.queries])  # before any query is asked
    queries = read_queries(args.queries)
    if args.command is not None:
        ask, retriever, kind = command_ask(args.command, args.timeout), args.command, "command"
    else:
        ask, retriever, kind = url_ask(args.url, args.timeout, args.allow_remote), args.url, "url"
    result = retrieve(ask, queries, args.k, name, retriever, kind, _version())
    paths = write_run(result, args.out, [args.queries])
    hits = sum(len(a.hits) for a in result.answers)
    sys.stderr.write(f"wrote {hits} hits for {len(result.answers)} queries to {paths[0]} (provenance and seconds per "
                     f"query: {paths[1]})\n")
    return 0
