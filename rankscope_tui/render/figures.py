"""A figure (``kernel.figures.Figure``) as a file: a Vega-Lite v5 spec with its data
inlined (``.vl.json``, no dependency), or SVG/PDF/PNG drawn with matplotlib (the optional
extra ``rankscope[plots]``; without it the error names the extra).

Both read the same rows: the spec's ``data.values`` are the figure's rows, so a reader can
take the numbers back out of the spec. The same figure and inputs give the same bytes
(the SVG hash salt and the PDF/SVG dates are fixed)."""

from __future__ import annotations

import io
import json
from typing import Any

VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
SUFFIXES = (".vl.json", ".svg", ".pdf", ".png")
PLOTS_EXTRA = ("matplotlib is not installed; figures as .svg, .pdf or .png need the plots extra: "
               "pip install 'rankscope[plots]' (or write a Vega-Lite spec: --out FILE.vl.json)")


def check_suffix(path: str) -> str:
    from ..kernel.errors import InputError

    low = path.lower()
    for s in SUFFIXES:
        if low.endswith(s):
            return s
    raise InputError("--out writes .vl.json (a Vega-Lite spec), .svg, .pdf or .png (told by the suffix)", path)


# --------------------------------------------------------------------------- Vega-Lite


def _base(fig, width: int = 480, height: int = 300) -> dict:
    spec: dict[str, Any] = {"$schema": VEGA_LITE_SCHEMA, "title": {"text": fig.title}, "width": width, "height": height,
            "data": {"values": fig.rows}}
    if fig.notes:
        spec["title"]["subtitle"] = [n for n in fig.notes if n]
    return spec


def _rrf_k(fig) -> dict:
    spec = _base(fig)
    x = {"field": "k", "type": "quantitative", "title": fig.x}
    y = {"field": "value", "type": "quantitative", "title": fig.y}
    spec["layer"] = [
        {"transform": [{"filter": "datum.series !== 'best k'"}], "mark": {"type": "line", "point": False},
         "encoding": {"x": x, "y": y, "color": {"field": "series", "type": "nominal", "title": "lane"}}},
        {"transform": [{"filter": "datum.series === 'best k'"}], "mark": {"type": "point", "shape": "diamond", "size": 80,
                                                                          "filled": True},
         "encoding": {"x": x, "y": y, "color": {"value": "black"}}},
    ]
    return spec


def _convex(fig) -> dict:
    spec = _base(fig)
    if "w_2" not in (fig.rows[0] if fig.rows else {}):
        spec["layer"] = [
            {"mark": "line", "encoding": {"x": {"field": "w_0", "type": "quantitative", "title": fig.x},
                                          "y": {"field": "value", "type": "quantitative", "title": fig.y}}},
            {"transform": [{"filter": "datum.best"}], "mark": {"type": "point", "filled": True, "size": 80},
             "encoding": {"x": {"field": "w_0", "type": "quantitative"}, "y": {"field": "value", "type": "quantitative"}}},
        ]
        return spec
    spec["mark"] = "rect"
    spec["encoding"] = {"x": {"field": "w_0", "type": "ordinal", "title": fig.x},
                        "y": {"field": "w_1", "type": "ordinal", "title": fig.y, "sort": "descending"},
                        "color": {"field": "value", "type": "quantitative", "title": "mean"},
                        "stroke": {"condition": {"test": "datum.best", "value": "black"}, "value": None}}
    return spec


def _gate(fig) -> dict:
    spec = _base(fig)
    x = {"field": "fpir", "type": "quantitative", "title": fig.x, "scale": {"domain": [0, 1]}}
    y = {"field": "fnir", "type": "quantitative", "title": fig.y, "scale": {"domain": [0, 1]}}
    spec["layer"] = [
        {"transform": [{"filter": "!datum.point"}], "mark": "line",
         "encoding": {"x": x, "y": y, "order": {"field": "floor", "type": "quantitative"},
                      "color": {"field": "series", "type": "nominal", "title": "negatives"}}},
        {"transform": [{"filter": "datum.point"}],
         "mark": {"type": "point", "filled": True, "size": 90, "shape": "diamond"},
         "encoding": {"x": x, "y": y, "color": {"value": "orange"}}},
    ]
    return spec


