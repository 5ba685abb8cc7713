"""Seeded random storms of keys and pastes: the dashboard stays alive and answering.

A storm is 500 actions drawn from one seed: single keys (every binding family, the palette,
dialogs' keys), key bursts that type a string character by character, and bracketed pastes
(what a terminal sends for a paste) into whatever has focus. The strings are the hostile ones
the dashboard met in the field: 40 digits (Textual's number-type regex used to back-track
for minutes on such a paste), markup in query texts (``see [/] here`` ends an app that reads
it as markup; ``[@click=app.quit]`` would become a link), and palette commands typed after
``ctrl+p``. The data sets are the demo, the demo with markup in its query ids and texts,
and Cranfield with texts (with strata for the third).

More storms: ``RANKSCOPE_STORM_SEEDS=5,6,7 RANKSCOPE_STORM_LENGTH=500 pytest
tests/test_tui_storms.py -k extra`` (each seed runs on every data set).
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import unicodedata
from pathlib import Path

import pytest
from support import SHARED_DATA, settle
from test_tui import demo_options, loaded, test_timing  # noqa: F401 (the shared demo fixtures and short debounce)
from test_tui_behaviour import make_app, send
from textual import events
from textual.keys import KEY_NAME_REPLACEMENTS

from rankscope_tui.commands.tui import parse_args, state_from_args
from rankscope_tui.demo import FILES

SIZE = (120, 36)
FAST = ["--resamples", "999"]
LENGTH = int(os.environ.get("RANKSCOPE_STORM_LENGTH", "500"))
EXTRA_SEEDS = [int(x) for x in os.environ.get("RANKSCOPE_STORM_SEEDS", "").split(",") if x]

KEYS = (list("123456789") + ["ctrl+p", "tab", "shift+tab", "enter", "escape", "up", "down", "left", "right",
        "slash", "e", "o", "question_mark", "c", "a", "f", "v", "t", "r", "left_square_bracket",
        "right_square_bracket", "plus", "minus", "space", "0", "x", "backspace", "home", "end", "pagedown",
        "pageup", "shift+left", "shift+right"])
STRINGS = ("1234567890123456789012345678901234567890", "1234567890123456789012345678901234567890x",
           "see [/] here", "[@click=app.quit]press[/]", "array[i] = x[/i]", "[citation needed]",
           "0.05", "-1e309", "set k = 99999999999999999999999999", "theme", "export", "q[/]3")
# typed key by key, a string must not hold `q`: outside a text field that is the quit key
TYPED = tuple(s for s in STRINGS if "q" not in s)
# query ids and texts with markup, for the demo's hostile copy
HOSTILE_QIDS = {"q1": "q[/]1", "q2": "[b]q2", "q3": "q3[@click=app.quit]x[/]"}
HOSTILE_TEXTS = {"q4": "see [/] here", "q5": "[@click=app.quit]press[/] now", "q6": "array[i] = x[/i]",
                 "q7": "a [citation needed] claim"}


def _hostile_demo(demo_dir: Path, out: Path) -> list[str]:
    """A copy of the demo whose first query ids and some query texts hold markup."""
    qid_re = re.compile(r"^(\S+)")
    for name in FILES.values():
        src = demo_dir / name
        if not src.is_file():
            continue
        text = src.read_text(encoding="utf-8")
        if name.endswith((".run", ".txt", ".tsv")) and name not in ("corpus.tsv", "docs.tsv", "README.txt"):
            lines = []
            for line in text.splitlines():
                qid = qid_re.match(line).group(1) if line else ""
                new_qid = HOSTILE_QIDS.get(qid, qid)
                line = new_qid + line[len(qid):]
                if name == "queries.tsv" and qid in HOSTILE_TEXTS:
                    line = f"{new_qid}\t{HOSTILE_TEXTS[qid]}"
                lines.append(line)
            text = "\n".join(lines) + "\n"
        (out / name).write_text(text, encoding="utf-8")
    from rankscope_tui.commands.tui import demo_argv

    return demo_argv(out)


def _options(data: str, demo_dir: Path, tmp_path: Path):
    if data == "demo+markup":
        argv = _hostile_demo(demo_dir, tmp_path)
        return state_from_args(parse_args(argv + FAST), synthetic=True).options
    c = SHARED_DATA / "cranfield"
    if not c.exists():
        pytest.skip(f"shared data not found: {c}")
    argv = [a for n in ("bm25", "tfidf", "dense") for a in ("--lane", str(c / "lanes" / f"{n}.run"))]
    argv += ["--qrels", str(c / "qrels-test.txt"), "--group-sep", "#", "--corpus", str(c / "passages.tsv"),
             "--queries", str(c / "queries.tsv"), "--docs", str(c / "passages.tsv"),
             "--gate-on", "dense", "--ood-negatives", str(c / "qrels-ood-negatives.txt"),
             "--dev-qrels", str(c / "qrels-dev.txt"), *FAST]
    if data.endswith("strata"):
        argv += ["--strata", str(c / "strata.tsv"), "--strata", str(c / "strata-length.tsv")]
    return state_from_args(parse_args(argv)).options


def _type(app, ch: str) -> None:
    """One typed character as a terminal delivers it: the key's name and the character."""
    key = ch if ch.isalnum() else unicodedata.name(ch).lower().replace("-", "_").replace(" ", "_")
    event = events.Key(KEY_NAME_REPLACEMENTS.get(key, key), ch)
    event.set_sender(app)
    app._driver.send_message(event)


