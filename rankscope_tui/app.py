"""The rankscope dashboard: one Textual mode per instrument, over one kernel Workspace.

Invariants (see tests/test_tui.py):
- what the dashboard knows is ``self.state`` (``state.DashboardState``: the options it was
  started with, the base workspace, the report or its error); screens read it and reach the
  app's actions (``open_query``, ``show_error``) through ``self.app``, never by import;
- screens ask the kernel and render; no number is computed here;
- CPU-heavy work runs in thread workers (``exit_on_error=False``); workers never touch
  widgets, they hand results back with ``call_from_thread``; a worker that raises shows
  the error dialog and the app keeps running;
- the export writes exactly what ``rankscope evaluate --out`` writes for the same inputs
  and settings: the same kernel function on a workspace loaded the same way, the same
  ``dumps_strict`` and ``write_atomic``.
"""

from __future__ import annotations

import os

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.reactive import reactive
from textual.worker import Worker, WorkerState

from .screens import VIEWS, view_screens
from .screens.palette import RankscopeCommands
from .state import DashboardState, error_line, evaluate, load_workspace
from .widgets.dialogs import ErrorDialog, ExportDialog, ExportRequest, HelpScreen, SearchDialog
from .widgets.safe import escape as safe_escape, escape_control


class RankscopeApp(App):
    """``rankscope tui``: nine views, switched with 1–9."""

    CSS_PATH = "app.tcss"
    TITLE = "rankscope"
    MODES = view_screens()
    DEFAULT_MODE = "overview"
    COMMANDS = App.COMMANDS | {RankscopeCommands}
    BINDINGS = [
        *[
            Binding(str(i), f"app.switch_mode('{mode}')", title, show=False, id=f"view.{mode}",
                    tooltip=f"Switch to the {title} view")
            for i, (mode, title) in enumerate(VIEWS, 1)
        ],
        Binding("e", "export", "Export", id="app.export", tooltip="Write report.json (same as evaluate --out)"),
        Binding("slash", "search", "Find query", id="app.search", tooltip="Go to a query by qid or text"),
        Binding("question_mark", "help", "Help", id="app.help", tooltip="What this view teaches, and its keys"),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]

    data_version: reactive[int] = reactive(0, init=False)
    report_version: reactive[int] = reactive(0, init=False)
    qid: reactive[str | None] = reactive(None, init=False)

    def __init__(self, state: DashboardState | None = None, **kw) -> None:
        """``state``: the options the dashboard was started with; with no base workspace, the
        inputs are loaded in a worker on mount (and the report computed after them). A state
        that carries a workspace and its report (tests share them) must hold
        ``evaluate(options, workspace)`` as the report."""
        super().__init__(**kw)
        self.state = state if state is not None else DashboardState()
        # the base workspace is loaded exactly as `evaluate` loads it and the report is computed
        # on it (derived lanes included); the screens read ``ws``, its snapshot
        # (``Workspace.snapshot``: the lanes present then, the same cached numbers).
        self.ws = None
        self.lane_names: list[str] = []
        self.input_lane_names: list[str] = []
        self.previous_mode = "overview"
        self.exported: list[str] = []  # paths written this session (tests read it)
        self.sub_title = ("SYNTHETIC demo data — " if self.state.synthetic else "") + escape_control(self.state.source_label)

    # ------------------------------------------------------------------ loading

    def on_mount(self) -> None:
        if self.state.base_workspace is not None:
            self._loaded(self.state.base_workspace)
        elif self.state.has_inputs:
            self.load()

    @work(thread=True, exclusive=True, group="load", exit_on_error=False, description="loading inputs")
    def load(self) -> None:
        ws = load_workspace(self.state.options)
        self.call_from_thread(self._loaded, ws)

    def _loaded(self, ws) -> None:
        self.state.base_workspace = ws
        self.ws = ws.snapshot()
        self._sync_lanes()
        if self.qid is None:
            pos = ws.positives
            if pos.size:
                self.qid = str(ws.qids[int(pos[0])])
        self.data_version += 1
        if self.state.report is None:
            self.compute_report()
        else:
            self.report_version += 1

    def _sync_lanes(self) -> None:
        self.lane_names = list(self.ws.lanes) if self.ws is not None else []
        self.input_lane_names = list(self.ws.input_lanes) if self.ws is not None else []

    @work(thread=True, exclusive=True, group="report", exit_on_error=False, description="computing the report")
    def compute_report(self) -> None:
        ws, report = evaluate(self.state.options, self.state.base_workspace)
        self.call_from_thread(self._report_done, report, ws)

    def _report_done(self, report: dict, ws=None) -> None:
        self.state.report = report
        self.state.report_error = None
        if ws is not None:
            self.state.base_workspace = ws  # a calibrated RRF k makes a new workspace
        self.ws = self.state.base_workspace.snapshot()  # now with the derived lanes (rrf, convex, variants)
        self._sync_lanes()
        self.report_version += 1

    # ------------------------------------------------------------------ errors and progress

    def show_error(self, exc: BaseException | str, title: str = "Error") -> None:
        text = exc if isinstance(exc, str) else error_line(exc)
        self.log.error(text)
        if getattr(self, "_exit", False) or not self.is_running:
            return  # shutting down: a cancelled worker's complaint has nowhere to go
        if any(isinstance(s, ErrorDialog) and s.message == text for s in self.screen_stack):
            return  # the same error from a repeated request: one dialog is enough
        self.push_screen(ErrorDialog(text, title))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            if event.worker.group == "report":
                self.state.report_error = event.worker.error
                self.report_version += 1
            self.show_error(event.worker.error)
        self.update_busy()

    def update_busy(self) -> None:
        running = [w.description or w.name for w in self.workers if w.is_running and w.state == WorkerState.RUNNING]
        status = ("⟳ " + ", ".join(dict.fromkeys(running))) if running else ""
        try:
            from .widgets.viewbar import ViewBar

            for bar in self.screen.query(ViewBar):
                bar.set_status(status)
        except Exception:  # screen not composed yet
            pass

    # ------------------------------------------------------------------ navigation

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "switch_mode" and parameters and parameters[0] == self.current_mode:
            return None
        return True

    def switch_mode(self, mode: str):
        if self.current_mode and self.current_mode != "query" and mode == "query":
            self.previous_mode = self.current_mode
        return super().switch_mode(mode)

    def open_query(self, qid: str) -> None:
        """Drill into one query (Enter from any list, `/`, the palette)."""
        if self.ws is None or qid not in self.ws.qid_index:
            self.notify(safe_escape(f"no query {qid!r}"), severity="warning")
            return
        self.qid = qid
        if self.current_mode != "query":
            self.switch_mode("query")

    def set_rrf_k(self, k: int) -> None:
        """Palette: 'set k = N' moves the RRF slider (and shows the RRF view)."""
        from .screens.rrf import RRFScreen

        def apply() -> None:
            if isinstance(self.screen, RRFScreen):
                self.screen.set_k(k)

        if self.current_mode != "rrf":
            self.switch_mode("rrf")
        self.call_after_refresh(apply)

    def search_queries(self, text: str, limit: int = 40) -> list[tuple[str, str]]:
        """(qid, label) of queries whose qid starts with, or whose text contains, ``text``."""
        if self.ws is None:
            return []
        text = text.strip()
        qids = self.ws.qids.tolist()
        qt = self.ws.query_text
        if not text:
            hits = qids[:limit]
        else:
            low = text.lower()
            exact = [q for q in qids if q == text]
            prefix = [q for q in qids if q.startswith(text) and q != text]
            words = [q for q in qids if low in qt.get(q, "").lower() and q not in exact and q not in prefix]
            hits = (exact + prefix + words)[:limit]
        return [(q, f"{q}  {qt.get(q, '')[:70]}") for q in hits]

    def action_search(self) -> None:
        if self.ws is None:
            self.notify("no data loaded yet", severity="warning")
            return
        self.push_screen(SearchDialog(self.search_queries), lambda qid: qid and self.open_query(qid))

    def action_help(self) -> None:
        """`?`: the view's lesson, then its keys (keys sharing an action on one line)."""
        screen = self.screen
        doc = getattr(screen, "HELP", None) or "rankscope"
        groups: dict[tuple[str, str], list[str]] = {}
        for key, ab in screen.active_bindings.items():
            b = ab.binding
            if not b.description:
                continue
            where = "view" if ab.node is screen else ("app" if ab.node is self else type(ab.node).__name__)
            groups.setdefault((where, b.description), []).append(self.get_key_display(b))
        order = {"view": 0, "app": 2}
        rows = sorted(groups.items(), key=lambda kv: order.get(kv[0][0], 1))
        lines = [doc, "", "## Keys", "", "| keys | action | from |", "|---|---|---|"]
        for (where, desc), keys in rows:
            lines.append(f"| {' '.join(f'`{k}`' for k in dict.fromkeys(keys))} | {desc} | {where} |")
        lines.append("| `1`–`9` | switch view | app |")
        lines.append("| `ctrl+p` | command palette: views, go to query, set k, export | app |")
        self.push_screen(HelpScreen("\n".join(lines)))

    # ------------------------------------------------------------------ export

    def action_export(self) -> None:
        self.push_screen(ExportDialog(), self._export_chosen)

    def _export_chosen(self, req: ExportRequest | None) -> None:
        if req is not None:
            self.export(req)

    @work(thread=True, exclusive=True, group="export", exit_on_error=False, description="writing the report")
    def export(self, req: ExportRequest) -> None:
        from .render import report as R
        from .kernel.output import check_output_path, dumps_strict, write_atomic
        check_output_path(req.path, list(self.state.protected_paths))
        report = self._wait_for_report()
        if req.format == "json":
            data = dumps_strict(report)
        elif req.format == "csv":
            data = R.per_query_csv(report)
        else:
            data = R.RENDERERS[req.format](report)
        write_atomic(req.path, data)
        self.call_from_thread(self._exported, req.path)

    def _wait_for_report(self, timeout: float = 600.0) -> dict:
        """The report the app computed (exactly as `evaluate` does); waits for its worker."""
        import time

        from textual.worker import get_current_worker

        deadline = time.monotonic() + timeout
        while self.state.report is None:
            if self.state.report_error is not None:
                raise RuntimeError(f"the report could not be computed: {self.state.error_wording}")
            if self.state.base_workspace is None and not any(w.group == "load" and w.is_running for w in self.workers):
                raise RuntimeError("no data loaded")
            if get_current_worker().is_cancelled or time.monotonic() > deadline:
                raise RuntimeError("export cancelled while the report was computing")
            time.sleep(0.05)
        return self.state.report

    def _exported(self, path: str) -> None:
        self.exported.append(path)
        self.notify(safe_escape(f"wrote {os.path.abspath(path)}"), title="export")


def run(state: DashboardState) -> int:
    RankscopeApp(state).run()
    return 0