def _compare(fig) -> dict:
    spec = _base(fig, height=max(120, 40 * len({r["row"] for r in fig.rows})))
    y = {"field": "row", "type": "nominal", "title": fig.y}
    spec["layer"] = [
        {"mark": {"type": "rule", "strokeWidth": 3},
         "encoding": {"y": y, "yOffset": {"field": "interval"}, "x": {"field": "low", "type": "quantitative", "title": fig.x},
                      "x2": {"field": "high"}, "color": {"field": "interval", "type": "nominal"}}},
        {"mark": {"type": "point", "filled": True, "color": "black"},
         "encoding": {"y": y, "x": {"field": "difference", "type": "quantitative"}}},
        {"data": {"values": [{"zero": 0}]}, "mark": {"type": "rule", "strokeDash": [4, 4]},
         "encoding": {"x": {"field": "zero", "type": "quantitative"}}},
    ]
    return spec


def _delta(fig) -> dict:
    spec = _base(fig, width=max(300, min(1200, 6 * len(fig.rows))))
    x = {"field": "order", "type": "ordinal", "title": fig.x, "axis": {"labels": False, "ticks": False}}
    y = {"field": "delta", "type": "quantitative", "title": fig.y}
    spec["layer"] = [
        {"mark": "bar", "encoding": {"x": x, "y": y,
                                     "color": {"condition": {"test": "datum.delta < 0", "value": "#c0392b"}, "value": "#2e86c1"}}},
        {"transform": [{"filter": "datum.label !== ''"}], "mark": {"type": "text", "angle": 270, "align": "right", "dx": -4},
         "encoding": {"x": x, "y": y, "text": {"field": "label"}}},
    ]
    return spec


def _forest(fig) -> dict:
    spec = _base(fig, height=max(120, 18 * len(fig.rows)))
    y = {"field": "row", "type": "nominal", "title": fig.y, "sort": None}
    spec["layer"] = [
        {"mark": "rule", "encoding": {"y": y, "x": {"field": "low", "type": "quantitative", "title": fig.x}, "x2": {"field": "high"}}},
        {"mark": {"type": "point", "filled": True},
         "encoding": {"y": y, "x": {"field": "mean", "type": "quantitative"}, "color": {"field": "lane", "type": "nominal"},
                      "tooltip": [{"field": "n", "type": "quantitative"}]}},
    ]
    return spec


def _pr_curve(fig) -> dict:
    sections = list(dict.fromkeys(r["stratum"] for r in fig.rows))
    spec = _base(fig, width=360 if len(sections) > 1 else 480)
    spec["mark"] = {"type": "line", "point": True}
    spec["encoding"] = {
        "x": {"field": "recall", "type": "quantitative", "title": fig.x, "scale": {"domain": [0, 1]}},
        "y": {"field": "precision", "type": "quantitative", "title": fig.y, "scale": {"domain": [0, 1]}},
        "color": {"field": "lane", "type": "nominal", "title": "lane"},
        "tooltip": [{"field": "lane", "type": "nominal"}, {"field": "recall", "type": "quantitative"},
                    {"field": "precision", "type": "quantitative"}, {"field": "n", "type": "quantitative"}]}
    if len(sections) > 1:  # one panel per stratum label, "overall" first
        spec["encoding"]["facet"] = {"field": "stratum", "type": "nominal", "title": None, "sort": sections,
                                     "columns": 3}
    return spec


SPECS = {"rrf-k": _rrf_k, "convex-grid": _convex, "gate": _gate, "compare-intervals": _compare,
         "per-query-delta": _delta, "forest": _forest, "pr-curve": _pr_curve}


def vega_lite(fig) -> dict:
    return SPECS[fig.kind](fig)


