"""6 Gate: FNIR against FPIR, null and conformal floors, the operating point at a target
FPIR, margin and mutual conditions, in-domain vs out-of-domain negatives, and the
Wilson / rule-of-three table (lessons 09–11)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Input, Label, Select, Static, Switch
from textual_plotext import PlotextPlot

from ..widgets import fmt
from .base import PlainTable, ViewScreen, kernel_module, parse_optional_number, guarded

NEG_LABELS = {"in_domain": "in-domain", "out_of_domain": "out-of-domain"}


@dataclass(frozen=True)
class GateParams:
    lane: str
    target: float
    conservative: bool
    alpha: float
    margin: float | None
    mutual: int | None
    confidence: float


@dataclass
class GateResult:
    params: GateParams
    view: object  # pipeline.GateView: floors, sweeps and operating points, as the report computes them
    sweep: object  # the floor sweep drawn (with the margin / mutual conditions when active)
    negatives: dict
    at_null: dict
    at_conformal: object
    operating: object  # OperatingPoint on the in-domain negatives
    outcome: object
    mutual_summary: dict | None
    rule_of_three: list
    zero_event: tuple | None

    @property
    def nulls(self) -> dict:
        return self.view.null

    @property
    def conformal(self):
        return self.view.conformal

    @property
    def op_margin(self):
        return self.view.operating_margin if self.params.margin is not None else None


def compute_gate(ws, p: GateParams) -> GateResult:
    """Every number of the Gate view: ``pipeline.gate_view`` (what the report's gate block
    uses) plus the gate outcome under the conditions chosen here (runs in a worker)."""
    from ..kernel import gate as G
    from ..kernel import pipeline as P

    I = kernel_module("intervals")
    view = P.gate_view(ws, p.lane, p.target, p.conservative, p.alpha, p.mutual)
    negs = view.negatives
    top, pos = view.top, view.positives
    sw = view.sweep
    if p.margin is not None or p.mutual is not None:
        sw = G.sweep(top, pos, negs, p.margin, view.mutual, p.mutual, p.confidence)
    op = G.operating_point(sw, p.target, p.conservative, p.confidence, negative_set="in_domain")
    at_null = {k: G.gate_outcome(top, pos, negs, floor=nf.floor, confidence=p.confidence)
               for k, nf in view.null.items() if nf.floor is not None}
    at_conf = G.gate_outcome(top, pos, negs, floor=view.conformal.floor, confidence=p.confidence)
    outcome = G.gate_outcome(top, pos, negs, floor=op.floor, margin=p.margin, mutual=view.mutual, r=p.mutual,
                             confidence=p.confidence)
    rot = G.rule_of_three_table(confidence=p.confidence)
    n_neg = int(negs["in_domain"].size)
    zero = I.zero_event_bounds(n_neg, p.confidence) if (I is not None and n_neg and hasattr(I, "zero_event_bounds")) else None
    mutual_summary = view.mutual.summary(p.mutual) if view.mutual is not None and p.mutual is not None else None
    return GateResult(p, view, sw, {k: int(v.size) for k, v in negs.items()}, at_null, at_conf, op, outcome,
                      mutual_summary, rot, zero)


class GateScreen(ViewScreen):
    VIEW = "gate"
    HELP = """# 6 Gate

**Lessons 09–11: should the system have said "not found"?** A query is accepted when its
top score clears the floor (and every active margin / mutual condition passes). A wrong
top hit on a positive counts as a miss (1:N identification): FNIR = (rejected +
wrong accept) / positives; FPIR = accepted negatives / negatives, each with a Wilson
interval.

- **Null floor**: mean + 3·sd of the negatives' top scores — relative evidence only, and
  a property of the negatives you fed it: an out-of-domain floor looks safe and is not.
- **Conformal floor**: bounds rejected positives (not false accepts); −∞ when n is too
  small. Computed on the shown queries it is **in-sample, no guarantee**.
- **Operating point**: the smallest floor with FPIR ≤ target on the in-domain negatives
  (point estimate, or the Wilson upper bound when *conservative*). Picked on the negatives
  shown here it is **tuning**, not a threshold.
