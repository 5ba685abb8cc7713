"""The footer of every view: Textual's ``Footer`` whose keys are made in their final style.

Textual makes each key compact (its default), binds it to the footer's ``compact``, which
is not, and so restyles the key twice while it mounts (class ``-compact`` added, then
removed; each time the whole stylesheet is matched against the key and its two parts).
Every view's footer has about ten keys, and it is made again whenever the bindings change
(focus, a new view): ~60 ms of the event loop per footer on the Cranfield start. Here each
bound key gets the footer's value (and class) before it mounts, so the binding finds it
current and restyles nothing; the keys look and behave exactly as Textual's.
"""

from __future__ import annotations

from textual.widgets import Footer

from .textual_private import FooterKey, is_data_bound


class ViewFooter(Footer):
    def compose(self):
        compact = self.compact
        for widget in super().compose():
            if isinstance(widget, FooterKey) and is_data_bound(widget):
                widget.set_reactive(FooterKey.compact, compact)
                widget.set_class(compact, "-compact", update=False)
            yield widget
