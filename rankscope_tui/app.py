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
  ``dumps_strict`` and ``write_atomic``; served in a browser (``rankscope tui --serve``)
  the same bytes (``output_bytes``) are the browser's download instead.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.dom import DOMNode
from textual.screen import ModalScreen
from textual.widgets import Input, TextArea
from textual.worker import Worker, WorkerState

from .render.exploratory import exploratory_text
from .screens import LETTER_VIEWS, VIEW_KEYS, VIEWS, screen_class, view_screens
from .screens.base import DashboardApp
from .screens.palette import RankscopeCommands, RankscopePalette
from .startup import freeze_long_lived, resume_collector
from .state import DashboardState, error_line, evaluate, start_loading
from .widgets.dialogs import ErrorDialog, ExportDialog, ExportRequest, HelpScreen, OpenDialog, OpenRequest, SearchDialog
from .widgets.safe import escape as safe_escape
from .widgets.safe import escape_control
from .widgets.textual_private import SelectOverlay, guard_paste_end, input_parser_state, is_exiting, screen_stacks
from .widgets.viewbar import key_display

if TYPE_CHECKING:
    from .kernel.workspace.loaded import Workspace


class RankscopeApp(DashboardApp):
    """``rankscope tui``: ten views, switched with 1–9 and 0."""

    CSS_PATH = "app.tcss"
    TITLE = "rankscope"
    MODES = view_screens()
    DEFAULT_MODE = "overview"
    COMMANDS = App.COMMANDS | {RankscopeCommands}
    BINDINGS = [
        *[
            Binding(VIEW_KEYS[mode], f"app.switch_mode('{mode}')", title, show=False, id=f"view.{mode}",
                    tooltip=f"Switch to the {title} view")
            for mode, title in VIEWS
        ],
        *[Binding(key, f"app.switch_mode('{mode}')", title, show=False, id=f"view.{mode}",
                  tooltip=f"Switch to the {title} view") for mode, title, key in LETTER_VIEWS],
        Binding("e", "export", "Export", id="app.export", tooltip="Write report.json (same as evaluate --out)"),
        Binding("slash", "search", "Find query", id="app.search", tooltip="Go to a query by qid or text"),
        Binding("o", "open", "Open", id="app.open", tooltip="Open a lane, qrels, strata or texts (reloads)"),
        Binding("escape", "leave_input", "Leave input", id="app.leave_input",
                tooltip="Stop typing into this field: the view keys work again"),
        Binding("question_mark", "help", "Help", id="app.help", tooltip="What this view teaches, and its keys"),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]

    def __init__(self, state: DashboardState | None = None, **kw) -> None:
        """``state``: the options the dashboard was started with; with no base workspace, the
        inputs are loaded in a worker on mount (and the report computed after them). A state
        that carries a workspace and its report (tests share them) must hold
        ``state.evaluate(options, workspace)`` as the report."""
        super().__init__(**kw)
        self.state = state if state is not None else DashboardState()
        # the base workspace is loaded exactly as `evaluate` loads it and the report is computed
        # on it (derived lanes included); the screens read ``ws``, its snapshot
        # (``Workspace.snapshot``: the lanes present then, the same cached numbers).
        self.ws = None
        self.lane_names: list[str] = []
        self.input_lane_names: list[str] = []
        self.previous_mode = "overview"
        self.exported: list[str] = []  # paths written (served: names downloaded) this session (tests read it)
        self.sub_title = ("SYNTHETIC demo data — " if self.state.synthetic else "") + escape_control(self.state.source_label)
        if self.state.theme:  # checked against the themes by `rankscope tui` before the app starts
            self.theme = self.state.theme
        # a config file's keymap (binding id -> keys): every view and dialog reads it when
        # it looks a key up, so it holds from the first key on
        self.set_keymap(dict(self.state.keymap))

    # ------------------------------------------------------------------ loading

    def on_mount(self) -> None:
        if os.environ.get("RANKSCOPE_TASK_DUMP"):
            self._dump_tasks_on_sigusr1(os.environ["RANKSCOPE_TASK_DUMP"])
        self._watch_terminal()
        if self.state.base_workspace is None and self.state.has_inputs:
            pre = self.state.preload
            if (pre is not None and pre.done() and not pre.cancelled() and pre.exception() is None
                    and pre.options is self.state.options):
                self.state.preload = None  # read while Textual started: the first frame shows it
                self.state.base_workspace = pre.result()
        if self.state.base_workspace is not None:
            self._loaded(self.state.base_workspace)
        elif self.state.has_inputs:
            # the frame (views, keys, the loading line) first, then the load: on a busy machine
            # the reading threads would otherwise share the interpreter with the first frame
            # and a person would wait seconds for a live app (q works from the first frame on)
            self.call_after_refresh(self.load)

    @work(exclusive=True, group="load", exit_on_error=False, description="loading inputs")
    async def load(self) -> None:
        """Read the inputs in a daemon thread the worker awaits (``state.start_loading``; the
        one `rankscope tui` began before the UI was imported when it is for these options):
        quitting (or a new load) cancels the worker and abandons the thread, so an input that
        blocks (a FIFO with no writer, a stalled network file) never keeps the dashboard from
        quitting."""
        options = self.state.options
        future = self.state.take_preload(options) or start_loading(options)
        ws = await asyncio.wrap_future(future)
        if options is self.state.options:  # not a load the user has since replaced
            self._loaded(ws)

    def _loaded(self, ws) -> None:
        self.state.base_workspace = ws
        self.state.load_error = None
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
        self.call_after_refresh(self._first_data_drawn)

    def _first_data_drawn(self) -> None:
        resume_collector()
        self._import_views()  # while the report computes: the views are ready when it is in

    def _sync_lanes(self) -> None:
        self.lane_names = list(self.ws.lanes) if self.ws is not None else []
        self.input_lane_names = list(self.ws.input_lanes) if self.ws is not None else []

    @work(thread=True, exclusive=True, group="report", exit_on_error=False, description="computing the report")
    def compute_report(self) -> None:
        base = self.state.base_workspace
        if base is None:  # a load replaced it meanwhile: that load computes its own report
            raise RuntimeError("no data loaded")
        ws, report = evaluate(self.state.options, base, self.state.parsed_thresholds)
        self.call_from_thread(self._report_done, report, ws)

    def _report_done(self, report: dict, ws: Workspace) -> None:
        self.state.report = report
        self.state.report_error = None
        self.state.base_workspace = ws  # prepared: a calibrated RRF k makes a new workspace
        self.ws = ws.snapshot()  # now with the derived lanes (rrf, convex, variants)
        self._sync_lanes()
        self.report_version += 1
        freeze_long_lived()  # the report lives as long as the app: full collections skip it

    def _import_views(self) -> None:
        """Import the other views' modules in a daemon thread, once the first frame with data
        is drawn: a view's module is imported when it is first shown, and the Compare view's
        statistics (scipy) alone would hold the event loop a third of a second there. Import
        locks make a key pressed meanwhile wait for that one module, never import it twice."""
        if getattr(self, "_views_imported", False):
            return
        self._views_imported = True

        def imports() -> None:
            for mode, _ in VIEWS:
                try:
                    screen_class(mode)
                except Exception:  # shown (and reported) when the view itself is opened
                    pass

        threading.Thread(target=imports, name="rankscope-views", daemon=True).start()

    # ------------------------------------------------------------------ errors and progress

    def show_error(self, exc: BaseException | str, title: str = "Error") -> None:
        text = exc if isinstance(exc, str) else error_line(exc)
        self.log.error(text)
        if is_exiting(self) or not self.is_running:
            return  # shutting down: a cancelled worker's complaint has nowhere to go
        if any(isinstance(s, ErrorDialog) and s.message == text for s in self.screen_stack):
            return  # the same error from a repeated request: one dialog is enough
        self.push_screen(ErrorDialog(text, title))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            if event.worker.group == "report":
                self.state.report_error = event.worker.error
                self.report_version += 1
            if event.worker.group == "load":
                self.state.load_error = event.worker.error
                if self.state.base_workspace is None:  # nothing to show: every view says why
                    self.state.report_error = event.worker.error
                    self._show_load_error_everywhere()
                self.report_version += 1
            self.show_error(event.worker.error or "the worker failed")
            resume_collector()
        self.update_busy()

    def _show_load_error_everywhere(self) -> None:
        """Every view composed so far replaces its "⟳ loading…" by the error (the views
        composed later say it themselves, and the view bar of every view carries it)."""
        from textual.markup import escape
        from textual.widgets import Static

        if self.state.load_error is None:
            return
        text = escape(f"The inputs could not be loaded:\n{error_line(self.state.load_error)}\n\nPress o to open other files.")
        for stack in screen_stacks(self).values():
            for screen in stack:
                for st in screen.query(Static):
                    try:
                        if str(st.content).startswith("⟳"):
                            st.update(text)
                    except Exception:
                        pass

    def busy_workers(self) -> list[str]:
        """What the status line lists: the running workers of this app's own work. Textual's
        own (the command palette's ``_gather_commands``) are its internals, not work a
        person asked for."""
        from textual.command import CommandPalette

        return [w.description or w.name for w in self.workers
                if w.is_running and w.state == WorkerState.RUNNING
                and not w.group.startswith("--textual") and not isinstance(w.node, CommandPalette)]

    def update_busy(self) -> None:
        running = self.busy_workers()
        status = ("⟳ " + ", ".join(dict.fromkeys(running))) if running else ""
        if not running and self.state.load_error is not None:
            status = f"load failed: {error_line(self.state.load_error)} — press o to open other files"
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
        if action == "leave_input":
            return isinstance(self.focused, (Input, TextArea))  # shown in the footer only while typing
        return True

    @property
    def dialog_open(self) -> bool:
        """A modal (dialog, palette, help) is on top of the current view."""
        try:
            return isinstance(self.screen, ModalScreen)
        except Exception:  # no screen yet, or shutting down
            return True

    @property
    def closing(self) -> bool:
        return is_exiting(self) or not self.is_running

    def _may_open_dialog(self) -> bool:
        """One dialog at a time, and none while quitting (a key burst after `q`)."""
        return not self.closing and not self.dialog_open

    def switch_mode(self, mode: str):
        from textual.await_complete import AwaitComplete

        if self.closing or (screen_stacks(self) and len(self.screen_stack) > 1):
            # a dialog is open on this view (or the app is quitting): a queued switch (a row's
            # Enter, a number key typed into a dialog's burst) would strand the dialog under
            # another view; the dialog keeps the keys until it is closed
            async def nothing() -> None:
                return None

            if not self.closing:
                self.notify(f"a dialog is open: close it (Esc) to go to the {mode} view", severity="warning", timeout=2)
            return AwaitComplete(nothing())
        if self.current_mode and self.current_mode != "query" and mode == "query":
            self.previous_mode = self.current_mode
        return super().switch_mode(mode)

    def pop_screen(self):
        from textual.await_complete import AwaitComplete

        if len(self.screen_stack) <= 1:  # a late dismiss: nothing of ours to pop
            async def nothing() -> None:
                return None

            return AwaitComplete(nothing())
        return super().pop_screen()

    def key_consumed(self, key: str, priority: bool) -> bool:
        """Keys that arrive after `q` (one burst: `q` then `e`) or before the first screen are
        dropped: there is no screen left to bind them to."""
        if self.closing or not screen_stacks(self) or not self.screen_stack:
            return True
        if priority and key in self._quit_keys() and self._q_will_quit():
            # `q` reaches its (non-priority) binding only after bubbling up from the focused
            # widget, while a priority key of the same burst (ctrl+p) is handled at once: the
            # palette would open first and take the `q`. Quit as soon as the app sees it.
            self.exit()
            return True
        return False

    def _watch_terminal(self) -> None:
        """Leave when the terminal is gone. Closing a terminal or an ssh session sends SIGHUP
        to its session leader only: under ``make demo`` that is make, which waits for us,
        and the dashboard would then read end-of-file from the hung-up terminal forever at
        full CPU. Once a second the terminal's foreground group is asked for; a hung-up
        terminal answers EIO, and the dashboard takes the SIGHUP it missed (the command
        line's handler unwinds it as for Ctrl-C). Not where no terminal is attached (tests,
        the browser)."""
        import errno
        import signal

        stdin = sys.__stdin__
        if self.is_headless or stdin is None or not stdin.isatty():
            return
        fd = stdin.fileno()
        try:
            os.tcgetpgrp(fd)
        except OSError:  # a terminal, but not this session's (``setsid``): no hang-up reaches it
            return

        def check() -> None:
            try:
                os.tcgetpgrp(fd)
            except OSError as exc:
                if exc.errno != errno.EIO:  # only a hung-up terminal answers EIO
                    return
                timer.stop()
                if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:  # nohup: no terminal to serve either
                    self.exit(return_code=130)
                else:
                    os.kill(os.getpid(), signal.SIGHUP)

        timer = self.set_interval(1.0, check, name="terminal watch")

    def _dump_tasks_on_sigusr1(self, path: str) -> None:
        """Troubleshooting a dashboard that stops answering keys: with ``RANKSCOPE_TASK_DUMP``
        set to a file, SIGUSR1 appends the app's state and every asyncio task's stack there
        (a thread dump shows only an idle event loop)."""
        import asyncio
        import signal

        def dump() -> None:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(f"closing={self.closing} dialog_open={self.dialog_open} screen={self.screen!r} "
                         f"focused={self.focused!r} stacks={ {m: len(s) for m, s in screen_stacks(self).items()} }\n")
                fh.write(input_parser_state() + "\n")
                for task in asyncio.all_tasks():
                    fh.write(f"--- {task!r}\n")
                    task.print_stack(file=fh)

        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, dump)

    def _quit_keys(self) -> tuple[str, ...]:
        """The keys of the quit binding (``app.quit``): `q`, or what a keymap put there."""
        keys = dict(self.state.keymap).get("app.quit")
        if not keys:
            return ("q",)
        # as Textual names them ("?" is question_mark): the names key_consumed receives
        return tuple(b.key for b in Binding.make_bindings([Binding(keys, "quit")]))

    def _q_will_quit(self) -> bool:
        """`q` quits unless it is typed into a field, an open select list (type to search) or a
        dialog on top (there it is text or the dialog's own key); the same test the binding
        would pass after bubbling."""
        return not self.dialog_open and not isinstance(self.focused, (Input, TextArea, SelectOverlay))

    async def run_action(self, action: str | tuple[str, str, tuple[object, ...]], default_namespace: DOMNode | None = None,
                         namespaces: Mapping[str, DOMNode] | None = None) -> bool:
        """Every key's action: one that raises does not end the app. A fault in our code is
        shown in the error dialog; a widget's own glitch on an edge (page down in an empty
        option list) is logged and the key ignored."""
        try:
            return await super().run_action(action, default_namespace, namespaces)
        except Exception as exc:
            import traceback

            frames = traceback.extract_tb(exc.__traceback__)
            ours = bool(frames) and "rankscope_tui" in frames[-1].filename.replace("\\", "/").split("/")
            self.log.error(f"action {action!r} failed: {exc!r}")
            if ours:
                self.show_error(exc)
            return True

    def action_command_palette(self) -> None:
        if self.use_command_palette and self._may_open_dialog():
            self.push_screen(RankscopePalette(id="--command-palette"))

    # Textual's own palettes (its "Theme" and "Keys" commands) are the guarded one too: a
    # palette closed while its search finishes must not end the app.
    def search_commands(self, commands, placeholder: str = "Search for commands…"):
        from textual.command import SimpleProvider

        # a provider instance, as Textual's own search_commands passes it (its annotation says a class)
        return self.push_screen(RankscopePalette(providers=[SimpleProvider(self.screen, commands)],  # type: ignore[list-item]
                                                 placeholder=placeholder))

    def search_themes(self) -> None:
        from textual.theme import ThemeProvider

        self.push_screen(RankscopePalette(providers=[ThemeProvider], placeholder="Search for themes…"))

    def action_leave_input(self) -> None:
        """Esc in a text field: leave it (the value stays); the view's keys work again."""
        focused = self.focused
        if isinstance(focused, (Input, TextArea)):
            name = focused.id or "the field"
            value = focused.value if isinstance(focused, Input) else f"{focused.document.line_count} lines"
            self.screen.set_focus(None)
            self.refresh_bindings()
            self.notify(safe_escape(f"left {name} (value {value or 'blank'}): view keys 0–9 and letters work again"),
                        title="input", timeout=3)

    def on_descendant_focus(self, event) -> None:
        self._refresh_footer()  # the footer shows "esc Leave input" while a field has focus

    def on_descendant_blur(self, event) -> None:
        self._refresh_footer()

    def _refresh_footer(self) -> None:
        if not self.closing and screen_stacks(self) and self.screen_stack:
            self.refresh_bindings()

    def open_query(self, qid: str) -> None:
        """Drill into one query (Enter from any list, `/`, the palette)."""
        if self.closing:
            return
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
        if not self._may_open_dialog():
            return
        if self.ws is None:
            self.notify("no data loaded yet", severity="warning")
            return
        self.push_screen(SearchDialog(self.search_queries), self._search_chosen)

    def _search_chosen(self, qid: str | None) -> None:
        if qid:
            self.open_query(qid)

    def action_help(self) -> None:
        """`?`: the view's lesson, then its keys (keys sharing an action on one line)."""
        if not self._may_open_dialog():
            return
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
        moved = {b.split(".", 1)[1] for b, _ in self.state.keymap if b.startswith("view.")}
        if not moved & {m for m, _ in VIEWS}:  # a keymap's view keys are in the rows above
            lines.append("| `1`–`9`, `0` | switch view | app |")
        lines += [f"| `{key}` | the {title} view | app |" for mode, title, key in LETTER_VIEWS if mode not in moved]
        lines.append("| `ctrl+p` | command palette: views, go to query, set k, open, export | app |")
        lines.append("| `escape` | leave a text field (its value stays) | app |")
        self.push_screen(HelpScreen("\n".join(lines)))

    # ------------------------------------------------------------------ export

    def action_open(self) -> None:
        if self._may_open_dialog():
            self.push_screen(OpenDialog(), self._open_chosen)

    def _open_chosen(self, req: OpenRequest | None) -> None:
        if req is not None and not self.closing:
            self.open_file(req)

    def open_file(self, req: OpenRequest) -> None:
        """Reload the dashboard with one more lane or strata file, or other qrels / texts /
        corpus (loaded in the load worker exactly as `evaluate` would load them)."""
        from dataclasses import replace

        o = self.state.options
        if req.kind == "lane":
            o = replace(o, lanes=o.lanes + ((None, req.path),))
        elif req.kind == "lanes":
            o = replace(o, lanes=((None, req.path),))
        elif req.kind == "strata":
            o = replace(o, strata=o.strata + (req.path,))
        else:
            o = replace(o, **{req.kind: req.path})  # type: ignore[arg-type]  # kind names a one-path option
        if not o.lanes or not o.qrels:
            missing = "a lane" if not o.lanes else "qrels"
            self.state.options = o  # kept: the next open completes it
            self.notify(safe_escape(f"opened {req.kind} {req.path}; open {missing} too to load"), title="open", timeout=6)
            return
        self.state.options = o
        self.state.base_workspace = None
        self.state.report = None
        self.state.report_error = self.state.load_error = None
        self.ws = None
        self._sync_lanes()
        self.data_version += 1
        self.notify(safe_escape(f"opened {req.kind} {req.path}: reloading"), title="open")
        self.load()

    def action_export(self) -> None:
        if self._may_open_dialog():
            self.push_screen(ExportDialog(download=self.is_web), self._export_chosen)

    def _export_chosen(self, req: ExportRequest | None) -> None:
        if req is not None:
            self.export(req)

    @work(thread=True, exclusive=True, group="export", exit_on_error=False, description="writing the report")
    def export(self, req: ExportRequest) -> None:
        """Write the export to ``req.path`` atomically; served in a browser (``--serve``: a web
        driver), hand the same bytes to the browser as a download named after the path's last
        part instead (``App.deliver_binary``), since the server's disk is not the user's."""
        from .kernel.report.output import check_output_path, dumps_strict, output_bytes, write_atomic
        from .render import report as R
        from .render.formats import RENDERERS
        web = self.is_web
        if not web:
            check_output_path(req.path, list(self.state.protected_paths))
        report = self._wait_for_report()
        exploratory = self.call_from_thread(self.state.exploratory.block)
        data: str | bytes
        if req.format == "json":
            if exploratory:  # after the report's own keys, never inside them
                report = {**report, "exploratory": exploratory}
            data = dumps_strict(report)
        elif req.format == "figure":
            from .render.figures import check_suffix, figure_bytes

            suffix = check_suffix(req.path)
            mode, metric, compare_payload = self.call_from_thread(
                lambda: (self.current_mode, self._view_metric(), self.state.compare_payload))
            data = figure_bytes(view_figure(mode, report, self.state.base_workspace, compare_payload, metric), suffix)
        elif req.format == "csv":
            data = R.per_query_csv(report)  # per-query numbers of the pre-registered settings only
        else:
            data = RENDERERS[req.format](report)
            if exploratory:
                data = data.rstrip("\n") + "\n\n" + exploratory_text(exploratory, req.format)
        if web:
            self.call_from_thread(self._deliver, os.path.basename(req.path), output_bytes(data))
            return
        write_atomic(req.path, data)
        self.call_from_thread(self._exported, req.path)

    def _deliver(self, name: str, data: bytes) -> None:
        import io

        self.deliver_binary(io.BytesIO(data), save_filename=name, open_method="download")
        self.exported.append(name)
        self.notify(safe_escape(f"sent {name} to the browser as a download"), title="export")

    def _view_metric(self) -> str | None:
        """The metric the current view shows (its metric or objective picker), None when it
        has no picker: the figure it exports draws that metric."""
        from .screens.base import ViewScreen

        view = next((s for s in reversed(self.screen_stack) if isinstance(s, ViewScreen)), None)
        return None if view is None else view.figure_metric

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