def vega_lite_text(fig) -> str:
    """The spec as JSON text, every ``<`` written ``\\u003c``: JSON has ``<`` only inside
    strings, where the escape reads back the same, and a spec pasted into an HTML
    ``<script>`` block can then never close it (a lane named ``</script>``)."""
    text = json.dumps(vega_lite(fig), indent=1, ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c") + "\n"


# --------------------------------------------------------------------------- matplotlib

#: a subtitle line longer than this wraps (the drawing is 7 inches wide, x-small type)
SUBTITLE_CHARS = 80


def subtitle_lines(fig) -> list[str]:
    """The figure's notes as the drawn subtitle's lines: the same notes as Vega-Lite's
    ``title.subtitle`` (in-sample, target FPIR, the applied floor, the small-sample note),
    each wrapped at :data:`SUBTITLE_CHARS` characters."""
    import textwrap

    out: list[str] = []
    for note in fig.notes:
        if note:
            out += textwrap.wrap(note, SUBTITLE_CHARS, break_on_hyphens=False)
    return out



def _pyplot():
    from ..kernel.errors import InputError

    try:
        import matplotlib
    except ImportError:
        raise InputError(PLOTS_EXTRA, "--out") from None
    matplotlib.use("Agg", force=True)
    matplotlib.rcParams["svg.hashsalt"] = "rankscope"
    # text stays text in an SVG (searchable, readable by a screen reader), not glyph outlines
    matplotlib.rcParams["svg.fonttype"] = "none"
    import matplotlib.pyplot as plt

    return plt


def _label(text: object) -> str:
    """A name (lane, stratum, qid) or caption as matplotlib is given it: control characters
    shown as visible escapes (``escaping.escape_control``; raw, matplotlib writes them into
    the SVG, which is then not well-formed XML, and warns of a missing glyph), and ``$``
    escaped so no name is read as mathtext."""
    from .escaping import escape_control

    return escape_control(text).replace("$", r"\$")


def _draw(ax, fig) -> None:
    rows = fig.rows
    if fig.kind == "rrf-k":
        for s in dict.fromkeys(r["series"] for r in rows if r["series"] != "best k"):
            pts = [r for r in rows if r["series"] == s]
            ax.plot([r["k"] for r in pts], [r["value"] for r in pts], label=_label(s), linestyle="-" if s == "rrf" else "--")
        for r in rows:
            if r["series"] == "best k":
                ax.plot([r["k"]], [r["value"]], "kD", label="best k")
    elif fig.kind == "convex-grid":
        if "w_2" not in rows[0]:
            ax.plot([r["w_0"] for r in rows], [r["value"] for r in rows])
            for r in rows:
                if r["best"]:
                    ax.plot([r["w_0"]], [r["value"]], "ko", label="best")
        else:
            import numpy as np

            xs = sorted({r["w_0"] for r in rows})
            ys = sorted({r["w_1"] for r in rows})
            grid = np.full((len(ys), len(xs)), np.nan)
            for r in rows:  # with four or more lanes several points share (w_0, w_1): the best shows
                i, j = ys.index(r["w_1"]), xs.index(r["w_0"])
                if r["value"] is not None and not grid[i, j] >= r["value"]:
                    grid[i, j] = r["value"]
            im = ax.imshow(grid, origin="lower", extent=(xs[0], xs[-1], ys[0], ys[-1]), aspect="auto")
            ax.figure.colorbar(im, ax=ax, label="mean")
            for r in rows:
                if r["best"]:
                    ax.plot([r["w_0"]], [r["w_1"]], "kx")
    elif fig.kind == "gate":
        for s in dict.fromkeys(r["series"] for r in rows):
            pts = sorted((r for r in rows if r["series"] == s), key=lambda r: (r["floor"] is None, r["floor"] or 0))
            if pts and pts[0].get("point"):
                ax.plot([r["fpir"] for r in pts], [r["fnir"] for r in pts], "D", color="orange", label=_label(s))
            else:
                ax.plot([r["fpir"] for r in pts], [r["fnir"] for r in pts], label=_label(s))
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
    elif fig.kind == "compare-intervals":
        labels = list(dict.fromkeys(r["row"] for r in rows))
        kinds = list(dict.fromkeys(r["interval"].split(" ")[0] for r in rows))
        for r in rows:
            y = labels.index(r["row"]) + 0.2 * (kinds.index(r["interval"].split(" ")[0]) - 1)
            ax.hlines(y, r["low"], r["high"], colors=f"C{kinds.index(r['interval'].split(' ')[0])}", linewidth=3)
        for lab in labels:
            d = next(r["difference"] for r in rows if r["row"] == lab)
            ax.plot([d], [labels.index(lab)], "ko")
        ax.axvline(0, linestyle="--", color="grey")
        ax.set_yticks(range(len(labels)), [_label(x) for x in labels])
        from matplotlib.lines import Line2D

        ax.legend([Line2D([0], [0], color=f"C{i}", lw=3) for i in range(len(kinds))], [_label(k) for k in kinds],
                  fontsize="small", loc="best")
    elif fig.kind == "per-query-delta":
        ax.bar([r["order"] for r in rows], [r["delta"] for r in rows],
               color=["#c0392b" if r["delta"] < 0 else "#2e86c1" for r in rows])
        for r in rows:
            if r["label"]:
                ax.annotate(_label(r["label"]), (r["order"], r["delta"]), rotation=90, fontsize="x-small", va="top",
                            xytext=(0, -3), textcoords="offset points")
        ax.set_xticks([])
    elif fig.kind == "forest":
        labels = [r["row"] for r in rows]
        for i, r in enumerate(rows):
            if r["low"] is not None and r["high"] is not None:
                ax.hlines(i, r["low"], r["high"], colors="grey")
            ax.plot([r["mean"]], [i], "o", color="C0")
        ax.set_yticks(range(len(labels)), [_label(x) for x in labels], fontsize="x-small")
        ax.invert_yaxis()
    elif fig.kind == "pr-curve":
        # several strata share one axes: a line style per section, a colour per lane
        sections = list(dict.fromkeys(r["stratum"] for r in rows))
        lanes = list(dict.fromkeys(r["lane"] for r in rows))
        styles = ("-", "--", ":", "-.")
        for si, sec in enumerate(sections):
            for li, lane in enumerate(lanes):
                pts = [r for r in rows if r["stratum"] == sec and r["lane"] == lane and r["precision"] is not None]
                name = lane if len(sections) == 1 else f"{lane} ({sec}, n {pts[0]['n'] if pts else 0})"
                ax.plot([r["recall"] for r in pts], [r["precision"] for r in pts], marker="o", markersize=3,
                        color=f"C{li % 10}", linestyle=styles[si % len(styles)], label=_label(name))
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.02)
    ax.set_xlabel(_label(fig.x))
    ax.set_ylabel(_label(fig.y))
    ax.set_title(_label(fig.title), fontsize="medium", loc="center", pad=6 + 11 * len(subtitle_lines(fig)))
    if subtitle_lines(fig):  # the Vega-Lite subtitle's lines, in small type under the title
        ax.text(0.5, 1.0, "\n".join(_label(x) for x in subtitle_lines(fig)), transform=ax.transAxes, ha="center",
                va="bottom", fontsize="x-small", color="#444444")
    if fig.kind in ("rrf-k", "gate", "pr-curve") or (fig.kind == "convex-grid" and "w_2" not in rows[0]):
        ax.legend(fontsize="small")


def figure_bytes(fig, suffix: str) -> bytes:
    """The figure in the format of ``suffix`` (one of :data:`SUFFIXES`)."""
    if suffix == ".vl.json":
        return vega_lite_text(fig).encode("utf-8")
    import warnings

    plt = _pyplot()
    height = 4.5 if fig.kind != "forest" else max(3.0, 0.22 * len(fig.rows) + 1.2)
    f, ax = plt.subplots(figsize=(7, height))
    try:
        # matplotlib's warnings (a glyph the font lacks: drawn as a box) are several lines
        # naming its source files, with the character raw: kept off the user's stderr
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _draw(ax, fig)
            f.tight_layout()
            buf = io.BytesIO()
            meta = {"svg": {"Date": None}, "pdf": {"CreationDate": None}, "png": {}}[suffix[1:]]
            f.savefig(buf, format=suffix[1:], metadata=meta)
        return buf.getvalue()
    finally:
        plt.close(f)
