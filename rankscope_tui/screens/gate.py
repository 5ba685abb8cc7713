"""6 Gate: FNIR against FPIR, null and conformal floors, the operating point at a target
FPIR, margin and mutual conditions, in-domain vs out-of-domain negatives, and the
Wilson / rule-of-three table (lessons 09–11)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Input, Label, Select, Static, Switch

from ..kernel import analyse_gate
from ..kernel.gate.analysis import GateAnalysis, GateLabel
from ..kernel.settings import GateSettings
from ..widgets import fmt
from ..widgets.numbers import integer_input, number_input
from ..widgets.plot import TermPlot
from ..widgets.safe import escape
from ..widgets.tables import PlainTable
from .base import ViewScreen, guarded, parse_optional_number

if TYPE_CHECKING:
    from textual.timer import Timer

    from ..kernel.gate.thresholds import Thresholds

NEG_LABELS = {"in_domain": "in-domain", "out_of_domain": "out-of-domain"}
DEBOUNCE = 0.15  # seconds: typing "0.25" into a field starts one sweep


@dataclass
class GateResult:
    """The screen's settings and the kernel's gate analysis under them (nothing else)."""

    params: GateSettings
    analysis: GateAnalysis

    @property
    def sweep(self):
        """The floor sweep drawn: with the margin / mutual conditions ANDed when active."""
        a = self.analysis
        return a.sweep_under_conditions if a.sweep_under_conditions is not None else a.sweep

    @property
    def operating(self):
        """The operating point on the drawn sweep (in-domain negatives)."""
        a = self.analysis
        return a.operating_under_conditions if a.sweep_under_conditions is not None else a.in_domain_operating

    @property
    def negatives(self) -> dict:
        return {k: int(v.size) for k, v in self.analysis.negatives.items()}

    @property
    def nulls(self) -> dict:
        return self.analysis.null

    @property
    def conformal(self):
        return self.analysis.conformal

    @property
    def rule_of_three(self) -> list:
        return self.analysis.rule_of_three

    @property
    def calibrated(self) -> dict | None:
        return self.analysis.calibrated

    @property
    def mutual_summary(self) -> dict | None:
        return self.analysis.mutual_summary

    @property
    def op_margin(self):
        return self.analysis.operating_margin if self.params.margin is not None else None


def compute_gate(ws, settings: GateSettings, th: Thresholds | None = None) -> GateResult:
    """The Gate view's numbers: the kernel's gate analysis (what the report's gate block is)
    under the settings chosen on the screen (runs in a worker). With ``--thresholds`` the
    calibrated floor, margin and mutual r (``th``, the parsed file) are applied as `evaluate
    --thresholds` applies them."""
    return GateResult(settings, analyse_gate(ws, settings, th))


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
    NUMBERS_FIRST = ("gate-right", "gate-left")
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
        self._timer: Timer | None = None

    def compose_body(self) -> ComposeResult:
        with Horizontal(classes="controls"):
            yield Label("gate lane")
            yield Select([], id="gate-lane", allow_blank=True, prompt="lane")
            yield Label("target FPIR")
            yield number_input(repr(GateSettings().fpir), id="gate-target")
            yield Label("α")
            yield number_input(repr(GateSettings().miss_rate), id="gate-alpha")
            yield Label("margin")
            yield number_input("", id="gate-margin", placeholder="off")
            yield Label("mutual r")
            yield integer_input("", id="gate-mutual", placeholder="off")
            yield Label("conservative")
            yield Switch(False, id="gate-conservative")
        with Horizontal(id="gate-main"):
            with Vertical(id="gate-left"):
                yield TermPlot(id="gate-plot")
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
            self.query_one("#gate-target", Input).value = repr(getattr(a, "fpir", None) or GateSettings().fpir)
            self.query_one("#gate-alpha", Input).value = repr(getattr(a, "miss_rate", None) or GateSettings().miss_rate)
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

    def params(self) -> GateSettings | None:
        """The screen's choices as the kernel's gate settings (None while a field is invalid)."""
        try:
            target = float(self.query_one("#gate-target", Input).value)
            alpha = float(self.query_one("#gate-alpha", Input).value)
            margin = parse_optional_number(self.query_one("#gate-margin", Input).value, float)
            mutual = parse_optional_number(self.query_one("#gate-mutual", Input).value, int)
        except ValueError:
            return None
        if not (0 < target < 1 and 0 < alpha < 1) or (mutual is not None and mutual < 1):
            return None
        try:  # GateSettings checks its ranges (e.g. a margin of inf): a SettingError is a ValueError
            return GateSettings(gate_on=self.lane, fpir=target, conservative=self.query_one("#gate-conservative", Switch).value,
                                miss_rate=alpha, margin=margin, mutual=mutual)
        except ValueError:
            return None

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

    def calibrated_margin(self) -> float | None:
        """The margin `calibrate` fitted (thresholds.json's gate block), when one is loaded."""
        r = self.result
        return None if r is None or r.analysis.applied is None else r.analysis.applied.calibrated_margin

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "applied_margin":
            return self.calibrated_margin() is not None
        return True

    def action_applied_margin(self) -> None:
        m = self.calibrated_margin()
        if m is None:
            self.notify("no calibrated margin: load --thresholds from `rankscope calibrate`", severity="warning")
            return
        self.query_one("#gate-margin", Input).value = repr(m)

    def action_nudge_target(self, steps: int) -> None:
        inp = self.query_one("#gate-target", Input)
        try:
            t = float(inp.value)
        except ValueError:
            t = GateSettings.fpir
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
    def run_gate(self, ws, p: GateSettings) -> None:
        result = compute_gate(ws, p, self.state.thresholds())
        self.app.call_from_thread(self._show, result)

    @guarded
    def _show(self, r: GateResult) -> None:
        if r.params != self.params():  # a newer setting is on its way
            return
        self.result = r
        self._draw_plot(r)
        self._draw_floors(r)
        self._draw_strata(r)
        self._draw_table(r)
        self.refresh_bindings()

    def _draw_strata(self, r: GateResult) -> None:
        """The applied thresholds per stratum (the report's ``gate.outcome_by_stratum``)."""
        a = r.analysis
        by = a.outcome_by_stratum if a.applied is not None else {}
        t = self.query_one("#gate-strata", PlainTable)
        show = bool(by)
        t.display = self.query_one("#gate-strata-title", Label).display = show
        if not show:
            return
        negs = list(a.negatives)
        rows = []
        for strat, labels in by.items():
            for label, o in labels.items():
                c = o.combined
                name = label if len(by) == 1 else f"{strat}: {label}"
                rows.append(([name, str(c.positives), fmt.rate(c.fnir) if c.positives else "—",
                              *[fmt.rate(c.fpir[k]) if k in c.fpir and c.fpir[k].n else "—" for k in negs]], None))
        t.fill(["stratum", "pos", "FNIR", *[f"FPIR {NEG_LABELS.get(k, k)}" for k in negs]], rows)

    def _draw_plot(self, r: GateResult) -> None:
        plot = self.query_one("#gate-plot", TermPlot)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        a = r.analysis
        sw = r.sweep
        fnir = np.nan_to_num(sw.fnir, nan=1.0)
        markers = {"in_domain": "braille", "out_of_domain": "braille"}
        for name in sw.accepted:
            fpir = np.nan_to_num(sw.fpir(name), nan=0.0)
            plt.plot(fpir.tolist(), fnir.tolist(), label=f"{NEG_LABELS.get(name, name)} negatives", marker=markers.get(name, "dot"))
        pts = []
        for name, oc in a.at_null.items():
            f = oc.combined.fpir.get("in_domain")
            pts.append((f.value if f else 0.0, oc.combined.fnir.value, f"null floor ({NEG_LABELS.get(name, name)})", "x"))
        assert a.at_conformal is not None  # the plot is drawn for an analysis that ran
        c = a.at_conformal.combined
        f = c.fpir.get("in_domain")
        pts.append((f.value if f else 0.0, c.fnir.value, "conformal floor", "+"))
        op = r.operating
        if op is not None:
            fo = op.fpir.get("in_domain")
            pts.append((fo.value if fo else 0.0, op.fnir.value, "operating point", "●"))
        if a.applied is not None and a.outcome is not None:
            comb = a.outcome.combined
            f = comb.fpir.get("in_domain")
            pts.append((f.value if f else 0.0, comb.fnir.value, f"applied ({a.label.kind}): {comb.condition}", "◆"))
        for x, y, label, m in pts:
            if x is not None and y is not None and not (math.isnan(x) or math.isnan(y)):
                plt.scatter([x], [y], marker=m, label=label, **({"color": "orange"} if m == "◆" else {}))
        plt.vline(r.params.fpir)
        plt.xlim(0, 1)
        # headroom above FNIR = 1 for the legend (a line per series), which would hide the points
        # at small FPIR; a fixed share, so the figure does not depend on when the layout settles
        labelled = len(sw.accepted) + sum(1 for x, y, *_ in pts if x is not None and y is not None)
        plt.ylim(0, 1 + 0.05 * (labelled + 1))
        plt.yticks([0, 0.25, 0.5, 0.75, 1])
        plt.xlabel("FPIR (accepted negatives)")
        plt.ylabel("FNIR")
        plt.title(f"gate lane {a.lane}: FNIR against FPIR, target FPIR {r.params.fpir:g}")
        plot.refresh()
        self.query_one("#gate-legend", Static).update(
            f"{len(sw)} candidate floors (distinct top scores + ∞); vertical line: target FPIR; "
            f"FPIR of the points on in-domain negatives.")

    @staticmethod
    def _outcome_lines(a: GateAnalysis) -> list[str]:
        """The outcome at the gate's floor: the floor alone, the floor ANDed with each active
        condition and with all of them (the report's ``gate.outcome_by_condition``), then
        each condition alone (``gate.outcome.alone``)."""
        lines = []
        for cond, o in a.by_condition.items():
            lines.append(f"    [b]{escape(cond)}[/]: FNIR {fmt.rate(o.fnir)}  (rejected {o.rejected}, "
                         f"wrong accept {o.wrong_accept})")
            for k, rate in o.fpir.items():
                lines.append(f"        FPIR {NEG_LABELS.get(k, k)}: {fmt.rate(rate)}")
        if a.outcome is not None and len(a.outcome.alone) > 1:
            for name, o in a.outcome.alone.items():
                fp = ", ".join(f"{NEG_LABELS.get(k, k)} {fmt.num(v.value)}" for k, v in o.fpir.items())
                lines.append(f"    {escape(name)} alone: FNIR {fmt.num(o.fnir.value)}, FPIR {fp}")
        return lines

    def _applied_lines(self, r: GateResult) -> list[str]:
        """The floor and margin `calibrate` fitted on other queries, applied to these queries
        as `evaluate --thresholds` applies them, labelled as the report labels them."""
        a = r.analysis
        ap = a.applied
        if ap is None:
            return []
        warn = ap.label is GateLabel.IN_SAMPLE
        tag = f"[b reverse {'$warning' if warn else '$success'}] {escape(ap.label.value)} [/]"
        floor = fmt.num(ap.floor, 4) + ("" if math.isfinite(ap.floor) else " (reject all)" if ap.floor > 0 else " (accept every retrieved query)")
        margin = fmt.num(ap.margin, 4) if ap.margin is not None else "off"
        mutual = ap.mutual_r if ap.mutual_r is not None else "off"
        lines = [f"[b]Applied thresholds[/] from {escape(os.path.basename(str(ap.source)))}: {tag}"
                 + (f" ({ap.overlap_queries} overlapping queries)" if ap.overlap_queries else ""),
                 f"    gate lane {escape(str(a.lane))} · floor {floor} · margin {margin} · mutual r {mutual}"]
        cal = a.calibrated or {}
        if cal.get("lane") and cal["lane"] != a.lane:
            lines.append(f"    [$warning]calibrated on lane {escape(str(cal['lane']))}, applied here to {escape(str(a.lane))}[/]")
        if a.unattainable_reason:
            lines.append(f"    {escape(a.unattainable_reason)}")
        lines += self._outcome_lines(a)
        for w in a.warnings:
            lines.append(f"    [$warning]warning: {escape(w.message)}[/]")
        cf = cal.get("conformal_floor")
        if cf:
            why = cf.get("floor_reason") or cf.get("reason")
            value = fmt.num(cf["floor"], 4) if cf.get("floor") is not None else "none"
            lines.append(f"    calibrated conformal floor (α={cf.get('alpha')}, n={cf.get('n')}): {value}"
                         + (f" — {escape(str(why))}" if why else ""))
        lines.append("[b]Tuning on these queries[/] (below): for comparison — [i]not a threshold[/]")
        return lines

    def _draw_floors(self, r: GateResult) -> None:
        p, a = r.params, r.analysis
        lines = self._applied_lines(r)
        lines.append("[b]Negatives[/]: " + ", ".join(f"{NEG_LABELS.get(k, k)} {v}" for k, v in r.negatives.items())
                     + f" · positives {int(a.positives.size) if a.positives is not None else 0}")
        for name, nf in a.null.items():
            head = f"[b]Null floor[/] ({NEG_LABELS.get(name, name)}, n={nf.n}): "
            if nf.floor is None:
                lines.append(head + f"none — {nf.reason}")
                continue
            lines.append(head + f"{fmt.num(nf.floor, 4)} = {fmt.num(nf.mean, 4)} + 3·{fmt.num(nf.sd, 4)}")
            for k, rate in nf.fpir.items():
                lines.append(f"    FPIR on {NEG_LABELS.get(k, k)}: {fmt.rate(rate)}")
        cf = a.conformal
        assert cf is not None  # the floors are drawn for an analysis that ran
        lines.append(f"[b]Conformal floor[/] (α={cf.alpha}, n={cf.n}, k={cf.k}): {fmt.num(cf.floor, 4)}"
                     + ("  [i]in-sample, no guarantee[/]" if cf.in_sample else ""))
        if cf.reason:
            lines.append(f"    {cf.reason}")
        lines.append("    bounds rejected positives only — nothing about false accepts")
        basis = "Wilson upper bound" if p.conservative else "point estimate"
        lines.append(f"[b]Operating point[/] (FPIR ≤ {p.fpir:g} on in-domain, {basis}; [i]tuning: picked on these negatives[/])")
        op = a.in_domain_operating
        if op is None:
            lines.append("    none — no in-domain negatives: FPIR is undefined")
        else:
            lines.append(f"    floor {fmt.num(op.floor, 4)}" + ("" if op.attainable else f" — {op.reason}"))
            if a.applied is not None:  # the tuning floor's own outcome (the applied one is above)
                fp = ", ".join(f"{NEG_LABELS.get(k, k)} {fmt.rate(v)}" for k, v in op.fpir.items())
                lines.append(f"    floor alone there: FNIR {fmt.rate(op.fnir)}; FPIR {fp}")
        if len(a.operating) > 1 and a.sweep_under_conditions is None:
            for name, o in a.operating.items():
                fp = ", ".join(f"{NEG_LABELS.get(k, k)} {fmt.num(v.value)}" for k, v in o.fpir.items())
                lines.append(f"    picked on {NEG_LABELS.get(name, name)}: floor {fmt.num(o.floor, 4)} → FPIR {fp}")
        oc = a.operating_under_conditions
        if oc is not None and a.sweep_under_conditions is not None:
            lines.append(f"    with {escape(a.sweep_under_conditions.conditions)}: floor {fmt.num(oc.floor, 4)}"
                         + ("" if oc.attainable else f" — {oc.reason}"))
        if a.applied is None and a.floor is not None:
            lines.append(f"[b]Gate[/] at floor {fmt.num(a.floor, 4)} ([i]{a.label.kind}[/]):")
            lines += self._outcome_lines(a)
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
        if r.analysis.zero_event is not None:
            w1, r3, wald = r.analysis.zero_event
            assert w1.level is not None  # a one-sided Wilson bound always carries its level
            zero = (f"\nWith 0 false accepts in your {w1.n} in-domain negatives: Wilson upper {fmt.num(w1.high)} "
                    f"(one-sided {w1.level * 100:g}%), rule of three {fmt.num(r3.high)} (one-sided 95%), normal approximation "
                    f"[{fmt.num(wald.low)}, {fmt.num(wald.high)}] — collapsed to zero width.")
        self.query_one("#gate-zero", Static).update(levels + zero)