def exit_status(app: RankscopeApp) -> int:
    """The dashboard's exit status: 0 when it loaded its inputs (or was left on purpose with
    the return code it set), 2 when it never loaded (the error, or why, goes to stderr)."""
    state = app.state
    if state.base_workspace is None and (state.has_inputs or state.load_error is not None):
        why = error_line(state.load_error) if state.load_error is not None else \
            "rankscope: error: the dashboard quit before its inputs were loaded"
        print(why, file=sys.stderr)
        return 2
    return app.return_code or 0


def run(state: DashboardState) -> int:
    guard_paste_end()
    app = RankscopeApp(state)
    try:
        app.run()
    finally:
        resume_collector()
    return exit_status(app)


def binding_tables() -> list[tuple[str, list[Binding]]]:
    """The dashboard's bindings as the README's key tables group them: everywhere (the
    app's), then each view in key order (its screen's own), the k sliders (Fusion,
    Calibrate) and the dialogs (one row per binding id). Imports every view."""
    from .widgets import dialogs
    from .widgets.kslider import KSlider

    tables: list[tuple[str, list[Binding]]] = [("Everywhere", list(Binding.make_bindings(RankscopeApp.BINDINGS)))]
    for mode in [m for m, _ in VIEWS] + [m for m, _, _ in LETTER_VIEWS]:
        own = screen_class(mode).__dict__.get("BINDINGS", [])
        title = next((f"{VIEW_KEYS[m]} {t}" for m, t in VIEWS if m == mode), None) or \
            next(f"{k} {t}" for m, t, k in LETTER_VIEWS if m == mode)
        tables.append((f"{title} view", list(Binding.make_bindings(own))))
    tables.append(("k sliders (Fusion, Calibrate)", list(Binding.make_bindings(KSlider.BINDINGS))))
    tables.append(("Dialogs", [b for cls in vars(dialogs).values()
                               if isinstance(cls, type) and cls.__module__ == dialogs.__name__ and "BINDINGS" in cls.__dict__
                               for b in Binding.make_bindings(cls.__dict__["BINDINGS"])]))
    return tables


