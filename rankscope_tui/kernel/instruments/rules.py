"""Pre-registered rules over a report (SPEC §8, lesson 13).

A rule is ``{"path": "lanes.rrf.doc.hit@5", "op": ">=", "threshold": 0.6}`` or
``{"path": ..., "op": ">=", "against": "lanes.bm25.doc.hit@5"}``. A path is dotted
keys into report.json (``\\.`` escapes a dot inside a key) ending at a metric object
holding ``value``, ``low`` and ``high``, or at a scalar number of the report (a count
or a share: ``summary.positives``, ``summary.unique_share.bm25.share``,
``summary.judged_queries_missing_from_any_lane.missing_from_any``).

- threshold rule: passes on the point when value op threshold; on the interval when
  the conservative end does (``low`` for >=, ``high`` for <=); undecided without an interval.
- against rule: on the point, value_A op value_B. On the interval (for >=) it passes
  iff low_A > high_B, fails iff high_A < low_B, and is undecided when the intervals
  touch or overlap (mirrored for <=). Non-overlap is a conservative, unpaired screen.
- a rule on a scalar (either side) has no interval: it is judged on the point, its
  interval column reads "not applicable", and the point decides it in either column.
- an undefined value (``null`` in the report, e.g. a share over no positives) leaves
  the rule undecided, with the report's reason.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..inputs.files import as_finite_number, load_json

SCHEMA = "rankscope.verdict/1"
PASS, FAIL, UNDECIDED = "pass", "fail", "undecided"
NOT_APPLICABLE = "not applicable"  # the interval column of a rule on a scalar (no interval)
OPS = (">=", "<=")
AGAINST_NOTE = "interval non-overlap is a conservative, unpaired screen; use compare for a paired test"
#: Said under a table holding a rule on a count or share (its interval column is NOT_APPLICABLE).
SCALAR_NOTE = "a rule on a count or share (no interval) is judged on the point in either column"


@dataclass(frozen=True)
class Rule:
    path: str
    op: str
    threshold: float | None = None
    against: str | None = None
    line: int = 0

    def describe(self) -> str:
        rhs = f"{self.threshold:g}" if self.against is None else self.against
        return f"{self.path} {self.op} {rhs}"


@dataclass(frozen=True)
class RuleResult:
    rule: Rule
    value: float | None
    low: float | None
    high: float | None
    other: dict[str, Any] | None  # the against side: value, low, high (and kind, reason)
    point: str
    interval: str  # pass | fail | undecided | not applicable (a scalar rule)
    kind: str = "metric"  # "metric" (value with an interval) or "scalar" (a count or share)
    reason: str | None = None  # why the value is undefined, from the report
    interval_reason: str | None = None  # why the value has no interval, from the report

    @property
    def deciding(self) -> str:
        """The column that decides on the interval: the point for a scalar rule."""
        return self.point if self.interval == NOT_APPLICABLE else self.interval

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"path": self.rule.path, "op": self.rule.op, "kind": self.kind, "value": self.value, "low": self.low,
             "high": self.high, "point": self.point, "interval": self.interval}
        if self.reason:
            d["value_reason"] = self.reason
        if self.interval_reason:
            d["interval_reason"] = self.interval_reason
        if self.rule.against is None:
            d["threshold"] = self.rule.threshold
        else:
            d["against"] = self.rule.against
            d["against_value"] = self.other
        return d


def split_path(path: str) -> list[str]:
    """Dotted keys; ``\\.`` is a literal dot inside a key."""
    keys, cur, i = [], [], 0
    while i < len(path):
        ch = path[i]
        if ch == "\\" and i + 1 < len(path) and path[i + 1] == ".":
            cur.append(".")
            i += 2
            continue
        if ch == ".":
            keys.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    keys.append("".join(cur))
    return keys


def parse_rules(text: str, path: str) -> list[Rule]:
    """Parse and validate a gates file; every problem names the file and line."""
    obj = load_json(text, path)
    if isinstance(obj, dict) and "rules" in obj:
        obj = obj["rules"]
    if not isinstance(obj, list) or not obj:
        raise InputError("a gates file is a non-empty JSON list of rules", path, 1)
    starts = _object_lines(text)
    rules = []
    for i, item in enumerate(obj):
        line = starts[i] if i < len(starts) else 1
        if not isinstance(item, dict):
            raise InputError(f"rule {i + 1} is not an object", path, line)
        unknown = set(item) - {"path", "op", "threshold", "against", "note", "name"}
        if unknown:
            raise InputError(f"rule {i + 1} has unknown keys: {', '.join(sorted(unknown))}", path, line)
        p, op = item.get("path"), item.get("op")
        if not isinstance(p, str) or not p:
            raise InputError(f"rule {i + 1} needs a string 'path'", path, line)
        if op not in OPS:
            raise InputError(f"rule {i + 1}: 'op' must be '>=' or '<=', not {op!r}", path, line)
        has_t, has_a = "threshold" in item, "against" in item
        if has_t == has_a:
            raise InputError(f"rule {i + 1} needs exactly one of 'threshold' or 'against'", path, line)
        if has_t:
            t = as_finite_number(item["threshold"], f"rule {i + 1}: 'threshold'", path, line)
            rules.append(Rule(p, op, threshold=t, line=line))
        else:
            a = item["against"]
            if not isinstance(a, str) or not a:
                raise InputError(f"rule {i + 1}: 'against' must be a path string", path, line)
            rules.append(Rule(p, op, against=a, line=line))
    return rules


def read_rules(path: str) -> list[Rule]:
    """The rules of the gates file at ``path`` (read as every input is read, then ``parse_rules``)."""
    from ..inputs.files import read_text

    return parse_rules(read_text(path), path)


@dataclass(frozen=True)
class Tally:
    """How a set of judged rules came out (rules that could not be judged are left out)."""

    fail_on_point: int
    fail_on_interval: int
    undecided_on_interval: int
    disagree: int  # point and interval verdicts differ
    undecided_on_point: int = 0
    errors: int = 0  # rules that could not be judged (a path the report lacks)
    rules: int = 0  # every rule, judged or not

    def summary(self, on: str, strict: bool) -> str:
        """The one line the CLI and the Verdicts view print: every rule is counted as failing,
        undecided, passing or not judged on the deciding column, and what decides the exit
        status is said (undecided fails only with --strict; a rule not judged is an error)."""
        fail = self.fail_on_interval if on == "interval" else self.fail_on_point
        undecided = self.undecided_on_interval if on == "interval" else self.undecided_on_point
        passed = self.rules - self.errors - fail - undecided
        parts = [f"{fail} fail", f"{undecided} undecided" + (" (counted as failing: --strict)" if strict and undecided
                                                            else " (not failing without --strict)" if undecided else ""),
                 f"{passed} pass"]
        if self.errors:
            parts.append(f"{self.errors} could not be judged")
        return f"{self.rules} rule{'s' if self.rules != 1 else ''} on the {on}: " + ", ".join(parts)


def tally(results: list[RuleResult | None]) -> Tally:
    done = [r for r in results if r is not None]
    return Tally(
        fail_on_point=sum(1 for r in done if r.point == FAIL),
        fail_on_interval=sum(1 for r in done if r.deciding == FAIL),
        undecided_on_interval=sum(1 for r in done if r.deciding == UNDECIDED),
        disagree=sum(1 for r in done if r.point != r.deciding),
        undecided_on_point=sum(1 for r in done if r.point == UNDECIDED),
        errors=len(results) - len(done),
        rules=len(results),
    )


def _object_lines(text: str) -> list[int]:
    """Line on which each element of the top-level list starts (for error messages)."""
    lines, depth, line = [], 0, 1
    in_str = esc = False
    expect = False  # at depth 1, the next non-blank character starts an element
    for ch in text:
        if ch == "\n":
            line += 1
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if expect and not ch.isspace() and ch not in ",]":
            lines.append(line)
            expect = False
        if ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth == 1 and ch == "[":
                expect = True
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 1:
            expect = True
    return lines


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def lookup(report: dict[str, Any], path: str, where: tuple[str, int] | None = None) -> dict[str, Any]:
    """What ``path`` names, as ``{"kind", "value", "low", "high", "reason"}``: a metric
    object (value with its interval) or a scalar number of the report (a count, a
    share; no interval). ``where`` = (gates file, rule line) for error messages."""
    file, line = where if where else ("--gates", None)
    node = report
    from ..measures.names import resolve_metric_path

    keys = resolve_metric_path(report, split_path(path))  # metric names as other tools write them
    for i, key in enumerate(keys):
        if not isinstance(node, dict) or key not in node:
            if isinstance(node, dict) and _holds_metrics(node):
                raise InputError(_not_evaluated(report, path, ".".join(keys[i:])), file, line)
            raise InputError(f"path {path!r} not found in the report (missing key {key!r})", file, line)
        parent, node = node, node[key]
    if _number(node) or node is None:
        why = parent.get(f"{key}_reason")  # e.g. a unique share with one lane: not meaningful
        reason = why if isinstance(why, str) else ("undefined in the report" if node is None else None)
        return {"kind": "scalar", "value": node, "low": None, "high": None, "reason": reason}
    if not isinstance(node, dict) or "value" not in node:
        hint = ""
        if isinstance(node, dict):
            nums = [k for k, v in node.items() if _number(v)]
            hint = f" (its numbers: {', '.join(nums)})" if nums else ""
        raise InputError(f"path {path!r} does not end at a metric (an object with value, low, high) or a number{hint}",
                         file, line)
    for k in ("value", "low", "high"):
        v = node.get(k)
        if v is not None and not _number(v):
            raise InputError(f"path {path!r}: {k} is not a number in the report", file, line)
    reason = node.get("reason") or node.get("value_reason") if node.get("value") is None else None
    # why a bound is missing, as the report says it (e.g. "resampling skipped (resamples = 0)")
    bound = node.get("low_reason") or node.get("high_reason")
    return {"kind": "metric", "value": node.get("value"), "low": node.get("low"), "high": node.get("high"),
            "reason": reason if isinstance(reason, str) else None,
            "interval_reason": bound if isinstance(bound, str) else None}


def _holds_metrics(node: dict[str, Any]) -> bool:
    """A report object whose values are metric cells (a lane's level: ``{"ndcg@10": {...}}``)."""
    return bool(node) and all(isinstance(v, dict) and "value" in v for v in node.values())


def _not_evaluated(report: dict[str, Any], path: str, name: str) -> str:
    """Why a rule's measure is not in the report: which measure, which the report holds and
    how the report was made (its lanes or per-query tables, its --metrics)."""
    from ..measures.names import canonical_key

    inputs = report.get("inputs") or {}
    metrics = list((inputs.get("settings") or {}).get("metrics") or [])
    lanes = list(inputs.get("lanes") or {})
    made = (f"evaluate on lanes {', '.join(lanes)}" if lanes else "evaluate --per-query-in (per-query tables)")
    try:
        key = canonical_key(name)
        fix = f"evaluate again with {key} in --metrics"
        said = name if key == name else f"{name} ({key})"
    except InputError as exc:  # not a name the resolver takes: say why
        said = name
        fix = str(exc).split(": ", 1)[-1]
    return (f"path {path!r}: measure {said} was not evaluated in this report (made by {made} with --metrics "
            f"{','.join(metrics) or 'the default set'}); {fix}")


def _cmp(a: float, op: str, b: float) -> bool:
    return a >= b if op == ">=" else a <= b


def judge(rule: Rule, report: dict[str, Any], gates_path: str = "--gates") -> RuleResult:
    where = (gates_path, rule.line)
    m = lookup(report, rule.path, where)
    v, lo, hi = m["value"], m["low"], m["high"]
    if rule.against is None:
        t = rule.threshold
        assert t is not None  # parse_rules gives a rule without ``against`` a threshold
        point = UNDECIDED if v is None or m["reason"] else (PASS if _cmp(v, rule.op, t) else FAIL)
        if m["kind"] == "scalar":
            interval = NOT_APPLICABLE
        else:
            end = lo if rule.op == ">=" else hi
            interval = UNDECIDED if end is None else (PASS if _cmp(end, rule.op, t) else FAIL)
        return RuleResult(rule, v, lo, hi, None, point, interval, m["kind"], m["reason"], m.get("interval_reason"))
    o = lookup(report, rule.against, where)
    ov, olo, ohi = o["value"], o["low"], o["high"]
    undefined = v is None or ov is None or m["reason"] or o["reason"]
    point = UNDECIDED if undefined else (PASS if _cmp(v, rule.op, ov) else FAIL)
    if "scalar" in (m["kind"], o["kind"]):
        interval = NOT_APPLICABLE
    elif None in (lo, hi, olo, ohi):
        interval = UNDECIDED
    elif rule.op == ">=":
        interval = PASS if lo > ohi else FAIL if hi < olo else UNDECIDED
    else:
        interval = PASS if hi < olo else FAIL if lo > ohi else UNDECIDED
    other = {"value": ov, "low": olo, "high": ohi, "kind": o["kind"]}
    if o["reason"]:
        other["reason"] = o["reason"]
    kind = "scalar" if "scalar" in (m["kind"], o["kind"]) else "metric"
    return RuleResult(rule, v, lo, hi, other, point, interval, kind, m["reason"],
                      m.get("interval_reason") or o.get("interval_reason"))


def failed(results: list[RuleResult], on: str, strict: bool) -> list[RuleResult]:
    bad = {FAIL, UNDECIDED} if strict else {FAIL}
    return [r for r in results if (r.deciding if on == "interval" else r.point) in bad]


def git_state(path: str) -> str | None:
    """'untracked', 'modified' or None (committed, or not in a git work tree)."""
    d = os.path.dirname(os.path.abspath(path))
    try:
        inside = subprocess.run(["git", "-C", d, "rev-parse", "--is-inside-work-tree"], capture_output=True, text=True, timeout=5)
        if inside.returncode != 0:
            return None
        tracked = subprocess.run(["git", "-C", d, "ls-files", "--error-unmatch", os.path.abspath(path)], capture_output=True, timeout=5)
        if tracked.returncode != 0:
            return "untracked"
        diff = subprocess.run(["git", "-C", d, "diff", "--quiet", "HEAD", "--", os.path.abspath(path)], capture_output=True, timeout=5)
        return "modified" if diff.returncode != 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


@dataclass(frozen=True)
class RuleVerdicts:
    """One ``verdict`` call: every rule judged, the deciding column and the gates file's
    fingerprint (sha256, git state); ``as_dict()`` is the ``verdict --out`` payload."""

    report: str  # the report's path, as given
    gates: str  # the gates file's path, as given
    sha256: str
    git: str | None  # 'untracked' | 'modified' | None
    on: str
    strict: bool
    results: tuple[RuleResult, ...]
    #: rules that could not be judged: (rule, the one-line error naming the gates file's line)
    errors: tuple[tuple[Rule, str], ...] = ()

    @property
    def failures(self) -> list[RuleResult]:
        return failed(list(self.results), self.on, self.strict)

    @property
    def tally(self) -> Tally:
        return tally([*self.results, *([None] * len(self.errors))])

    def as_dict(self) -> dict[str, Any]:
        failures = self.failures
        return {"schema": SCHEMA, "report": self.report, "gates": {"path": self.gates, "sha256": self.sha256, "git": self.git},
                "on": self.on, "strict": self.strict, "rules": [r.as_dict() for r in self.results],
                "failed": len(failures), "passed": not failures and not self.errors,
                "undecided": self.tally.undecided_on_interval if self.on == "interval" else self.tally.undecided_on_point,
                "not_judged": [{"rule": r.describe(), "line": r.line, "error": e} for r, e in self.errors],
                "summary": self.tally.summary(self.on, self.strict)}


def judge_gates(report: dict[str, Any], report_path: str, gates_path: str, *, on: str = "interval", strict: bool = False) -> RuleVerdicts:
    """The rules entry point: parse the gates file, judge every rule on ``report``, fingerprint the file."""
    from ..inputs.files import read_text, sha256_of

    rules = parse_rules(read_text(gates_path), gates_path)
    results: list[RuleResult] = []
    errors: list[tuple[Rule, str]] = []
    for r in rules:  # every rule is judged: one the report cannot answer is listed, not the end of the call
        try:
            results.append(judge(r, report, gates_path))
        except InputError as exc:
            errors.append((r, str(exc)))
    return RuleVerdicts(report_path, gates_path, sha256_of(gates_path), git_state(gates_path), on, strict,
                        tuple(results), tuple(errors))
