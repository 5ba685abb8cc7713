"""A terminal chart widget: a plotext figure drawn into a Textual widget.

The views draw their charts (the P–R curve, the compare intervals, the weight grid, the
fusion curve over k, the gate's FNIR/FPIR trade-off) with plotext's figure API. This
widget owns one figure per chart, sizes it to the widget on every render, paints the
canvas in the app theme's ``surface`` colour with ``foreground`` ticks, and turns
plotext's ANSI text into a Rich ``Text``: the plotted labels are never read as markup.

plotext is imported on the first draw, not when a view module is imported, so the
dashboard's first frame does not wait for it. plotext 5 has no public constructor for a
stand-alone figure (its module-level functions share one global figure), so the figure
class and the theme table are taken from its private modules here, and nowhere else;
``pyproject.toml`` keeps plotext below 6, a rewrite without them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import RenderResult
from textual.color import Color
from textual.widget import Widget

if TYPE_CHECKING:
    from textual.theme import Theme

__all__ = ["SERIES_COLOURS", "TermPlot"]

#: the colour of each series drawn without an explicit colour, in order (RGB): Sasha
#: Trubetskoy's list of 20 distinct colours, readable on light and dark canvases alike (the
#: dashboard snapshots in tests/__snapshots__ pin these exact values)
SERIES_COLOURS: tuple[tuple[int, int, int], ...] = (
    (0, 130, 200), (60, 180, 75), (230, 25, 75), (255, 225, 25), (245, 130, 48),
    (145, 30, 180), (70, 240, 240), (240, 50, 230), (180, 225, 40), (250, 190, 212),
    (0, 128, 128), (220, 190, 255), (170, 110, 40), (235, 230, 180), (128, 0, 0),
    (170, 255, 195), (128, 128, 0), (255, 215, 180), (0, 0, 245), (128, 128, 128),
)
THEME_PREFIX = "rankscope-"


def _plotext_theme(app_theme: str, surface: str, foreground: str) -> str:
    """The plotext theme name for an app theme, registered in plotext's table on first use.

    A plotext theme is ``[canvas, axes, ticks, ticks style, series colours]``; canvas and
    axes take the app's surface colour, ticks its foreground, so the chart sits on the
    panel like any other widget.
    """
    from plotext._dict import themes  # plotext 5's theme table (see the module docstring)

    name = THEME_PREFIX + app_theme
    if name not in themes:
        back = Color.parse(surface).rgb
        themes[name] = (back, back, Color.parse(foreground).rgb, "default", list(SERIES_COLOURS))
    return name


class TermPlot(Widget):
    """One plotext chart; draw through :attr:`plt` (plotext's figure methods), then ``refresh()``."""

    DEFAULT_CSS = """
    TermPlot {
        width: 1fr;
        height: 1fr;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._figure: Any = None

    @property
    def plt(self) -> Any:
        """This chart's plotext figure: ``plot``, ``scatter``, ``vline``, ``xlim``, ``title``, … as in plotext."""
        if self._figure is None:
            from plotext._figure import _figure_class  # plotext 5's figure (see the module docstring)

            self._figure = _figure_class()
        return self._figure

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._on_theme)

    def _on_theme(self, theme: Theme) -> None:
        self.refresh()

    def render(self) -> RenderResult:
        plt = self.plt
        width, height = self.size.width, self.size.height
        plt.plotsize(width, height)
        # plotsize alone leaves the subplot's own size at the previous value after a resize
        # (plotext 5 sets it through _set_size when a figure is shown, which never happens here)
        plt._set_size(width, height)
        variables = self.app.theme_variables
        plt.theme(_plotext_theme(self.app.theme, variables["surface"], variables["foreground"]))
        return Text.from_ansi(plt.build())