def _actions(seed: int) -> list[tuple[str, str]]:
    """The storm: ("key", k), ("type", s) typed key by key, ("paste", s) as one paste."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    while len(out) < LENGTH:
        r = rng.random()
        if r < 0.80:
            out.append(("key", rng.choice(KEYS)))
        elif r < 0.88:
            out.append(("paste", rng.choice(STRINGS)))
        elif r < 0.95:
            out.append(("type", rng.choice(TYPED)))
        else:  # the palette, then a command typed into it
            out += [("key", "ctrl+p"), ("type", rng.choice(TYPED))]
    return out[:LENGTH]


async def _storm(app, pilot, actions, rng: random.Random) -> None:
    await settle(app, pilot)
    assert app.state.report is not None
    for i, (kind, what) in enumerate(actions):
        if kind == "key":
            send(app, what)
        elif kind == "type":
            for ch in what:
                _type(app, ch)
        else:
            event = events.Paste(what)
            event.set_sender(app)
            app._driver.send_message(event)
        await asyncio.sleep(rng.choice((0.0, 0.002, 0.01)))
        assert app.is_running and app._exception is None, (i, actions[max(0, i - 10): i + 1])
    await settle(app, pilot, 0.1)
    assert app.is_running and app._exception is None
    # still answering: close what the storm opened, go home, and the home view is drawn
    while len(app.screen_stack) > 1:
        app.pop_screen()
        await pilot.pause()
    app.screen.set_focus(None)
    await pilot.press("1")
    await settle(app, pilot)
    assert app.current_mode == "overview" and app._exception is None


DATA = ["demo", "demo+markup", "cranfield", "cranfield+strata"]


@pytest.mark.parametrize("data,seed", list(zip(DATA, range(1, 1 + len(DATA)))))
async def test_a_storm_leaves_the_dashboard_alive(data, seed, demo_dir, demo_options, loaded, tmp_path, monkeypatch):
    await _run(data, seed, demo_dir, demo_options, loaded, tmp_path, monkeypatch)


@pytest.mark.skipif(not EXTRA_SEEDS, reason="RANKSCOPE_STORM_SEEDS is not set (more storms on request)")
@pytest.mark.parametrize("data,seed", [(d, s) for s in EXTRA_SEEDS or [0] for d in DATA])
async def test_extra_storms(data, seed, demo_dir, demo_options, loaded, tmp_path, monkeypatch):
    await _run(data, seed, demo_dir, demo_options, loaded, tmp_path, monkeypatch)


async def _run(data, seed, demo_dir, demo_options, loaded, tmp_path, monkeypatch) -> None:
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)  # what the storm types into the export dialog is written here
    if data == "demo":
        app = make_app(demo_options, loaded)
    else:
        src = tmp_path / "data"
        src.mkdir()
        app = make_app(_options(data, demo_dir, src), synthetic=data.startswith("demo"))
    if data == "demo+markup":
        assert app.state.options.queries  # the hostile copy is read with its texts
    async with app.run_test(size=SIZE) as pilot:  # a traceback anywhere re-raises here
        if data == "demo+markup":
            await settle(app, pilot)
            assert set(HOSTILE_QIDS.values()) <= set(map(str, app.ws.qids))
        await _storm(app, pilot, _actions(seed), random.Random(seed))
