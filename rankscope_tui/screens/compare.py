"""7 Compare: a family like `rankscope compare` runs — a baseline, several candidates and
metrics, a primary metric, the correction, the alternative and the minimum effect — the
verdict panel with every number of SPEC §7, a paired/unpaired toggle, and the per-query
deltas, largest losses first (lesson 12). Every number comes from ``instruments.compare.plan_compare``,
``instruments.compare.run_compare`` and ``instruments.compare.query_deltas``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Checkbox, DataTable, Input, Label, Select, SelectionList, Static
from textual.widgets.selection_list import Selection

from ..kernel.settings import CompareSettings
from ..kernel.statistics.randomization import format_p
from ..kernel.statistics.verdict import CAPTION
from ..render.power import row_line
from ..widgets import fmt
from ..widgets.numbers import number_input
from ..widgets.plot import TermPlot
from ..widgets.safe import escape
from ..widgets.tables import PlainTable, QidTable
from .base import ViewScreen, guarded

if TYPE_CHECKING:
    from textual.timer import Timer

    from ..kernel.gate.thresholds import Thresholds
    from ..kernel.instruments.compare import ComparePlan
    from ..kernel.statistics.verdict import CompareResult as VerdictResult

CORRECTIONS = ["holm", "bonferroni", "none"]
ALTERNATIVES = ["two-sided", "greater", "less"]
NO_PRIMARY = "\0all"  # the Select value for "no --primary: every metric is in the family"
BEST = "best"
DEBOUNCE = 0.2  # seconds: several toggles in a row start one comparison


@dataclass(frozen=True)
class CompareParams:
    """The options of one `rankscope compare` call."""

    baseline: str  # a lane, or "best" (exploratory)
    candidates: tuple[str, ...]
    metrics: tuple[str, ...]
    primary: str | None
    correction: str
    alternative: str
    min_delta: float
    exploratory: bool
    level: str = CompareSettings().level


@dataclass
class CompareResult:
    params: CompareParams
    plan: ComparePlan
    result: VerdictResult  # the rows with their verdicts
    deltas: dict  # (candidate, metric) -> [(qid, baseline, candidate, Δ)], largest losses first
    judged: dict  # lane -> judged@10 per query code (for the per-query list)
    judged_key: str
    ws: object = None  # the workspace it was computed on
    payload: dict | None = None  # the `compare --out` payload (the results sentences are built from it)

    def sentence(self, row) -> str | None:
        """The results sentence of ``row`` (``render.sentences``), as `compare` prints it."""
        from ..render.sentences import results_sentence

        if self.payload is None:
            return None
        i = next((i for i, r in enumerate(self.result.rows) if r is row), None)
        return None if i is None else results_sentence(self.payload["comparisons"][i], self.payload["settings"])


def compute_compare(ws, p: CompareParams, th: Thresholds | None) -> CompareResult:
    """What `rankscope compare` runs with these options (in a worker) and the parsed
    thresholds file ``th``: the kernel's comparison entry point, then each row's per-query
    deltas and both lanes' judged@10."""
    from ..kernel import compare, query_deltas
    from ..kernel import measures as M
    from ..kernel.settings import CompareSettings
    settings = CompareSettings(baseline=p.baseline, candidates=tuple(p.candidates), metrics=tuple(p.metrics),
                               level=p.level, min_delta=p.min_delta, correction=p.correction,
                               alternative=p.alternative, exploratory=p.exploratory, primary=p.primary)
    comparison = compare(ws, th, settings)
    plan, res = comparison.plan, comparison.result
    deltas = {(r.candidate, r.metric): query_deltas(ws, plan.baseline, r.candidate, r.metric, plan.level)
              for r in res.rows}
    jkey = M.parse_metrics("judged@10")[0]
    judged = {lane: ws.per_query(lane, plan.level, (jkey,))[jkey.key]
              for lane in (plan.baseline, *plan.candidates)}
    return CompareResult(p, plan, res, deltas, judged, jkey.key, ws, comparison.as_dict())


