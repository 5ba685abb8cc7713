"""User strings in the dashboard are shown as they are, never read as markup (Pilot).

A query text ``see [/] here`` (a closing tag with nothing open) used to end the app when it
reached the Find dialog; ``[@click=app.quit]press[/]`` would become a link that quits;
``[citation needed]`` (a tag Rich does not know) would vanish. Each is put in the demo's
query texts, found with `/`, and opened in the drill-down, whose head must show it verbatim.
"""

from __future__ import annotations

from dataclasses import replace

from support import settle
from textual.content import Content
from textual.widgets import OptionList, Static

from rankscope_tui.app import RankscopeApp
from rankscope_tui.commands.tui import demo_argv, parse_args, state_from_args
from rankscope_tui.state import DashboardState
from rankscope_tui.widgets.dialogs import SearchDialog

HOSTILE = {"q1": "see [/] here", "q2": "[@click=app.quit]press[/] now", "q3": "a [citation needed] claim"}
TYPED = {"q1": "see [/]", "q2": "[@click", "q3": "[citation"}  # what is typed into Find: the markup itself


def _plain(widget: Static) -> str:
    return str(widget.visual) if isinstance(widget.visual, Content) else str(widget.render())


async def test_query_texts_with_markup_are_shown_verbatim(demo_dir, tmp_path):
    demo_options = state_from_args(parse_args(demo_argv(demo_dir) + ["--resamples", "99"]), synthetic=True).options
    src = demo_options.queries[0]
    lines = open(src, encoding="utf-8").read().splitlines()
    out = []
    for line in lines:
        qid, _, text = line.partition("\t")
        out.append(f"{qid}\t{HOSTILE.get(qid, text)}")
    queries = tmp_path / "queries.tsv"
    queries.write_text("\n".join(out) + "\n", encoding="utf-8")
    options = replace(demo_options, queries=(str(queries),))
    app = RankscopeApp(DashboardState(options, source_label="markup"))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        assert app.ws is not None and all(app.ws.query_text[q] == t for q, t in HOSTILE.items())
        for qid, text in HOSTILE.items():
            await pilot.press("slash")
            await pilot.pause()
            assert isinstance(app.screen, SearchDialog)
            app.screen.query_one("#search-input").insert_text_at_cursor(TYPED[qid])
            await pilot.pause()
            options_shown = app.screen.query_one(OptionList)
            prompts = [str(options_shown.get_option_at_index(i).prompt) for i in range(options_shown.option_count)]
            assert f"{qid}  {text}" in prompts, prompts
            app.screen.dismiss(qid)
            await settle(app, pilot)
            assert app.is_running and app.current_mode == "query" and app.qid == qid
            head = _plain(app.screen.query_one("#q-head", Static))
            assert text in head, head  # verbatim: no tag read, none dropped
        assert app.is_running  # the [@click=app.quit] text was never a link that quit