- The table: negatives needed to bound a false-accept rate with zero false accepts.

Edit the target FPIR, α, margin (blank = off) and mutual r (blank = off); `c` toggles
conservative.
"""
    BINDINGS = [
        Binding("c", "toggle_conservative", "Conservative", id="gate.conservative"),
        Binding("plus,equals_sign", "nudge_target(1)", "FPIR+", id="gate.fpir_up", show=False),
        Binding("minus", "nudge_target(-1)", "FPIR−", id="gate.fpir_down", show=False),
    ]

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.result: GateResult | None = None
        self.lane: str | None = None
        self._timer = None

    def compose_body(self) -> ComposeResult:
        with Horizontal(classes="controls"):
            yield Label("gate lane")
            yield Select([], id="gate-lane", allow_blank=True, prompt="lane")
            yield Label("target FPIR")
            yield Input("0.05", type="number", id="gate-target")
            yield Label("α")
            yield Input("0.05", type="number", id="gate-alpha")
            yield Label("margin")
            yield Input("", type="number", id="gate-margin", placeholder="off")
            yield Label("mutual r")
            yield Input("", type="integer", id="gate-mutual", placeholder="off")
            yield Label("conservative")
            yield Switch(False, id="gate-conservative")
        with Horizontal(id="gate-main"):
            with Vertical(id="gate-left"):
                yield PlotextPlot(id="gate-plot")
                yield Static("", id="gate-legend", classes="caption")
            with VerticalScroll(id="gate-right"):
                yield Static(self.waiting("loading"), id="gate-floors", classes="panel")
                yield Label("Negatives needed for zero false accepts", classes="section-title")
                yield PlainTable(id="gate-r3", cursor_type="row", zebra_stripes=True)
                yield Static("", id="gate-zero", classes="caption")

    def on_mount(self) -> None:
        super().on_mount()
        a = self.app.args
        with self.prevent(Input.Changed, Switch.Changed):
            self.query_one("#gate-target", Input).value = repr(getattr(a, "fpir", 0.05) or 0.05)
            self.query_one("#gate-alpha", Input).value = repr(getattr(a, "miss_rate", 0.05) or 0.05)
            if getattr(a, "margin", None) is not None:
                self.query_one("#gate-margin", Input).value = repr(a.margin)
            if getattr(a, "mutual", None) is not None:
                self.query_one("#gate-mutual", Input).value = str(a.mutual)
            self.query_one("#gate-conservative", Switch).value = bool(getattr(a, "conservative", False))

    # ------------------------------------------------------------------ parameters

    def refresh_view(self) -> None:
        ws = self.ws
        if ws is None:
            return
        lanes = list(ws.input_lanes) + [l for l in self.app.lane_names if l not in ws.input_lanes and "+" not in l]
        if self.lane not in lanes:
            want = getattr(self.app.args, "gate_on", None)
            self.lane = want if want in lanes else lanes[-1 if len(lanes) > 1 else 0]
        with self.prevent(Select.Changed):
            sel = self.query_one("#gate-lane", Select)
            sel.set_options([(l, l) for l in lanes])
            sel.value = self.lane
        self.recompute()

    def params(self) -> GateParams | None:
        try:
            target = float(self.query_one("#gate-target", Input).value)
            alpha = float(self.query_one("#gate-alpha", Input).value)
            margin = parse_optional_number(self.query_one("#gate-margin", Input).value, float)
            mutual = parse_optional_number(self.query_one("#gate-mutual", Input).value, int)
        except ValueError:
            return None
        if not (0 < target < 1 and 0 < alpha < 1) or (mutual is not None and mutual < 1):
            return None
        return GateParams(self.lane, target, self.query_one("#gate-conservative", Switch).value, alpha, margin, mutual,
                          self.ws.settings.confidence)

    @on(Input.Changed)
    def _input_changed(self, event: Input.Changed) -> None:
        if self.ws is None or not event.input.id or not event.input.id.startswith("gate-"):
            return
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(0.15, self.recompute)

    @on(Select.Changed, "#gate-lane")
    def _lane_changed(self, event: Select.Changed) -> None:
        if event.value is not Select.NULL:
            self.lane = str(event.value)
            self.recompute()

    @on(Switch.Changed, "#gate-conservative")
    def _switch(self) -> None:
        self.recompute()

    def action_toggle_conservative(self) -> None:
        sw = self.query_one("#gate-conservative", Switch)
        sw.value = not sw.value

    def action_nudge_target(self, steps: int) -> None:
        inp = self.query_one("#gate-target", Input)
        try:
            t = float(inp.value)
        except ValueError:
            t = 0.05
        inp.value = f"{min(0.99, max(0.01, round(t + 0.01 * steps, 4))):g}"

    # ------------------------------------------------------------------ compute and draw

    def recompute(self) -> None:
        if self.ws is None or self.lane is None:
            return
        p = self.params()
        if p is None:
            self.query_one("#gate-floors", Static).update("[b $error]invalid setting[/]: target and α in (0, 1), r ≥ 1")
            return
        self.run_gate(self.ws, p)

    @work(thread=True, exclusive=True, group="gate", exit_on_error=False, description="sweeping the gate")
    def run_gate(self, ws, p: GateParams) -> None:
        result = compute_gate(ws, p)
        self.app.call_from_thread(self._show, result)

    @guarded
    def _show(self, r: GateResult) -> None:
        if r.params != self.params():  # a newer setting is on its way
            return
        self.result = r
        self._draw_plot(r)
        self._draw_floors(r)
        self._draw_table(r)

    def _draw_plot(self, r: GateResult) -> None:
        plot = self.query_one("#gate-plot", PlotextPlot)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        sw = r.sweep
        fnir = np.nan_to_num(sw.fnir, nan=1.0)
        markers = {"in_domain": "braille", "out_of_domain": "braille"}
        for name in sw.accepted:
            fpir = np.nan_to_num(sw.fpir(name), nan=0.0)
            plt.plot(fpir.tolist(), fnir.tolist(), label=f"{NEG_LABELS.get(name, name)} negatives", marker=markers.get(name, "dot"))
        op = r.operating
        pts = []
        for name, oc in r.at_null.items():
            f = oc.combined.fpir.get("in_domain")
            pts.append((f.value if f else 0.0, oc.combined.fnir.value, f"null floor ({NEG_LABELS.get(name, name)})", "x"))
        c = r.at_conformal.combined
        f = c.fpir.get("in_domain")
        pts.append((f.value if f else 0.0, c.fnir.value, "conformal floor", "+"))
        fo = op.fpir.get("in_domain")
        pts.append((fo.value if fo else 0.0, op.fnir.value, "operating point", "●"))
        for x, y, label, m in pts:
            if x is not None and y is not None and not (math.isnan(x) or math.isnan(y)):
                plt.scatter([x], [y], marker=m, label=label)
        plt.vline(r.params.target)
        plt.xlim(0, 1)
        plt.ylim(0, 1)
        plt.xlabel("FPIR (accepted negatives)")
        plt.ylabel("FNIR")
        plt.title(f"gate lane {r.params.lane}: FNIR against FPIR, target FPIR {r.params.target:g}")
        plot.refresh()
        self.query_one("#gate-legend", Static).update(
            f"{len(sw)} candidate floors (distinct top scores + ∞); vertical line: target FPIR; "
            f"FPIR of the points on in-domain negatives.")

    def _draw_floors(self, r: GateResult) -> None:
        p, op = r.params, r.operating
        lines = [f"[b]Negatives[/]: " + ", ".join(f"{NEG_LABELS.get(k, k)} {v}" for k, v in r.negatives.items())
                 + f" · positives {r.sweep.positives}"]
        for name, nf in r.nulls.items():
            head = f"[b]Null floor[/] ({NEG_LABELS.get(name, name)}, n={nf.n}): "
            if nf.floor is None:
                lines.append(head + f"none — {nf.reason}")
                continue
            lines.append(head + f"{fmt.num(nf.floor, 4)} = {fmt.num(nf.mean, 4)} + 3·{fmt.num(nf.sd, 4)}")
            for k, rate in nf.fpir.items():
                lines.append(f"    FPIR on {NEG_LABELS.get(k, k)}: {fmt.rate(rate)}")
        cf = r.conformal
        lines.append(f"[b]Conformal floor[/] (α={cf.alpha}, n={cf.n}, k={cf.k}): {fmt.num(cf.floor, 4)}"
                     f"  [i]in-sample, no guarantee[/]")
        if cf.reason:
            lines.append(f"    {cf.reason}")
        lines.append("    bounds rejected positives only — nothing about false accepts")
        basis = "Wilson upper bound" if p.conservative else "point estimate"
        lines.append(f"[b]Operating point[/] (FPIR ≤ {p.target:g} on in-domain, {basis}; [i]tuning: picked on these negatives[/])")
        lines.append(f"    floor {fmt.num(op.floor, 4)}" + ("" if op.attainable else f" — {op.reason}"))
        if len(r.view.operating) > 1 and r.params.margin is None and r.params.mutual is None:
            for name, o in r.view.operating.items():
                fp = ", ".join(f"{NEG_LABELS.get(k, k)} {fmt.num(v.value)}" for k, v in o.fpir.items())
                lines.append(f"    picked on {NEG_LABELS.get(name, name)}: floor {fmt.num(o.floor, 4)} → FPIR {fp}")
        oc = r.outcome
        lines.append(f"[b]Gate[/] {oc.combined.condition}:")
        lines.append(f"    FNIR {fmt.rate(oc.combined.fnir)}  (rejected {oc.combined.rejected}, wrong accept {oc.combined.wrong_accept})")
        for k, rate in oc.combined.fpir.items():
            lines.append(f"    FPIR {NEG_LABELS.get(k, k)}: {fmt.rate(rate)}")
        if len(oc.alone) > 1:
            for name, o in oc.alone.items():
                fp = ", ".join(f"{NEG_LABELS.get(k, k)} {fmt.num(v.value)}" for k, v in o.fpir.items())
                lines.append(f"    {name} alone: FNIR {fmt.num(o.fnir.value)}, FPIR {fp}")
        if r.op_margin is not None:
            om = r.op_margin
            lines.append(f"[b]Operating margin[/] (margin alone): {fmt.num(om.margin, 4) if om.margin is not None else '—'}"
                         + (f" — {om.reason}" if om.reason else ""))
        if r.mutual_summary is not None:
            ms = r.mutual_summary
            lines.append(f"[b]Mutual[/] r={ms['r']}: lists built from {ms['built_from']} queries; vacuous for "
                         f"{ms['vacuous_queries']} ({fmt.pct(ms.get('vacuous_share'))})")
        self.query_one("#gate-floors", Static).update("\n".join(lines))

    def _draw_table(self, r: GateResult) -> None:
        t = self.query_one("#gate-r3", DataTable)
        t.clear(columns=True)
        t.add_columns("target t", "Wilson n", "rule of three n")
        for row in r.rule_of_three:
            t.add_row(f"{row['target']:g}", str(row["wilson_n"]), str(row["rule_of_three_n"]))
        levels = ""
        if r.rule_of_three:
            levels = f"Wilson: {r.rule_of_three[0]['wilson_level']}; rule of three: {r.rule_of_three[0]['rule_of_three_level']}."
        zero = ""
        if r.zero_event is not None:
            w1, r3, wald = r.zero_event
            zero = (f"\nWith 0 false accepts in your {w1.n} in-domain negatives: Wilson upper {fmt.num(w1.high)} "
                    f"(one-sided {w1.level * 100:g}%), rule of three {fmt.num(r3.high)} (one-sided 95%), normal approximation "
                    f"[{fmt.num(wald.low)}, {fmt.num(wald.high)}] — collapsed to zero width.")
        self.query_one("#gate-zero", Static).update(levels + zero)
