"""6 Gate: FNIR against FPIR, null and conformal floors, the operating point at a target
FPIR, margin and mutual conditions, in-domain vs out-of-domain negatives, and the
Wilson / rule-of-three table (lessons 09–11)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.widgets import DataTable, Input, Label, Select, Static, Switch
from textual_plotext import PlotextPlot

from ..widgets import fmt
from .base import PlainTable, ViewScreen, parse_optional_number, guarded

NEG_LABELS = {"in_domain": "in-domain", "out_of_domain": "out-of-domain"}
DEBOUNCE = 0.15  # seconds: typing "0.25" into a field starts one sweep


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
    calibrated: dict | None = None  # thresholds.json's gate block (what `calibrate` fitted), with --thresholds

    @property
    def nulls(self) -> dict:
        return self.view.null

    @property
    def conformal(self):
        return self.view.conformal

    @property
    def op_margin(self):
        return self.view.operating_margin if self.params.margin is not None else None


def compute_gate(ws, p: GateParams, thresholds_path: str | None = None) -> GateResult:
    """Every number of the Gate view: ``pipeline.gate_view`` (what the report's gate block
    uses) plus the gate outcome under the conditions chosen here (runs in a worker). With
    ``--thresholds``, the calibrated gate block is read back too (the applied floor and its
    outcome are the report's ``gate.applied`` and ``gate.outcome``)."""
    from ..kernel import gate as G
    from ..kernel import pipeline as P

    from ..kernel import intervals as I

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
    calibrated = (P.read_thresholds(thresholds_path).data.get("gate") or None) if thresholds_path else None
    return GateResult(p, view, sw, {k: int(v.size) for k, v in negs.items()}, at_null, at_conf, op, outcome,
                      mutual_summary, rot, zero, calibrated)


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

With `--thresholds`, the floor and margin `calibrate` fitted on other queries are shown
first, applied to these queries exactly as the report applies them (its `gate.applied`
and `gate.outcome`), labelled **threshold** — or **in-sample** when the evaluated queries
overlap the calibration queries. The sweep and operating point below them are tuning, for
comparison; `a` sweeps the floor under the applied margin.

Edit the target FPIR, α, margin (blank = off) and mutual r (blank = off); `c` toggles
conservative.
"""
    BINDINGS = [
        Binding("c", "toggle_conservative", "Conservative", id="gate.conservative"),
        Binding("plus,equals_sign", "nudge_target(1)", "FPIR+", id="gate.fpir_up", show=False),
        Binding("minus", "nudge_target(-1)", "FPIR−", id="gate.fpir_down", show=False),
        Binding("a", "applied_margin", "Applied margin", id="gate.applied_margin",
                tooltip="Sweep the floor under the margin from --thresholds"),
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
                yield Label("Applied thresholds by stratum", id="gate-strata-title", classes="section-title")
                yield PlainTable(id="gate-strata", cursor_type="row", zebra_stripes=True)
                yield Label("Negatives needed for zero false accepts", classes="section-title")
                yield PlainTable(id="gate-r3", cursor_type="row", zebra_stripes=True)
                yield Static("", id="gate-zero", classes="caption")

    def on_mount(self) -> None:
        super().on_mount()
        a = self.options.gate
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
            want = self.options.gate.gate_on
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
        self._timer = self.set_timer(DEBOUNCE, self.recompute)

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

    def applied(self) -> dict | None:
        """The report's gate block when it applies calibrated thresholds (``gate.applied``)."""
        g = (self.report or {}).get("gate") or {}
        return g if "applied" in g else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "applied_margin":
            g = self.applied()
            return g is not None and g["applied"].get("margin") is not None
        return True

    def action_applied_margin(self) -> None:
        g = self.applied()
        if g is None or g["applied"].get("margin") is None:
            self.notify("no calibrated margin: load --thresholds from `rankscope calibrate`", severity="warning")
            return
        self.query_one("#gate-margin", Input).value = repr(g["applied"]["margin"])

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
        self.run_gate(self.ws, p, self.options.thresholds)

    @work(thread=True, exclusive=True, group="gate", exit_on_error=False, description="sweeping the gate")
    def run_gate(self, ws, p: GateParams, thresholds_path: str | None) -> None:
        result = compute_gate(ws, p, thresholds_path)
        self.app.call_from_thread(self._show, result)

    @guarded
    def _show(self, r: GateResult) -> None:
        if r.params != self.params():  # a newer setting is on its way
            return
        self.result = r
        self._draw_plot(r)
        self._draw_floors(r)
        self._draw_strata()
        self._draw_table(r)
        self.refresh_bindings()

    def _draw_strata(self) -> None:
        """The report's ``gate.outcome_by_stratum`` (the applied floor and margin, per stratum)."""
        g = self.applied()
        by = (g or {}).get("outcome_by_stratum") or {}
        t = self.query_one("#gate-strata", PlainTable)
        show = bool(by)
        t.display = self.query_one("#gate-strata-title", Label).display = show
        if not show:
            return
        negs = list(g.get("negatives") or {})
        rows = []
        for strat, labels in by.items():
            for label, c in labels.items():
                fp = c.get("fpir") or {}
                name = label if len(by) == 1 else f"{strat}: {label}"
                rows.append(([name, str(c.get("positives", 0)), fmt.rate(c["fnir"]) if c["fnir"].get("n") else "—",
                              *[fmt.rate(fp[k]) if k in fp and fp[k].get("n") else "—" for k in negs]], None))
        t.fill(["stratum", "pos", "FNIR", *[f"FPIR {NEG_LABELS.get(k, k)}" for k in negs]], rows)

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
        g = self.applied()
        if g is not None and g.get("lane") == r.params.lane and "outcome" in g:
            comb = g["outcome"]["combined"]
            f = (comb.get("fpir") or {}).get("in_domain")
            tag = "in-sample" if g["applied"]["label"].startswith("in-sample") else "threshold"
            pts.append((f["value"] if f else 0.0, comb["fnir"]["value"], f"applied ({tag}): {comb['condition']}", "◆"))
        for x, y, label, m in pts:
            if x is not None and y is not None and not (math.isnan(x) or math.isnan(y)):
                plt.scatter([x], [y], marker=m, label=label, **({"color": "orange"} if m == "◆" else {}))
        plt.vline(r.params.target)
        plt.xlim(0, 1)
        # headroom above FNIR = 1 for the legend (a line per series), which would hide the points
        # at small FPIR; a fixed share, so the figure does not depend on when the layout settles
        labelled = len(sw.accepted) + sum(1 for x, y, *_ in pts if x is not None and y is not None)
        plt.ylim(0, 1 + 0.05 * (labelled + 1))
        plt.yticks([0, 0.25, 0.5, 0.75, 1])
        plt.xlabel("FPIR (accepted negatives)")
        plt.ylabel("FNIR")
        plt.title(f"gate lane {r.params.lane}: FNIR against FPIR, target FPIR {r.params.target:g}")
        plot.refresh()
        self.query_one("#gate-legend", Static).update(
            f"{len(sw)} candidate floors (distinct top scores + ∞); vertical line: target FPIR; "
            f"FPIR of the points on in-domain negatives.")

    def _applied_lines(self, r: GateResult) -> list[str]:
        """The report's ``gate.applied`` and ``gate.outcome`` (floor and margin fitted by
        `calibrate` on other queries), labelled as the report labels them."""
        g = self.applied()
        if g is None:
            return []
        a = g["applied"]
        in_sample = a["label"].startswith("in-sample")
        tag = f"[b reverse {'$warning' if in_sample else '$success'}] {escape(a['label'])} [/]"
        floor = fmt.num(a["floor"], 4) if a.get("floor") is not None else f"— ({a.get('floor_reason') or 'none'})"
        margin = fmt.num(a["margin"], 4) if a.get("margin") is not None else "off"
        mutual = a["mutual_r"] if a.get("mutual_r") is not None else "off"
        lines = [f"[b]Applied thresholds[/] from {escape(os.path.basename(str(a['from'])))}: {tag}"
                 + (f" ({a['overlap_queries']} overlapping queries)" if a.get("overlap_queries") else ""),
                 f"    gate lane {escape(str(g['lane']))} · floor {floor} · margin {margin} · mutual r {mutual}"]
        if g["lane"] != r.params.lane:
            lines.append(f"    [$warning]the curve below is for lane {escape(r.params.lane)}, not the gated lane[/]")
        oc = g.get("outcome")
        if oc:
            c = oc["combined"]
            lines.append(f"    [b]{escape(c['condition'])}[/]: FNIR {fmt.rate(c['fnir'])}  (rejected {c['rejected']}, "
                         f"wrong accept {c['wrong_accept']})")
            for k, rate in (c.get("fpir") or {}).items():
                lines.append(f"        FPIR {NEG_LABELS.get(k, k)}: {fmt.rate(rate)}")
            if len(oc.get("alone") or {}) > 1:
                for name, o in oc["alone"].items():
                    fp = ", ".join(f"{NEG_LABELS.get(k, k)} {fmt.num(v['value'])}" for k, v in (o.get("fpir") or {}).items())
                    lines.append(f"        {escape(name)} alone: FNIR {fmt.num(o['fnir']['value'])}, FPIR {fp}")
        cal = r.calibrated or {}
        cf = cal.get("conformal_floor")
        if cf:
            why = cf.get("floor_reason") or cf.get("reason")
            value = fmt.num(cf["floor"], 4) if cf.get("floor") is not None else "none"
            lines.append(f"    calibrated conformal floor (α={cf.get('alpha')}, n={cf.get('n')}): {value}"
                         + (f" — {escape(str(why))}" if why else ""))
        lines.append("[b]Tuning on these queries[/] (below): for comparison — [i]not a threshold[/]")
        return lines

    def _draw_floors(self, r: GateResult) -> None:
        p, op = r.params, r.operating
        lines = self._applied_lines(r)
        lines.append(f"[b]Negatives[/]: " + ", ".join(f"{NEG_LABELS.get(k, k)} {v}" for k, v in r.negatives.items())
                     + f" · positives {r.sweep.positives}")
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