def keys_markdown() -> str:
    """The README's key tables (one per view), generated from the bindings:
    ``python -m rankscope_tui.app --keys`` prints them; ``tests/test_readme_keys.py``
    fails when the README's copy differs from the bindings. A binding's keys share a row;
    its id is what a config file's ``keymap`` names."""
    out: list[str] = []
    for title, bindings in binding_tables():
        if not bindings:
            out += [f"**{title}**: no keys of its own (those of Everywhere work)", ""]
            continue
        rows: dict[str, tuple[list[str], str]] = {}
        for b in bindings:
            keys, _ = rows.setdefault(str(b.id), ([], b.description or b.action))
            if b.key not in keys:
                keys.append(b.key)
        out += [f"**{title}**", "", "| keys | action | binding id |", "|---|---|---|"]
        out += [f"| {' '.join(f'`{key_display(k)}`' for k in keys)} | {desc} | `{bid}` |"
                for bid, (keys, desc) in rows.items()]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


#: the figure each view's export writes (`rankscope plot KIND`); views without one refuse
VIEW_FIGURES = {"overview": "forest", "strata": "forest", "rrf": "rrf-k", "calibrate": "convex-grid", "gate": "gate",
                "compare": "compare-intervals"}


def view_figure(mode: str, report: dict, ws, compare_payload: dict | None, metric: str | None = None):
    """The figure of view ``mode``: the kernel's numbers (``kernel.figures``), the same as
    `rankscope plot` draws from the report (and the Compare view's comparison). ``metric``
    is the one the view shows; without one (the Overview shows them all) the metric every
    picker starts on (``DEFAULT_METRIC``) when the report has it."""
    from .kernel.errors import InputError

    kind = VIEW_FIGURES.get(mode)
    if kind is None:
        views = ", ".join(sorted({m for m in VIEW_FIGURES}))
        raise InputError(f"the {mode} view has no figure to export (views with one: {views})", "export")
    try:
        return _figure(kind, report, ws, compare_payload, metric)
    except ValueError as exc:  # what the figure cannot draw from this report (no gate sweep, ...)
        raise InputError(str(exc), "export") from None


def _figure(kind: str, report: dict, ws, compare_payload: dict | None, metric: str | None = None):
    from .kernel.errors import InputError
    from .kernel.report import figures as FG
    from .kernel.settings import DEFAULT_METRIC

    metrics = report["inputs"]["settings"]["metrics"]
    drawn = str(metric) if metric in metrics else (DEFAULT_METRIC if DEFAULT_METRIC in metrics else str(metrics[0]))
    if kind == "forest":
        return FG.forest_figure(report, drawn)
    if kind == "gate":
        return FG.gate_figure(report)
    if kind == "compare-intervals":
        if compare_payload is None:
            raise InputError("the Compare view has not computed its comparison yet", "export")
        return FG.compare_intervals_figure(compare_payload)
    if ws is None or len(ws.input_lanes) < 2:
        raise InputError(f"{kind} needs two or more input lanes", "export")
    return FG.rrf_k_figure(ws, drawn) if kind == "rrf-k" else FG.convex_grid_figure(ws, drawn)


if __name__ == "__main__":  # python -m rankscope_tui.app --keys: the README's key tables
    if sys.argv[1:] == ["--keys"]:
        sys.stdout.write(keys_markdown())
    else:
        sys.exit("usage: python -m rankscope_tui.app --keys")
