"""7 Compare: baseline, candidate, metric; the verdict panel with every number of SPEC §7,
a paired/unpaired toggle, and the per-query deltas, largest losses first (lesson 12)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input, Label, Select, Static, Switch
from textual_plotext import PlotextPlot

from ..widgets import fmt
from .base import QidTable, ViewScreen, kernel_module, guarded


@dataclass(frozen=True)
class CompareParams:
    baseline: str
    candidate: str
    metric: str
    level: str
    min_delta: float


@dataclass
class CompareResult:
    params: CompareParams
    row: object  # compare.ComparisonRow
    result: object  # compare.CompareResult
    qids: list
    baseline: np.ndarray
    candidate: np.ndarray
    judged: dict  # lane -> judged@10 per compared query (None when not a metric)


def compute_compare(ws, p: CompareParams, thresholds_path: str | None) -> CompareResult:
    """``pipeline.plan_compare`` + ``run_compare``: what `rankscope compare` runs for one row."""
    from ..kernel import pipeline as P

    s = ws.settings
    th = P.read_thresholds(thresholds_path) if thresholds_path else None
    plan = P.plan_compare(ws, th, p.baseline, [p.candidate], [p.metric], level=p.level)
    res = P.run_compare(ws, plan, resamples=s.resamples, seed=s.seed, confidence=s.confidence,
                        alternative="two-sided", correction="holm", primary=None, min_delta=p.min_delta)
    pos = ws.positives
    qids = [str(q) for q in ws.qids[pos].tolist()]
    b = ws.per_query(p.baseline, p.level)[p.metric][pos]
    c = ws.per_query(p.candidate, p.level)[p.metric][pos]
    judged = {}
    if "judged@10" in [m.key for m in s.metrics]:
        for lane in (p.baseline, p.candidate):
            judged[lane] = ws.per_query(lane, p.level)["judged@10"][pos]
    return CompareResult(p, res.rows[0], res, qids, b, c, judged)


class CompareScreen(ViewScreen):
    VIEW = "compare"
    HELP = """# 7 Compare

**Lesson 12: paired bootstrap — is B really better than A?** Two systems scored on the same
queries give one Δ = candidate − baseline per query. The paired bootstrap resamples
queries and reads the interval of the mean Δ and p_superiority (the share of replicates
with Δ* > 0 — not a probability that B is better); the randomization test flips signs.
**better** needs the (Holm-adjusted) p ≤ α *and* the mean Δ to clear the minimum effect you
chose; otherwise "no improvement shown" — never a loss.

