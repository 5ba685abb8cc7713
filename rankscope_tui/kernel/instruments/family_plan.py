"""A planned family: the comparisons a study commits to before its runs, tested as one
corrected family whatever their baselines (``compare --plan plan.json`` / ``--pair``).

The plan file is one JSON object written by hand (like gates.json, it has no schema key)::

    {"metrics": ["ndcg@10"],                  # optional; default: compare's --metric (ndcg@10)
     "pairs": [{"candidate": "dense", "baseline": "bm25"},
               "rrf:dense"],                  # CANDIDATE:BASELINE, as --pair writes it
     "note": "why these pairs"}               # optional free text

Every (candidate, baseline) pair times every metric is one planned row; the planned rows
are one family, adjusted by ``--correction`` (Holm by default). A row asked for beyond the
plan (another ``--candidate``, ``--pair`` or ``--metric``) is exploratory and corrected
apart, in a family of its own (``statistics.verdict.decide``).

A plan only protects against choosing comparisons after the results when it was written
before them. Like a gates file it is expected committed in git before the run:
:func:`commit_warnings` says when it is not committed, and when its last commit is later
than the runs or an earlier report were written — the committer time of
the last commit touching the file (``git log -1 --format=%ct``) against each file's
modification time.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import InputError

_KEYS = ("pairs", "metrics", "note")


@dataclass(frozen=True)
class FamilyPlan:
    """A read plan: where it came from, its (candidate, baseline) pairs and its metrics
    (() = the comparison's own metrics)."""

    source: str  # the plan file's path, or "--pair"
    pairs: tuple[tuple[str, str], ...]
    metrics: tuple[str, ...] = ()
    sha256: str | None = None

    def rows(self, metrics: Sequence[str]) -> tuple[tuple[str, str, str], ...]:
        """The planned (candidate, baseline, metric) rows: every pair on the plan's metrics,
        or on ``metrics`` when the plan names none."""
        ms = self.metrics or tuple(metrics)
        return tuple((c, b, m) for m in ms for c, b in self.pairs)

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "sha256": self.sha256, "pairs": [{"candidate": c, "baseline": b} for c, b in self.pairs],
                "metrics": list(self.metrics)}


def parse_pair(text: str, where: str = "--pair") -> tuple[str, str]:
    """``CANDIDATE:BASELINE`` as (candidate, baseline); exactly one ``:`` and two names."""
    if not isinstance(text, str) or text.count(":") != 1:
        raise InputError(f"a pair is CANDIDATE:BASELINE with one ':', got {text!r}"[:200], where)
    cand, base = (x.strip() for x in text.split(":"))
    if not cand or not base:
        raise InputError(f"a pair names a candidate and a baseline, got {text!r}"[:200], where)
    if cand == base:
        raise InputError(f"a pair compares two different lanes, got {text!r}"[:200], where)
    return cand, base


def pairs_plan(pairs: Sequence[str]) -> FamilyPlan:
    """The plan of repeated ``--pair CANDIDATE:BASELINE`` options (a pair given twice counts once)."""
    return FamilyPlan("--pair", tuple(dict.fromkeys(parse_pair(p) for p in pairs)))


def _line_of(text: str, needle: str) -> int:
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def read_plan(path: str) -> FamilyPlan:
    """The plan file at ``path`` (module doc), read strictly: anything else is an
    ``InputError`` naming the file (and the line where it can be found)."""
    from ..inputs.files import load_json, read_text, sha256_of

    try:
        text = read_text(path)
    except OSError as exc:
        raise InputError(f"cannot read the plan: {exc.strerror or exc}", path) from None
    data = load_json(text, path)
    if not isinstance(data, dict):
        raise InputError(f"a plan is a JSON object with \"pairs\", got {type(data).__name__}", path, 1)
    unknown = [k for k in data if k not in _KEYS]
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r} (a plan holds {', '.join(_KEYS)})"[:200], path,
                         _line_of(text, f'"{unknown[0]}"'))
    if "note" in data and not isinstance(data["note"], str):
        raise InputError("note must be a string", path, _line_of(text, '"note"'))
    raw = data.get("pairs")
    if not isinstance(raw, list) or not raw:
        raise InputError("\"pairs\" must be a non-empty list of {\"candidate\", \"baseline\"} objects or "
                         "\"CANDIDATE:BASELINE\" strings", path, _line_of(text, '"pairs"'))
    pairs: list[tuple[str, str]] = []
    for i, item in enumerate(raw):
        where = f"{path}: pairs[{i}]"
        if isinstance(item, str):
            pair = parse_pair(item, where)
        elif isinstance(item, dict):
            extra = [k for k in item if k not in ("candidate", "baseline")]
            if extra:
                raise InputError(f"unknown key {extra[0]!r} (a pair holds candidate and baseline)"[:200], where)
            c, b = item.get("candidate"), item.get("baseline")
            if not isinstance(c, str) or not isinstance(b, str) or not c or not b:
                raise InputError("a pair needs \"candidate\" and \"baseline\" lane names (strings)", where)
            if c == b:
                raise InputError(f"a pair compares two different lanes, got {c!r} twice"[:200], where)
            pair = (c, b)
        else:
            raise InputError(f"a pair is an object or a \"CANDIDATE:BASELINE\" string, got {item!r}"[:200], where)
        if pair in pairs:
            raise InputError(f"the pair {pair[0]}:{pair[1]} is listed twice"[:200], where)
        pairs.append(pair)
    metrics = data.get("metrics", [])
    if isinstance(metrics, str):
        metrics = [metrics]
    if not isinstance(metrics, list) or not all(isinstance(m, str) and m for m in metrics):
        raise InputError("\"metrics\" must be a list of metric names", path, _line_of(text, '"metrics"'))
    from ..settings import canonical_keys

    canonical_keys(metrics, path)  # an unknown measure is named with the plan file
    return FamilyPlan(path, tuple(pairs), tuple(metrics), sha256_of(path))


