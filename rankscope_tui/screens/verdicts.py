"""8 Verdicts: pre-registered rules judged on the point and on the interval; edit a
threshold in place and watch the two columns disagree (lesson 13)."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from ..kernel import git_state, judge_rule, read_rules, tally_rules
from ..kernel.inputs.files import sha256_of
from ..render.rules import AGAINST_NOTE
from ..state import error_line
from ..widgets import fmt
from ..widgets.dialogs import ValueDialog
from ..widgets.safe import escape
from ..widgets.tables import PlainTable
from .base import ViewScreen

if TYPE_CHECKING:
    from ..kernel.instruments.rules import RuleResult


class VerdictsScreen(ViewScreen):
    VIEW = "verdicts"
    HELP = """# 8 Verdicts

**Lesson 13: pre-registered verdicts.** A rule is a dotted path into report.json, `>=` or
`<=`, and a threshold — or `against` a second path. It passes **on the point** when the
value clears the threshold and **on the interval** when the conservative end of its
interval does (`low` for `>=`). An `against` rule passes on the interval only when the
two intervals do not overlap, and is *undecided* when they touch or overlap.

Enter (or `t`) edits the highlighted rule's threshold in place; `r` reads the file's rules
again. The head shows the file's sha256 and warns when git does not hold it unmodified:
write the rules before the run and commit them.
"""
    BINDINGS = [
        Binding("t", "edit", "Edit threshold", id="verdicts.edit"),
        Binding("r", "restore", "Restore", id="verdicts.restore"),
    ]

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.rules: list = []
        self.file_rules: list = []
        self.results: list = []
        self.gates_path: str | None = None
        self.load_error: str | None = None
        self.sha: str | None = None
        self.git_state: str | None = None  # 'untracked' | 'modified' | None, as `rankscope verdict` reports it

    def compose_body(self) -> ComposeResult:
        with Vertical(id="vd-main"):
            yield Static(self.waiting("computing the report"), id="vd-head", classes="panel")
            yield PlainTable(id="vd-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="vd-note", classes="caption")

    def _load_rules(self) -> None:
        """Read and parse the gates file (the kernel's parser); its sha256 and git state
        follow in a worker."""
        path = self.options.gates
        self.gates_path = path
        if not path:
            return
        try:
            self.file_rules = read_rules(path)
            self.rules = list(self.file_rules)
            self.load_error = None
        except Exception as exc:
            self.load_error = error_line(exc)
            self.app.show_error(exc)
            return
        self.check_file(path)

    @work(thread=True, exclusive=True, group="verdicts-file", exit_on_error=False, description="fingerprinting the gates file")
    def check_file(self, path: str) -> None:
        """sha256 of the gates file, and whether git tracks it unmodified (as `rankscope verdict` says)."""
        sha, state = sha256_of(path), git_state(path)
        self.app.call_from_thread(self._file_checked, path, sha, state)

    def _file_checked(self, path: str, sha: str, state: str | None) -> None:
        if path != self.gates_path:
            return
        self.sha, self.git_state = sha, state
        if self.report is not None and self.rules:
            self._judge()

    def refresh_view(self) -> None:
        head = self.query_one("#vd-head", Static)
        if not self.file_rules and self.load_error is None:
            self._load_rules()
        if not self.options.gates:
            head.update("No rules: give `--gates gates.json` (a list of {path, op, threshold | against}).")
            return
        if self.load_error:
            head.update(self.load_error)
            return
        if self.report is None:
            head.update(self.waiting("computing the report"))
            return
        self._judge()

    def layout_changed(self) -> None:
        if self.report is not None and self.rules:
            self._judge()

    def _judge(self) -> None:
        self.state.exploratory.edit_rules(self.rules, self.file_rules)
        report = self.report
        if report is None:  # judged when the report arrives
            return
        results: list[RuleResult | None] = []
        errors: list[str] = []
        for rule in self.rules:
            try:
                # the gates file's path: an error names the rule's line in it, as the CLI's does
                results.append(judge_rule(rule, report, self.gates_path or "--gates"))
            except Exception as exc:
                results.append(None)
                errors.append(f"{rule.describe()}: {error_line(exc)}")
        self.results = results
        table = self.query_one("#vd-table", DataTable)
        cursor = table.cursor_row
        table.clear(columns=True)
        # narrow: the rule's text goes last, so the numbers and both decisions stay on screen
        order = [0, 2, 3, 4, 5, 6, 7, 1] if self.narrow else list(range(8))
        names = ["#", "rule", "value", "interval", "against", "point", "interval verdict", ""]
        table.add_columns(*[names[j] for j in order])
        for i, (rule, res) in enumerate(zip(self.rules, results)):
            edited = "" if i < len(self.file_rules) and rule == self.file_rules[i] else " (edited)"
            if res is None:
                cells = [str(i + 1), rule.describe() + edited, "—", "—", "—", "error", "error", ""]
                table.add_row(*[cells[j] for j in order], key=str(i))
                continue
            other = ""
            if res.other is not None:
                o = res.other
                other = f"{fmt.num(o.get('value'))} {fmt.interval(o.get('low'), o.get('high'))}"
            disagree = "≠ disagree" if res.point != res.interval else ""
            cells = [str(i + 1), rule.describe() + edited, fmt.num(res.value), fmt.interval(res.low, res.high) or "—",
                     other or "—", self._verdict(res.point), self._verdict(res.interval), disagree]
            table.add_row(*[cells[j] for j in order], key=str(i))
        if cursor is not None and 0 <= cursor < table.row_count:
            table.move_cursor(row=cursor)
        n = tally_rules(results)
        head = [f"[b]{escape(os.path.basename(self.gates_path or ''))}[/] ({len(self.rules)} rules)  sha256 "
                f"{self.sha or '…'}",
                escape(n.summary("interval", False)) + f" · fail on the point: [b]{n.fail_on_point}[/] · "
                f"point and interval disagree: [b]{n.disagree}[/]"]
        if self.state.synthetic:
            head[0] += "  [reverse] SYNTHETIC [/]"
        if self.git_state:
            head.append(f"[b $warning]⚠ the gates file is {self.git_state} in git[/]: write the rules before the run "
                        f"and commit them")
        if any(i >= len(self.file_rules) or r != self.file_rules[i] for i, r in enumerate(self.rules)):
            head.append("[$warning]edited here: these rules are not the file's (r restores them)[/]")
        self.query_one("#vd-head", Static).update("\n".join(head))
        notes = []
        if self.narrow:  # the rule column is last (off to the right): the rules by number here
            notes += [f"[b]{i + 1}[/] {escape(r.describe())}" for i, r in enumerate(self.rules)] + [""]
        if any(r.against for r in self.rules):
            notes.append(AGAINST_NOTE)
        notes.append("Intervals are those of the report (Wilson for hit@k, percentile bootstrap otherwise).")
        notes += [escape(f"rule {i + 1}: no interval: {res.interval_reason}") for i, res in enumerate(results)
                  if res is not None and res.interval_reason and res.low is None]
        notes += [escape(e) for e in errors]
        self.query_one("#vd-note", Static).update("\n".join(notes))

    def _verdict(self, v: str) -> Text:
        var = {"pass": "success", "fail": "error", "undecided": "warning"}.get(v)
        colour = self.app.theme_variables.get(var, "") if var else ""
        return Text(v, style=f"bold {colour}".strip())

    @on(DataTable.RowSelected, "#vd-table")
    def _selected(self) -> None:
        self.action_edit()

    def action_edit(self) -> None:
        table = self.query_one("#vd-table", DataTable)
        if not self.rules or table.cursor_row is None or not (0 <= table.cursor_row < len(self.rules)):
            return
        i = table.cursor_row
        rule = self.rules[i]
        if rule.against is not None:
            self.notify("an 'against' rule has no threshold to edit", severity="warning")
            return

        def done(value: float | None) -> None:
            if value is not None:
                self.set_threshold(i, value)

        self.app.push_screen(ValueDialog(f"Threshold for {rule.path} {rule.op}", rule.threshold), done)

    def set_threshold(self, i: int, value: float) -> None:
        self.rules[i] = replace(self.rules[i], threshold=float(value))
        self._judge()

    def action_restore(self) -> None:
        """Back to the file's rules, read again (with a fresh sha256 and git state)."""
        self.file_rules, self.rules = [], []
        self.state.exploratory.edit_rules(self.rules, self.file_rules)
        self.load_error, self.sha, self.git_state = None, None, None
        self.refresh_view()