`p` toggles paired/unpaired: pairing removes query difficulty as a noise source, and the
unpaired interval shows how much. The list holds every compared query, largest losses
first; Enter drills into one. Intervals are per comparison, not simultaneous.
"""
    BINDINGS = [
        Binding("p", "toggle_paired", "Paired/unpaired", id="compare.paired"),
        Binding("s", "swap", "Swap", id="compare.swap", tooltip="Swap baseline and candidate"),
    ]

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.result: CompareResult | None = None
        self.baseline: str | None = None
        self.candidate: str | None = None
        self.metric: str | None = None
        self.paired = True
        self._timer = None

    def compose_body(self) -> ComposeResult:
        with Horizontal(classes="controls"):
            yield Label("baseline")
            yield Select([], id="cmp-baseline", allow_blank=True, prompt="baseline")
            yield Label("candidate")
            yield Select([], id="cmp-candidate", allow_blank=True, prompt="candidate")
            yield Label("metric")
            yield Select([], id="cmp-metric", allow_blank=True, prompt="metric")
            yield Label("min Δ")
            yield Input("0", type="number", id="cmp-min-delta")
            yield Label("paired")
            yield Switch(True, id="cmp-paired")
        with Horizontal(id="cmp-main"):
            with VerticalScroll(id="cmp-left"):
                yield Static(self.waiting("loading"), id="cmp-verdict", classes="panel")
                yield PlotextPlot(id="cmp-plot")
                yield Static("", id="cmp-caption", classes="caption")
            with Vertical(id="cmp-right"):
                yield Label("Per-query Δ, largest losses first (Enter: drill down)", classes="section-title")
                yield QidTable(id="cmp-deltas")

    # ------------------------------------------------------------------ choices

    def _workspace(self):
        return self.ws

    def refresh_view(self) -> None:
        ws = self.ws
        if ws is None:
            return
        if kernel_module("compare") is None:
            self.query_one("#cmp-verdict", Static).update("waiting for kernel/compare.py")
            return
        w = self._workspace()
        lanes = list(w.lanes)
        metrics = [m.key for m in ws.settings.metrics]
        if self.baseline not in lanes:
            self.baseline = ws.input_lanes[0]
        if self.candidate not in lanes or self.candidate == self.baseline:
            self.candidate = "rrf" if "rrf" in lanes else next((l for l in lanes if l != self.baseline), self.baseline)
        if self.metric not in metrics:
            self.metric = "ndcg@10" if "ndcg@10" in metrics else metrics[0]
        with self.prevent(Select.Changed):
            for sid, opts, val in (("#cmp-baseline", lanes, self.baseline), ("#cmp-candidate", lanes, self.candidate),
                                   ("#cmp-metric", metrics, self.metric)):
                sel = self.query_one(sid, Select)
                sel.set_options([(o, o) for o in opts])
                sel.value = val
        self.recompute()

    def params(self) -> CompareParams | None:
        try:
            md = float(self.query_one("#cmp-min-delta", Input).value or 0)
        except ValueError:
            return None
        if None in (self.baseline, self.candidate, self.metric):
            return None
        return CompareParams(self.baseline, self.candidate, self.metric, "doc", md)

    @on(Select.Changed)
    def _select(self, event: Select.Changed) -> None:
        if event.value is Select.NULL or self.ws is None:
            return
        setattr(self, {"cmp-baseline": "baseline", "cmp-candidate": "candidate", "cmp-metric": "metric"}[event.select.id],
                str(event.value))
        self.recompute()

    @on(Input.Changed, "#cmp-min-delta")
    def _min_delta(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(0.2, self.recompute)

    @on(Switch.Changed, "#cmp-paired")
    def _paired(self, event: Switch.Changed) -> None:
        self.paired = event.value
        if self.result is not None:
            self._draw(self.result)

    def action_toggle_paired(self) -> None:
        sw = self.query_one("#cmp-paired", Switch)
        sw.value = not sw.value

    def action_swap(self) -> None:
        self.baseline, self.candidate = self.candidate, self.baseline
        self.refresh_view()

    # ------------------------------------------------------------------ compute and draw

    def recompute(self) -> None:
        p = self.params()
        if self.ws is None or p is None:
            return
        if p.baseline == p.candidate:
            self.query_one("#cmp-verdict", Static).update("Pick two different lanes.")
            return
        self.query_one("#cmp-verdict", Static).loading = True
        self.run_compare(self._workspace(), p, getattr(self.app.args, "thresholds", None))

    @work(thread=True, exclusive=True, group="compare", exit_on_error=False, description="paired bootstrap")
    def run_compare(self, ws, p: CompareParams, thresholds_path: str | None) -> None:
        r = compute_compare(ws, p, thresholds_path)
        self.app.call_from_thread(self._done, r)

    def worker_failed(self, worker) -> None:
        self.query_one("#cmp-verdict", Static).loading = False

    @guarded
    def _done(self, r: CompareResult) -> None:
        if r.params != self.params():
            return
        self.result = r
        self.query_one("#cmp-verdict", Static).loading = False
        self._draw(r)
        self._fill_deltas(r)

    def _draw(self, r: CompareResult) -> None:
        C = kernel_module("compare")
        row = r.row
        conf = row.confidence
        B = row.resamples
        pw = (row.ci_high - row.ci_low) if row.ci_low is not None else None
        uw = (row.unpaired_ci_high - row.unpaired_ci_low) if row.unpaired_ci_low is not None else None
        featured = ("paired bootstrap", row.ci_low, row.ci_high) if self.paired else \
            ("unpaired bootstrap", row.unpaired_ci_low, row.unpaired_ci_high)
        verdict_style = {"better": "$success", "worse": "$error"}.get(row.verdict, "$warning")
        L = [
            f"[b]{row.candidate}[/] vs [b]{row.baseline}[/] on [b]{row.metric}[/] (doc level) — verdict: "
            f"[b {verdict_style}]{row.verdict_text}[/]" + ("  [reverse] exploratory [/]" if row.exploratory else ""),
            f"means: baseline {fmt.num(row.baseline_mean, 4)}, candidate {fmt.num(row.candidate_mean, 4)}; "
            f"mean Δ [b]{fmt.num(row.difference, 4)}[/], median Δ {fmt.num(row.median_difference, 4)}",
            f"n = {row.n} queries (unit: query), n_nonzero {row.n_nonzero}, wins / losses / ties "
            f"{row.wins} / {row.losses} / {row.ties}, tie rate {fmt.pct(row.tie_rate)}",
            f"[b]{featured[0]}[/] {conf:g} interval of mean Δ: [b]{fmt.interval(featured[1], featured[2], 4) or '—'}[/]"
            + (f"   (paired width {fmt.num(pw, 4)} vs unpaired {fmt.num(uw, 4)}: pairing removes "
               f"{fmt.pct(1 - pw / uw) if uw else '—'} of it)" if pw is not None and uw else ""),
            f"p_superiority {fmt.num(row.p_superiority, 4)} (share of replicates with Δ* > 0; not P(better))",
            f"randomization test (two-sided, B = {B:,}): {C.format_p(row.randomization_p, B)}; "
            f"adjusted ({row.correction}, family of {r.result.family_size}): {C.format_p(row.adjusted_p, B, r.result.family_size)}"
            + (f"; threshold {fmt.num(row.threshold, 4)}" if row.threshold is not None else ""),
            f"paired t-test {C.format_p(row.t_p)}; BCa at {fmt.num(row.bca_level, 4)}: "
            f"{fmt.interval(row.bca_low, row.bca_high, 4) or '— (degenerate)'}",
            f"effect size (mean Δ / sd Δ, paired; not Cohen's d): {fmt.num(row.effect_size, 3)}; min Δ {r.params.min_delta:g}",
            "agreement: " + ", ".join(f"{name} {self._flag(v)}" for name, v in
                                      (("t-test", row.t_agrees), ("BCa interval", row.interval_agrees),
                                       ("bootstrap P≥bar", row.bootstrap_agrees))),
        ]
        L += [f"[$warning]⚠ {d}[/]" for d in row.disagreements]
        L += [f"[$warning]⚠ {w}[/]" for w in (*row.warnings, *r.result.warnings)]
        judged = r.judged

        def qd(x) -> str:
            i = r.qids.index(x.qid)
            j = "" if not judged else "  judged@10 " + "/".join(fmt.num(judged[l][i], 2) for l in (row.baseline, row.candidate))
            return f"{x.qid}: {fmt.num(x.baseline)} → {fmt.num(x.candidate)} (Δ {fmt.num(x.difference)}){j}"

        L.append("[b]largest losses[/]: " + ("; ".join(qd(x) for x in row.largest_losses) or "none"))
        L.append("[b]largest gains[/]: " + ("; ".join(qd(x) for x in row.largest_gains) or "none"))
        self.query_one("#cmp-verdict", Static).update("\n".join(L))
        self.query_one("#cmp-caption", Static).update(C.CAPTION)
        self._plot(row)

    @staticmethod
    def _flag(v) -> str:
        return "n/a" if v is None else ("agrees" if v else "[b $warning]DISAGREES[/]")

    def _plot(self, row) -> None:
        plot = self.query_one("#cmp-plot", PlotextPlot)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        rows = [("paired", row.ci_low, row.ci_high, 2), ("unpaired", row.unpaired_ci_low, row.unpaired_ci_high, 1)]
        xs = [0.0, row.difference]
        for name, lo, hi, y in rows:
            if lo is None:
                continue
            xs += [lo, hi]
            on = (name == "paired") == self.paired
            plt.plot([lo, hi], [y, y], marker="█" if on else "─", label=f"{name} {row.confidence:g} interval" + (" ◀" if on else ""))
        plt.scatter([row.difference], [1.5], marker="●", label="mean Δ")
        plt.vline(0)
        span = max(abs(min(xs)), abs(max(xs))) * 1.15 or 1.0
        plt.xlim(-span, span)
        plt.ylim(0, 3)
        plt.yticks([])
        plt.title("mean Δ and its intervals (0 = no difference)")
        plot.refresh()

    def _fill_deltas(self, r: CompareResult) -> None:
        t = self.query_one("#cmp-deltas", QidTable)
        t.clear(columns=True)
        row = r.row
        cols = ["qid", row.baseline, row.candidate, "Δ"]
        if r.judged:
            cols += [f"j@10 {row.baseline}", f"j@10 {row.candidate}"]
        t.add_columns(*cols)
        delta = r.candidate - r.baseline  # Δ as the kernel defines it (candidate − baseline), for listing
        order = np.argsort(delta, kind="stable")  # qids are in byte order: ties stay in qid order
        for i in order.tolist():
            cells = [r.qids[i], fmt.num(r.baseline[i]), fmt.num(r.candidate[i]), fmt.num(delta[i])]
            if r.judged:
                cells += [fmt.num(r.judged[row.baseline][i], 2), fmt.num(r.judged[row.candidate][i], 2)]
            t.add_row(*cells, key=r.qids[i])