# --------------------------------------------------------------------------- committed before the run?


def _git(path: str, *args: str) -> subprocess.CompletedProcess[str] | None:
    d = os.path.dirname(os.path.abspath(path))
    try:
        return subprocess.run(["git", "-C", d, *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None


def commit_time(path: str) -> tuple[str, float | None]:
    """(state, committer time of the last commit touching ``path``): state is
    ``committed``, ``modified`` (changed since that commit), ``untracked``, ``no-git``
    (not in a git work tree, or git not found)."""
    inside = _git(path, "rev-parse", "--is-inside-work-tree")
    if inside is None or inside.returncode != 0 or inside.stdout.strip() != "true":
        return "no-git", None
    full = os.path.abspath(path)
    tracked = _git(path, "ls-files", "--error-unmatch", "--", full)
    if tracked is None or tracked.returncode != 0:
        return "untracked", None
    log = _git(path, "log", "-1", "--format=%ct", "--", full)
    when = float(log.stdout.strip()) if log is not None and log.returncode == 0 and log.stdout.strip().isdigit() else None
    if when is None:
        return "untracked", None  # added to the index, never committed
    diff = _git(path, "diff", "--quiet", "HEAD", "--", full)
    return ("modified" if diff is None or diff.returncode != 0 else "committed"), when


def _utc(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


def commit_warnings(path: str, what: str, inputs: Sequence[str] = (), report: str | None = None) -> list[str]:
    """What a pre-registered file (``what``: "plan", "gates file") fails to show: that it is
    committed, and that its last commit came before the inputs and the report were written.

    Compared: the committer time of the last commit touching ``path`` against the
    modification time of each of ``inputs`` (the runs or per-query tables) and of ``report`` when it
    exists (an earlier report it may have been adapted to). Each warning names the times."""
    state, when = commit_time(path)
    if state == "no-git":
        return [f"the {what} {path} is not in a git repository: nothing shows it was written before the run "
                "(commit it before running)"]
    if state == "untracked":
        return [f"the {what} {path} is not committed in git: nothing shows it was written before the run "
                "(commit it before running)"]
    out = []
    if state == "modified":
        out.append(f"the {what} {path} has changes not committed in git: the committed version is not the one used")
    assert when is not None
    return out + committed_after(path, what, when, inputs, report)


def committed_after(path: str, what: str, when: float | None, inputs: Sequence[str] = (),
                    report: str | None = None) -> list[str]:
    """The warning of :func:`commit_warnings` for a last commit (committer time ``when``)
    later than an input's or the report's modification time; nothing when ``when`` is None."""
    if when is None:
        return []
    out = []
    later = []
    if report and os.path.exists(report):
        t = os.stat(report).st_mtime
        if when > t:
            later.append(f"the report {report} (written {_utc(t)})")
    olds = [(p, os.stat(p).st_mtime) for p in inputs if p and os.path.isfile(p)]
    olds = [(p, t) for p, t in olds if when > t]
    if olds:
        p, t = max(olds, key=lambda x: x[1])
        n = len(olds)
        later.append(f"{'the input' if n == 1 else f'{n} inputs, the latest'} {p} (written {_utc(t)})")
    if later:
        out.append(f"the {what} {path} was last committed {_utc(when)}, after " + " and after ".join(later)
                   + ": it may have been written after the results (compared: the last commit's committer time "
                   "with the files' modification times)")
    return out


def family_settings(plan_path: str | None, pairs: Sequence[str] | Sequence[tuple[str, str]],
                    metrics: Sequence[str]) -> dict[str, Any]:
    """The ``CompareSettings`` fields of a planned call (``{}`` without a plan or pairs).

    ``plan_path``: the plan file; its pairs on its metrics (or on ``metrics``) are the
    family, and ``pairs`` are asked for beyond it (exploratory). Without a file, ``pairs``
    are the plan (source ``--pair``) on ``metrics``. ``metrics`` () means the default, or
    the plan file's metrics when it names some. A pair is ``CANDIDATE:BASELINE`` or a
    (candidate, baseline) tuple."""
    from ..settings import DEFAULT_METRIC

    asked = tuple(dict.fromkeys(parse_pair(p) if isinstance(p, str) else _pair_tuple(p) for p in pairs))
    if plan_path is None and not asked:
        return {}
    if plan_path is None:
        plan = FamilyPlan("--pair", asked)
        asked = ()
    else:
        plan = read_plan(plan_path)
    ms = tuple(metrics) or plan.metrics or (DEFAULT_METRIC,)
    return {"metrics": ms, "planned": plan.rows(ms), "plan_source": plan.source,
            "pairs": tuple(p for p in asked if p not in plan.pairs)}


def _pair_tuple(p: Any) -> tuple[str, str]:
    if not (isinstance(p, (tuple, list)) and len(p) == 2 and all(isinstance(x, str) and x for x in p)):
        raise InputError(f"a pair is 'CANDIDATE:BASELINE' or (candidate, baseline), got {p!r}"[:200], "pairs")
    if p[0] == p[1]:
        raise InputError(f"a pair compares two different lanes, got {p!r}"[:200], "pairs")
    return (p[0], p[1])
