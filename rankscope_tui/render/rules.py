"""What ``verdict`` prints: pre-registered rules judged on a report (``kernel.rules.RuleVerdicts``)
as text — the gates file's fingerprint, both columns per rule, the deciding column."""

from __future__ import annotations

from ..kernel.rules import AGAINST_NOTE
from .escaping import terminal_safe


def render_verdict(v) -> str:
    results, failures = v.results, v.failures
    lines = [f"gates {v.gates} sha256 {v.sha256}\n"]
    if v.git:
        lines.append(f"warning: the gates file is {v.git} in git; write the rules before the run and commit them\n")
    width = max(len(r.rule.describe()) for r in results)
    lines.append(f"{'rule'.ljust(width)}  {'point':9}  {'interval':9}\n")
    for r in results:
        lines.append(f"{r.rule.describe().ljust(width)}  {r.point:9}  {r.interval:9}\n")
    if any(r.rule.against for r in results):
        lines.append(AGAINST_NOTE + "\n")
    lines.append(f"deciding column: {v.on}{' (strict: undecided fails)' if v.strict else ''}; "
                 f"{len(failures)} of {len(results)} rules fail\n")
    return terminal_safe("".join(lines))