#: The theme variable each tested state is drawn in (the words are the kernel's ``verdict_text``).
_VERDICT_COLOUR = {"better": "success", "worse": "error", "inconclusive": "warning", "below_min_delta": "warning"}


class CompareScreen(ViewScreen):
    VIEW = "compare"
    HELP = """# 7 Compare

**Lesson 12: paired tests — is B really better than A?** Two systems scored on the same
queries give one Δ = candidate − baseline per query. The paired bootstrap resamples
queries and reads the interval of the mean Δ and p_superiority (the share of replicates
with Δ* > 0 — not a probability that B is better); the randomization test flips signs.

The controls on the left are the options of `rankscope compare`: baseline (`best` makes
the call exploratory), candidates and metrics (every pair is one row), the **primary**
metric (only its rows form the tested family; the others are descriptive), the correction
over the family (Holm, Bonferroni or none), the alternative (a pre-registered direction)
and the minimum effect. A row is **established better** or **established worse** when the
adjusted p ≤ α *and* |mean Δ| clears the minimum effect; **established but below min-delta**
when the p does but the size does not; otherwise **inconclusive** — never a loss.

The rows table picks the row shown in the panel. `p` toggles paired/unpaired: pairing
removes query difficulty as a noise source, and the unpaired interval shows how much.
`s` swaps the baseline with the row's candidate. The list on the right holds every
compared query, largest losses first; Enter drills into one (so does Enter on a largest
loss or gain). Intervals are per comparison, not simultaneous.
"""
    AUTO_FOCUS = "#cmp-rows"  # ↑/↓ pick the row shown in the panel; Tab reaches the lists, shift+Tab the options
    BINDINGS = [
        Binding("p", "toggle_paired", "Paired/unpaired", id="compare.paired"),
        Binding("s", "swap", "Swap", id="compare.swap", tooltip="Swap the baseline and the highlighted row's candidate"),
    ]

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.result: CompareResult | None = None
        self.baseline: str | None = None
        self.candidates: tuple[str, ...] = ()
        self.metrics: tuple[str, ...] = ()
        self.primary: str | None = None
        start = CompareSettings()  # `rankscope compare`'s defaults, until compose reads the dashboard's options
        self.correction = start.correction
        self.alternative = start.alternative
        self.exploratory = start.exploratory
        self.paired = True
        self.selected: tuple[str, str] | None = None  # (candidate, metric) of the row in the panel
        self.message: str | None = None
        self._chosen = False  # candidates picked by hand
        self._timer: Timer | None = None

    def compose_body(self) -> ComposeResult:
        start = self.options.compare
        self.correction, self.alternative, self.exploratory = start.correction, start.alternative, start.exploratory
        self.primary = start.primary
        with Horizontal(id="cmp-main"):
            with VerticalScroll(id="cmp-center"):
                yield Static("", id="cmp-family", classes="caption")
                yield PlainTable(id="cmp-rows", cursor_type="row", zebra_stripes=True)
                yield Static(self.waiting("loading"), id="cmp-verdict", classes="panel")
                yield TermPlot(id="cmp-plot")
                yield Static("", id="cmp-plot-key", classes="caption")
                yield Static("", id="cmp-ties", classes="panel")
                yield Label("Largest losses and gains (share of the total loss / gain)", classes="section-title")
                yield QidTable(id="cmp-extremes")
                yield Static("", id="cmp-caption", classes="caption")
            with VerticalScroll(id="cmp-controls", can_focus=False):
                with Horizontal(classes="field"):
                    yield Label("baseline")
                    yield Select([], id="cmp-baseline", allow_blank=True, prompt="baseline", compact=True)
                yield Label("candidates", classes="field-title")
                yield SelectionList(id="cmp-candidates", compact=True)
                yield Label("metrics", classes="field-title")
                yield SelectionList(id="cmp-metrics", compact=True)
                with Horizontal(classes="field"):
                    yield Label("primary")
                    yield Select([("(none)", NO_PRIMARY)], value=NO_PRIMARY, id="cmp-primary", allow_blank=False,
                                 compact=True)
                with Horizontal(classes="field"):
                    yield Label("correction")
                    yield Select([(c, c) for c in CORRECTIONS], value=self.correction, id="cmp-correction", allow_blank=False,
                                 compact=True)
                with Horizontal(classes="field"):
                    yield Label("alternative")
                    yield Select([(a, a) for a in ALTERNATIVES], value=self.alternative, id="cmp-alternative",
                                 allow_blank=False, compact=True)
                with Horizontal(classes="field"):
                    yield Label("min Δ")
                    yield number_input(f"{start.min_delta:g}", id="cmp-min-delta", compact=True)
                yield Checkbox("paired interval", True, id="cmp-paired", compact=True)
                yield Checkbox("exploratory", self.exploratory, id="cmp-exploratory", compact=True)
            with Vertical(id="cmp-right"):
                yield Label("Per-query Δ, largest losses first", id="cmp-deltas-title", classes="section-title")
                yield QidTable(id="cmp-deltas")

    # ------------------------------------------------------------------ choices

    def refresh_view(self) -> None:
        ws = self.ws
        if ws is None:
            return
        lanes = list(ws.lanes)
        metrics = [m.key for m in ws.settings.metrics]
        start = self.options.compare
        if self.baseline not in lanes and self.baseline != BEST:
            self.baseline = start.baseline if start.baseline in lanes or start.baseline == BEST else ws.input_lanes[0]
        if not self._chosen or any(c not in lanes for c in self.candidates):
            # `rankscope compare` without --candidate: the kernel's default (the input lanes; a
            # derived lane such as rrf only when ticked), again when lanes change, unless picked by hand
            self.candidates = self._default_candidates()
        if not self.metrics or any(m not in metrics for m in self.metrics):
            self.metrics = tuple(m for m in start.metrics if m in metrics) or (metrics[0],)
        if self.primary not in self.metrics:
            self.primary = None
        self._set_choices()
        self.schedule(now=True)

    def _default_candidates(self) -> tuple[str, ...]:
        from ..kernel import default_candidates

        return default_candidates(self.ws, None if self.baseline == BEST else self.baseline)

    def _set_choices(self) -> None:
        """Put the current choices into the widgets without firing their change messages."""
        ws = self.ws
        lanes = list(ws.lanes)
        with self.prevent(Select.Changed, SelectionList.SelectedChanged, Input.Changed, Checkbox.Changed):
            base = self.query_one("#cmp-baseline", Select)
            base.set_options([(l, l) for l in lanes] + [("best (exploratory)", BEST)])
            base.value = self.baseline
            cands = self.query_one("#cmp-candidates", SelectionList)
            cands.clear_options()
            cands.add_options([Selection(l, l, l in self.candidates) for l in lanes if l != self.baseline])
            mets = self.query_one("#cmp-metrics", SelectionList)
            mets.clear_options()
            mets.add_options([Selection(m.key, m.key, m.key in self.metrics) for m in ws.settings.metrics])
            self._set_primary_options()

    def _set_primary_options(self) -> None:
        prim = self.query_one("#cmp-primary", Select)
        with self.prevent(Select.Changed):
            prim.set_options([("(none)", NO_PRIMARY)] + [(m, m) for m in self.metrics])
            prim.value = self.primary if self.primary in self.metrics else NO_PRIMARY

    def params(self) -> CompareParams | None:
        try:
            md = float(self.query_one("#cmp-min-delta", Input).value or 0)
        except ValueError:
            return None
        if self.baseline is None or not math.isfinite(md):
            return None
        cands = tuple(c for c in self.candidates if c != self.baseline)
        return CompareParams(self.baseline, cands, self.metrics, self.primary, self.correction, self.alternative,
                             md, self.exploratory)

    @on(Select.Changed)
    def _select(self, event: Select.Changed) -> None:
        if event.value is Select.NULL or self.ws is None:
            return
        v = str(event.value)
        sid = event.select.id
        if sid == "cmp-baseline":
            if v == self.baseline:
                return
            self.baseline = v
            if not self._chosen:
                self.candidates = self._default_candidates()
            self._set_choices()  # the baseline is no candidate of itself
        elif sid == "cmp-primary":
            self.primary = None if v == NO_PRIMARY else v
        elif sid == "cmp-correction":
            self.correction = v
        elif sid == "cmp-alternative":
            self.alternative = v
        else:
            return
        self.schedule()

    @on(SelectionList.SelectedChanged)
    def _picked(self, event: SelectionList.SelectedChanged) -> None:
        if self.ws is None:
            return
        chosen = set(event.selection_list.selected)
        if event.selection_list.id == "cmp-candidates":
            self.candidates = tuple(l for l in self.ws.lanes if l in chosen)
            self._chosen = True
        elif event.selection_list.id == "cmp-metrics":
            self.metrics = tuple(m.key for m in self.ws.settings.metrics if m.key in chosen)
            if self.primary not in self.metrics:
                self.primary = None
            self._set_primary_options()
        self.schedule()

    @on(Input.Changed, "#cmp-min-delta")
    def _min_delta(self) -> None:
        self.schedule()

    @on(Checkbox.Changed, "#cmp-exploratory")
    def _exploratory(self, event: Checkbox.Changed) -> None:
        self.exploratory = event.value
        self.schedule()

    @on(Checkbox.Changed, "#cmp-paired")
    def _paired(self, event: Checkbox.Changed) -> None:
        self.paired = event.value
        if self.result is not None:
            self._draw_row()

    def action_toggle_paired(self) -> None:
        box = self.query_one("#cmp-paired", Checkbox)
        box.value = not box.value

    def action_swap(self) -> None:
        """The highlighted row's candidate becomes the baseline, the baseline a candidate."""
        if self.ws is None or self.result is None or self.selected is None:
            return
        new_base = self.selected[0]
        old = self.result.plan.baseline
        self.baseline = new_base
        self.candidates = tuple(l for l in self.ws.lanes if (l in self.candidates or l == old) and l != new_base)
        self._chosen = True
        self.selected = (old, self.selected[1])
        self._set_choices()
        self.schedule(now=True)

    # ------------------------------------------------------------------ compute

    def schedule(self, now: bool = False) -> None:
        """Recompute after a quiet moment (toggling three metrics starts one comparison)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if now:
            self.recompute()
        else:
            self._timer = self.set_timer(DEBOUNCE, self.recompute)

    def recompute(self) -> None:
        self._timer = None
        p = self.params()
        if self.ws is None or p is None:
            return
        why = None
        if not p.candidates:
            why = "Pick at least one candidate other than the baseline."
        elif not p.metrics:
            why = "Pick at least one metric."
        verdict = self.query_one("#cmp-verdict", Static)
        if why:
            self.message = why
            verdict.update(why)
            self.query_one("#cmp-ties", Static).update("")  # no row: no tie flag, no power
            return
        was_message, self.message = self.message is not None, None
        if self.result is not None and self.result.params == p and self.result.ws is self.ws:
            # a revisit with the same settings on the same data: what is drawn is current
            verdict.loading = False
            if was_message:
                self._draw_row()
            return
        verdict.loading = True
        self.run_compare(self.ws, p)

    @work(thread=True, exclusive=True, group="compare", exit_on_error=False, description="paired tests")
    def run_compare(self, ws, p: CompareParams) -> None:
        r = compute_compare(ws, p, self.state.thresholds())
        self.app.call_from_thread(self._done, r)

    def worker_failed(self, worker) -> None:
        self.query_one("#cmp-verdict", Static).loading = False

    @guarded
    def _done(self, r: CompareResult) -> None:
        if r.params != self.params():  # a newer choice is on its way
            return
        self.result = r
        self.state.compare_payload = r.payload  # the Compare figure of the export draws it
        self.query_one("#cmp-verdict", Static).loading = False
        keys = [(row.candidate, row.metric) for row in r.result.rows]
        if self.selected not in keys:
            self.selected = keys[0] if keys else None
        self._fill_rows()
        self._draw_row()

    # ------------------------------------------------------------------ drawing

    @property
    def row(self):
        """The comparison row shown in the panel."""
        if self.result is None or self.selected is None:
            return None
        return next((r for r in self.result.result.rows if (r.candidate, r.metric) == self.selected), None)

    def _fill_rows(self) -> None:
        r = self.result
        if r is None:
            return
        res, plan = r.result, r.plan
        t = self.query_one("#cmp-rows", PlainTable)
        rows = []
        for i, row in enumerate(res.rows):
            if row.adjusted_p is not None:
                p = f"{row.adjusted_p:.4f} adj."
            elif row.randomization_p is not None:
                p = f"{row.randomization_p:.4f} raw"
            else:
                p = "—"
            rows.append(([row.candidate, row.metric, f"{row.difference:+.4f}", p, self._verdict_text(row)], f"{i}"))
        t.fill(["candidate", "metric", "mean Δ", "p", "verdict"], rows)
        keys = [(row.candidate, row.metric) for row in res.rows]
        if self.selected in keys:
            with self.prevent(DataTable.RowHighlighted):
                t.move_cursor(row=keys.index(self.selected))
        fam = (f"[b]{escape(plan.baseline)}[/] against {len(plan.candidates)} candidate(s) × {len(plan.metrics)} "
               f"metric(s) = {len(res.rows)} rows · family of [b]{res.family_size}[/]"
               + (f" (primary {escape(res.primary)})" if res.primary else "")
               + f" · correction {res.correction} · α = {res.alpha:.4g} · {r.params.alternative} · "
               f"min Δ {res.min_delta:g} · B = {res.rows[0].resamples:,}" if res.rows else "")
        reasons = [f"[b $warning]exploratory[/] ({'every row' if k == '*' else escape(k)}): {escape(v)}"
                   for k, v in plan.exploratory_reasons.items()]
        warns = [f"[$warning]⚠ {escape(w)}[/]" for w in res.warnings]
        self.query_one("#cmp-family", Static).update("\n".join([fam, *reasons, *warns]))
        self.query_one("#cmp-caption", Static).update(CAPTION)

    def _verdict_text(self, row):
        from rich.text import Text

        var = _VERDICT_COLOUR.get(row.verdict)
        colour = self.app.theme_variables.get(var, "") if var else self.app.theme_variables.get("text-muted", "")
        return Text(row.verdict_text, style=f"bold {colour}".strip() if var else colour)

    @on(DataTable.RowHighlighted, "#cmp-rows")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.result is None or getattr(event.row_key, "value", None) is None or event.cursor_row != event.data_table.cursor_row:
            return  # a highlight from refilling the table, overtaken by the cursor put back on the chosen row
        row = self.result.result.rows[int(str(event.row_key.value))]
        if (row.candidate, row.metric) != self.selected:
            self.selected = (row.candidate, row.metric)
            self._draw_row()

    def _draw_row(self) -> None:
        row, r = self.row, self.result
        if row is None or r is None:
            return
        self.query_one("#cmp-verdict", Static).update(self._panel(row, r))
        self.query_one("#cmp-ties", Static).update(self._ties_and_power(row))
        self._fill_extremes(row)
        self._plot(row)
        # the per-query list (every positive query) in the next frame: rendering its rows in
        # the same frame as the panel, the extremes and the plot held the loop ~160 ms
        self.draw_after_refresh(self._fill_deltas_later, row, r)

    def _fill_deltas_later(self, row, r: CompareResult) -> None:
        if not self.is_mounted or self.result is not r or self.row is not row:
            return  # another row (or comparison) is drawn meanwhile: it fills its own list
        try:
            self._fill_deltas(row, r)
        except Exception as exc:  # as in refresh_view: show it, keep running
            self.log.error(f"_fill_deltas failed: {exc!r}")
            self.app.show_error(exc)

    def _panel(self, row, r: CompareResult) -> str:
        res = r.result
        B = row.resamples
        style = f"${_VERDICT_COLOUR[row.verdict]}" if row.verdict in _VERDICT_COLOUR else "$text-muted"
        side = "two-sided" if row.alternative == "two-sided" else f"one-sided: {row.alternative}"
        L = [f"[b]{escape(row.candidate)}[/] vs [b]{escape(row.baseline)}[/] on [b]{escape(row.metric)}[/] "
             f"({r.plan.level} level) — verdict: [b {style}]{escape(row.verdict_text)}[/]"]
        if row.in_family:
            L.append(f"tested in a family of {res.family_size} ({row.correction}): threshold {fmt.num(row.threshold, 4)}; "
                     f"better/worse needs adjusted p ≤ α = {res.alpha:.4g} and |mean Δ| ≥ {res.min_delta:g}")
        elif row.exploratory:
            L.append("[$warning]exploratory[/]: raw p only, never adjusted, never established")
        else:
            L.append(f"descriptive: outside the primary family (primary {escape(str(res.primary))}); not tested")
        L.append(f"means {fmt.num(row.baseline_mean, 4)} → {fmt.num(row.candidate_mean, 4)} · mean Δ "
                 f"[b]{row.difference:+.4f}[/] · median Δ {row.median_difference:+.4f}")
        L.append(f"n {row.n} (unit: query) · n_nonzero {row.n_nonzero} · wins/losses/ties "
                 f"{row.wins}/{row.losses}/{row.ties} · tie rate {fmt.pct(row.tie_rate)}")
        paired = fmt.interval(row.ci_low, row.ci_high, 4) or "—"
        unpaired = fmt.interval(row.unpaired_ci_low, row.unpaired_ci_high, 4) or "—"
        if self.paired:
            paired = f"[b]{paired}[/] ◀"
        else:
            unpaired = f"[b]{unpaired}[/] ◀"
        L.append(f"bootstrap {row.confidence:g} interval ({side}): paired {paired} · unpaired {unpaired}")
        if row.n_nonzero == 0:  # every Δ is 0: a share of 0 would read as a verdict for the baseline
            L.append("p_superiority — (no variation: every difference is 0)")
        else:
            L.append(f"p_superiority {fmt.num(row.p_superiority, 4)} (share of replicates with Δ* > 0; not P(better))")
        rand = f"randomization ({side}, B = {B:,}): {format_p(row.randomization_p, B)}"
        if row.in_family:
            rand += f" · adjusted ({row.correction}, J = {res.family_size}): {format_p(row.adjusted_p, B, res.family_size)}"
        L.append(rand)
        L.append(f"paired t-test {format_p(row.t_p)} · BCa at {fmt.num(row.bca_level, 4)}: "
                 f"{fmt.interval(row.bca_low, row.bca_high, 4) or '— (degenerate)'}")
        L.append(f"effect size {fmt.num(row.effect_size, 3)} (mean Δ / sd Δ, paired; not Cohen's d)")
        flags = (("t-test", row.t_agrees), ("BCa interval", row.interval_agrees), ("p_superiority", row.bootstrap_agrees))
        L.append("agreement: " + " · ".join(f"{n} {self._flag(v)}" for n, v in flags))
        sentence = r.sentence(row)
        if sentence:
            L.append(f"[i]{escape(sentence)}[/]")
        L += [f"[$warning]✗ {escape(d)}[/]" for d in row.disagreements]
        L += [f"[$warning]⚠ {escape(w)}[/]" for w in row.warnings]
        return "\n".join(L)

    def _ties_and_power(self, row) -> str:
        """Under the plot (the panel above it stays short enough for the plot to be on
        screen at 140×45): the row's tie-order flag, then its power line."""
        lines = [self.tie_order_line(row)]
        power = row_line(row)  # the kernel's MDE, randomization floor and queries needed, in the text's words
        if power:  # the panel names the pair already
            lines.append(f"power: {escape(power.removeprefix(f'{row.candidate} vs {row.baseline} on {row.metric}: '))}")
        return "\n".join(lines)

    @staticmethod
    def tie_order_line(row) -> str:
        """The row's tie-order flag (``verdict.TieFlip``): whether another order of tied
        scores could flip the verdict, and the Δ range over the extreme orders."""
        tf = row.tie_order
        if tf is None:
            return "tie order: not assessed (doc level and ranked lanes only, for the measures ties covers)"
        if not tf.dependent_queries:
            return "tie order [b]✓[/]: no positive's value depends on the order of tied scores"
        span = (f"over {tf.dependent_queries} tie-dependent queries Δ runs from {tf.delta_low:+.4f} to "
                f"{tf.delta_high:+.4f} (verdicts {escape(tf.verdict_low)} / {escape(tf.verdict_high)})")
        if tf.could_flip:
            return f"[b $warning]tie order ✗: a different tie order could flip the verdict[/] — {span}"
        return f"tie order [b]✓[/]: the verdict holds under every tie order — {span}"

    @staticmethod
    def _flag(v) -> str:
        return "n/a" if v is None else ("agrees" if v else "[b $warning]DISAGREES[/]")

    def _fill_extremes(self, row) -> None:
        rows = [([kind, x.qid, fmt.num(x.baseline), fmt.num(x.candidate), f"{x.difference:+.3f}", fmt.pct(x.share),
                  fmt.num(x.baseline_judged, 2), fmt.num(x.candidate_judged, 2)], x.qid)
                for kind, items in (("loss", row.largest_losses), ("gain", row.largest_gains)) for x in items]
        if not rows:
            rows = [(["", "no query differs", "", "", "", "", "", ""], "\0none")]
        self.query_one("#cmp-extremes", QidTable).fill(["", "qid", "base", "cand", "Δ", "share", "j@10 b", "j@10 c"], rows)

    def _fill_deltas(self, row, r: CompareResult) -> None:
        ws = self.ws
        self.query_one("#cmp-deltas-title", Label).update(
            f"Per-query Δ = {escape(row.candidate)} − {escape(row.baseline)} on {row.metric}, largest losses first; "
            f"j: judged@10 of base / cand (Enter: drill down)")
        jb, jc = r.judged[row.baseline], r.judged[row.candidate]
        idx = ws.qid_index
        rows = [([qid, fmt.num(b), fmt.num(c), f"{d:+.3f}", fmt.num(jb[idx[qid]], 1), fmt.num(jc[idx[qid]], 1)], qid)
                for qid, b, c, d in r.deltas[(row.candidate, row.metric)]]
        self.query_one("#cmp-deltas", QidTable).fill(["qid", "base", "cand", "Δ", "j b", "j c"], rows)

    def _plot(self, row) -> None:
        plot = self.query_one("#cmp-plot", TermPlot)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        rows = [("paired", row.ci_low, row.ci_high, 2), ("unpaired", row.unpaired_ci_low, row.unpaired_ci_high, 1)]
        # no legend in the plot (it covered the paired interval): the y axis names the two rows and
        # the key line under the plot says what the marks are
        xs = [0.0, row.difference] + [v for _, lo, hi, _ in rows for v in (lo, hi) if v is not None and math.isfinite(v)]
        span = max(abs(min(xs)), abs(max(xs))) * 1.15 or 1.0
        for name, lo, hi, y in rows:
            if lo is None or hi is None:
                continue
            lo, hi = max(lo, -span), min(hi, span)  # a one-sided interval runs to ±∞: draw it to the edge
            on = (name == "paired") == self.paired
            plt.plot([lo, hi], [y, y], marker="█" if on else "─")
        plt.scatter([row.difference], [1.5], marker="●")
        plt.vline(0)
        plt.xlim(-span, span)
        plt.ylim(0.5, 2.5)
        plt.yticks([1, 2], ["unpaired", "paired"])
        chosen = "paired" if self.paired else "unpaired"
        self.query_one("#cmp-plot-key", Static).update(
            f"rows: paired and unpaired {row.confidence:g} bootstrap intervals of the mean Δ (█ the one in use: "
            f"{chosen}) · ● mean Δ {row.difference:+.4f} · vertical line: 0")
        plt.title(f"mean Δ of {row.candidate} − {row.baseline} on {row.metric} (0 = no difference)")
        plot.refresh()
