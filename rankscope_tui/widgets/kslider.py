"""KSlider: a small integer slider for the RRF k (and any other bounded integer).

←/→ move by ``step``, shift+←/→ by ``big_step``, home/end jump to the ends, a click
sets the value. ``value`` is clamped in ``validate_value``; every change posts
:class:`KSlider.Changed` (not the initial value, so a screen does not recompute on mount).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget


class KSlider(Widget, can_focus=True):
    DEFAULT_CSS = """
    KSlider {
        height: 1;
        width: 1fr;
        min-width: 24;
        color: $text-muted;
    }
    KSlider:focus {
        color: $text;
        background: $boost;
    }
    KSlider > .kslider--fill {
        color: $accent;
    }
    KSlider > .kslider--thumb {
        color: $accent;
        text-style: bold;
    }
    KSlider > .kslider--value {
        text-style: bold;
    }
    """
    COMPONENT_CLASSES = {"kslider--fill", "kslider--thumb", "kslider--value"}

    BINDINGS = [
        Binding("left", "nudge(-1)", "k−1", id="slider.down", tooltip="Decrease by one step"),
        Binding("right", "nudge(1)", "k+1", id="slider.up", tooltip="Increase by one step"),
        Binding("shift+left", "nudge(-10)", "k−10", id="slider.down10", show=False),
        Binding("shift+right", "nudge(10)", "k+10", id="slider.up10", show=False),
        Binding("home", "to_end(0)", "min", id="slider.min", show=False),
        Binding("end", "to_end(1)", "max", id="slider.max", show=False),
    ]

    value: reactive[int] = reactive(60, init=False)

    @dataclass
    class Changed(Message):
        slider: "KSlider"
        value: int

        @property
        def control(self) -> "KSlider":
            return self.slider

    def __init__(self, value: int = 60, minimum: int = 1, maximum: int = 200, label: str = "k", step: int = 1,
                 *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.minimum, self.maximum, self.label, self.step = int(minimum), int(maximum), label, int(step)
        self.set_reactive(KSlider.value, self.validate_value(value))

    def validate_value(self, value: int) -> int:
        return max(self.minimum, min(self.maximum, int(value)))

    def watch_value(self, value: int) -> None:
        self.post_message(self.Changed(self, value))

    def action_nudge(self, steps: int) -> None:
        self.value = self.value + steps * self.step

    def action_to_end(self, which: int) -> None:
        self.value = self.maximum if which else self.minimum

    def _bar_width(self) -> int:
        return max(4, self.size.width - len(self._prefix()) - len(self._suffix()))

    def _prefix(self) -> str:
        return f"{self.label} = {self.value:>{len(str(self.maximum))}}  "

    def _suffix(self) -> str:
        return f"  {self.minimum}…{self.maximum}"

    def render(self) -> Text:
        width = self._bar_width()
        span = max(1, self.maximum - self.minimum)
        pos = round((self.value - self.minimum) / span * (width - 1))
        text = Text(no_wrap=True, overflow="crop")
        text.append(self._prefix(), style=self.get_component_rich_style("kslider--value", partial=True))
        text.append("━" * pos, style=self.get_component_rich_style("kslider--fill", partial=True))
        text.append("●", style=self.get_component_rich_style("kslider--thumb", partial=True))
        text.append("─" * (width - pos - 1))
        text.append(self._suffix())
        return text

    def on_click(self, event: events.Click) -> None:
        x = event.x - len(self._prefix())
        width = self._bar_width()
        if 0 <= x < width:
            frac = x / max(1, width - 1)
            self.value = self.minimum + round(frac * (self.maximum - self.minimum))
        self.focus()
