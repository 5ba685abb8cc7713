"""The config file (``~/.config/rankscope/config.toml``, ``[tool.rankscope]`` in a project's
pyproject) and ``rankscope tui --theme``: what is read, in which order, each refusal, and
that the keymap and the theme reach a running dashboard.

Oracles: the expected values are written out by hand from the files each test writes
(the canonical metric keys as the README's Measures table spells them); the themes are
Textual's own ``BUILTIN_THEMES``; the binding ids are read from the ``Binding`` objects of
the classes, not from the registry the check uses.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import settle
from test_tui import FAST, demo_options, loaded, test_timing  # noqa: F401 (fixtures: the one demo and report)
from textual.theme import BUILTIN_THEMES

from rankscope_tui.app import RankscopeApp
from rankscope_tui.commands.tui import parse_args, read_config, resolve
from rankscope_tui.kernel.errors import InputError
from rankscope_tui.kernel.settings import load_config, user_config_path
from rankscope_tui.state import DashboardState

USER = """\
metrics = ["ndcg@10", "RR"]
relevant = 2
theme = "nord"

[keymap]
"app.help" = "h"
overview.next_tie = "T"
"""

PROJECT = """\
[project]
name = "someone-elses"

[tool.rankscope]
metrics = "P@10,ap"
strata = "strata.tsv"

[tool.rankscope.keymap]
"app.help" = "f1"
"""


@pytest.fixture
def homes(tmp_path, monkeypatch):
    """(user config file, project dir, a working dir two levels under the project): the
    config home set by $XDG_CONFIG_HOME, the working directory inside the project."""
    cfg = tmp_path / "xdg" / "rankscope" / "config.toml"
    cfg.parent.mkdir(parents=True)
    project = tmp_path / "proj"
    work = project / "src" / "deeper"
    work.mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(work)
    return cfg, project, work


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- where the files are


def test_the_user_file_follows_xdg_config_home():
    assert user_config_path({"XDG_CONFIG_HOME": "/x/conf", "HOME": "/h"}) == "/x/conf/rankscope/config.toml"
    # unset, empty or relative: ~/.config (the XDG Base Directory rule)
    for env in ({"HOME": "/h"}, {"XDG_CONFIG_HOME": "", "HOME": "/h"}, {"XDG_CONFIG_HOME": "rel", "HOME": "/h"}):
        assert user_config_path(env) == "/h/.config/rankscope/config.toml"


def test_no_file_sets_nothing(homes):
    config = load_config(os.getcwd())
    assert (config.metrics, config.relevant, config.strata, config.theme, config.keymap, config.files) == (
        None, None, (), None, (), ())


def test_a_pyproject_without_the_table_is_passed_over(homes):
    cfg, project, work = homes
    write(project / "pyproject.toml", PROJECT)
    write(work.parent / "pyproject.toml", '[project]\nname = "rankscope-plugin"\n')  # nearer, mentions rankscope, no table
    assert load_config(os.getcwd()).files == (str(project / "pyproject.toml"),)


def test_an_unrelated_broken_pyproject_above_stops_nothing(homes):
    cfg, project, work = homes
    write(project / "pyproject.toml", "[project\nname = ")  # not ours: never parsed
    assert load_config(os.getcwd()).files == ()


# ----------------------------------------------------------------------------- precedence


def test_project_beats_user_key_by_key(homes):
    cfg, project, work = homes
    write(cfg, USER)
    write(project / "pyproject.toml", PROJECT)
    c = load_config(os.getcwd())
    assert c.files == (str(cfg), str(project / "pyproject.toml"))
    assert c.metrics == ("p@10", "ap") and c.source("metrics") == str(project / "pyproject.toml")
    assert c.relevant == 2 and c.source("relevant") == str(cfg)
    assert c.theme == "nord" and c.source("theme") == str(cfg)
    # a relative strata path is read from the file's directory, not the working directory
    assert c.strata == (str(project / "strata.tsv"),)
    assert dict(c.keymap) == {"app.help": "f1", "overview.next_tie": "T"}
    assert c.source("keymap.app.help") == str(project / "pyproject.toml")
    assert c.source("keymap.overview.next_tie") == str(cfg)


def test_the_command_line_beats_both(homes, demo_dir):
    cfg, project, work = homes
    write(cfg, USER)
    write(project / "pyproject.toml", PROJECT)
    (project / "strata.tsv").write_text("q\tx\n", encoding="utf-8")
    inputs = ["--lane", str(demo_dir / "lexical.run"), "--qrels", str(demo_dir / "qrels-test.txt")]
    config = read_config()

    state = resolve(parse_args(inputs), config)
    assert [m.key for m in state.options.load.metrics] == ["p@10", "ap"]
    assert state.options.load.relevant == 2
    assert state.options.strata == (str(project / "strata.tsv"),)
    assert state.theme == "nord" and dict(state.keymap) == {"app.help": "f1", "overview.next_tie": "T"}

    cli = parse_args(inputs + ["--metrics", "rr", "--relevant", "1", "--strata", str(demo_dir / "strata.tsv"),
                               "--theme", "dracula"])
    state = resolve(cli, config)
    assert [m.key for m in state.options.load.metrics] == ["rr"]
    assert state.options.load.relevant == 1  # given as the default value: still the command line's
    assert state.options.strata == (str(demo_dir / "strata.tsv"),)
    assert state.theme == "dracula"


def test_the_demo_keeps_its_own_data_settings(homes, demo_dir):
    cfg, project, work = homes
    write(cfg, USER)
    state = resolve(parse_args(["--demo-dir", str(work / "demo")]), read_config())
    assert state.synthetic
    assert state.options.load.relevant == 1
    assert [m.key for m in state.options.load.metrics] == [
        "hit@1", "hit@5", "hit@10", "recall@10", "recall@100", "rr", "ndcg@10", "p@10", "judged@10"]
    assert [Path(p).name for p in state.options.strata] == ["strata.tsv"]  # the demo's own
    assert state.theme == "nord" and dict(state.keymap)["app.help"] == "h"


def test_rankscope_config_says_where_each_setting_came_from(homes, cli_run):
    cfg, project, work = homes
    write(cfg, USER)
    write(project / "pyproject.toml", PROJECT)
    rc, out, err = cli_run("config", "--relevant", "3")
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"files read: {cfg}, {project / 'pyproject.toml'} [tool.rankscope]"
    rows = {ln.split()[0]: ln.split()[1:] for ln in lines[3:] if ln and not ln.startswith("themes:")}
    assert rows["metrics"] == ["p@10,ap", str(project / "pyproject.toml")]
    assert rows["relevant"] == ["3", "command", "line"]
    assert rows["strata"] == [str(project / "strata.tsv"), str(project / "pyproject.toml")]
    assert rows["theme"] == ["nord", str(cfg)]
    assert rows["keymap.app.help"] == ["f1", str(project / "pyproject.toml")]
    assert rows["keymap.overview.next_tie"] == ["T", str(cfg)]
    assert "None" not in out and "nan" not in out


def test_rankscope_config_without_files_shows_the_defaults(homes, cli_run):
    rc, out, _ = cli_run("config")
    assert rc == 0 and out.startswith("files read: none")
    rows = {ln.split()[0]: ln.split()[1:] for ln in out.splitlines()[3:] if ln and not ln.startswith("themes:")}
    assert rows["relevant"] == ["1", "default"] and rows["theme"] == ["textual-dark", "default"]
    assert rows["metrics"][0] == "hit@1,hit@5,hit@10,recall@10,recall@100,rr,ndcg@10,p@10,judged@10"


# ----------------------------------------------------------------------------- each refusal


ERRORS = [
    ("unknown-key", "colour = 1\n", "config.toml:1: colour: unknown key"),
    ("relevant-type", 'theme = "nord"\nrelevant = "2"\n', 'config.toml:2: relevant: must be an integer >= 1, got "2"'),
    ("relevant-bool", "relevant = true\n", "config.toml:1: relevant: must be an integer >= 1, got true"),
    ("relevant-zero", "relevant = 0\n", "config.toml:1: relevant: must be an integer >= 1, got 0"),
    ("metrics-type", "metrics = 5\n", "config.toml:1: metrics: must be a list of metric names"),
    ("metrics-items", "metrics = [1, 2]\n", "config.toml:1: metrics: must be a list of metric names"),
    ("metrics-unknown", 'metrics = ["ndcg@10", "rrr"]\n', "config.toml:1: metrics: unknown metric 'rrr'"),
    ("strata-type", "strata = 3\n", "config.toml:1: strata: must be a path or a list of paths"),
    ("theme-type", "theme = 3\n", "config.toml:1: theme: must be a theme name"),
    ("theme-unknown", '\ntheme = "nope"\n', "config.toml:2: theme: unknown theme 'nope' (the themes are ansi-dark,"),
    ("keymap-type", 'keymap = "x"\n', "config.toml:1: keymap: must be a table of binding id = keys"),
    ("keymap-value", '[keymap]\n"app.quit" = 5\n', "config.toml:2: keymap.app.quit: must be a key or a comma list"),
    ("keymap-blank", '[keymap]\n"app.quit" = "x,"\n', "config.toml:2: keymap.app.quit: must be a key or a comma list"),
    ("keymap-id", '[keymap]\n"app.qiut" = "x"\n', "config.toml:2: keymap.app.qiut: no dashboard binding has this id"),
    ("keymap-nested-id", "[keymap.overview]\nnext_tye = \"x\"\n",
     "config.toml:2: keymap.overview.next_tye: no dashboard binding has this id"),
    ("toml", 'metrics = ["rr"\nrelevant = 2\n', "config.toml:2: not valid TOML: Unclosed array"),
    ("toml-end", "\nmetrics = [\n", "config.toml:2: not valid TOML: Invalid value"),
]


@pytest.mark.parametrize(("text", "expected"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
@pytest.mark.parametrize("command", ["config", "tui"])
def test_each_bad_user_file_is_one_line_and_exit_2(homes, cli_run, text, expected, command):
    cfg, project, work = homes
    write(cfg, text)
    rc, out, err = cli_run(command)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"rankscope: error: {cfg.parent}/") and expected in err, err


def test_a_bad_project_table_names_the_pyproject_and_the_table(homes, cli_run):
    cfg, project, work = homes
    write(project / "pyproject.toml", '[project]\nname = "x"\n\n[tool.rankscope]\nrelevant = 1\nmetrics = "p@10,zz"\n')
    rc, _, err = cli_run("config")
    assert rc == 2
    assert err.startswith(f"rankscope: error: {project / 'pyproject.toml'}:6: tool.rankscope.metrics: unknown metric 'zz'")
    write(project / "pyproject.toml", '[tool.rankscope]\nmetrics = "p@10"\n[tool.rankscope.keymap]\n"nope" = "x"\n')
    rc, _, err = cli_run("config")
    assert rc == 2 and "pyproject.toml:4: tool.rankscope.keymap.nope: no dashboard binding has this id" in err


def test_an_unknown_theme_on_the_command_line_lists_the_themes(homes, cli_run):
    rc, out, err = cli_run("tui", "--theme", "solarised")
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert err == ("rankscope: error: --theme: unknown theme 'solarised' (the themes are "
                   + ", ".join(sorted(BUILTIN_THEMES)) + ")\n")


def test_an_entry_of_an_inline_table_points_at_the_table(homes):
    cfg, project, work = homes
    write(cfg, 'keymap = { "app.quit" = 7 }\n')
    with pytest.raises(InputError) as exc:
        load_config(os.getcwd())
    assert str(exc.value).startswith(f"{cfg}:1: keymap.app.quit:")


# ----------------------------------------------------------------------------- the ids


def _binding_ids_of_the_classes() -> set[str]:
    from textual.binding import Binding

    from rankscope_tui.screens import SCREEN_CLASSES, screen_class
    from rankscope_tui.widgets import dialogs, kslider

    owners = [RankscopeApp, *(screen_class(m) for m in SCREEN_CLASSES)]
    owners += [c for mod in (dialogs, kslider) for c in vars(mod).values()
               if isinstance(c, type) and c.__module__ == mod.__name__ and "BINDINGS" in c.__dict__]
    out = set()
    for owner in owners:
        for b in Binding.make_bindings(owner.__dict__.get("BINDINGS", [])):
            assert b.id, f"{owner.__name__}: the binding of {b.key!r} has no id (a keymap cannot name it)"
            out.add(b.id)
    return out


def test_the_id_registry_is_every_binding_id():
    from rankscope_tui.screens import BINDING_IDS

    assert set(BINDING_IDS) == _binding_ids_of_the_classes()


# ----------------------------------------------------------------------------- in a running dashboard


def _app(demo_options, loaded, config) -> RankscopeApp:  # noqa: F811 (the fixtures' names)
    ws, report = loaded
    return RankscopeApp(DashboardState(demo_options, synthetic=True, source_label="demo", base_workspace=ws,
                                       report=report, theme=config.theme, keymap=config.keymap))


async def test_the_keymap_rebinds_keys_in_a_running_dashboard(homes, demo_options, loaded):  # noqa: F811
    cfg, project, work = homes
    write(cfg, '[keymap]\n"view.strata" = "x"\n"app.quit" = "ctrl+x"\n')
    app = _app(demo_options, loaded, read_config())
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        assert app.current_mode == "overview"
        await pilot.press("2")  # the old key of the Strata view: bound to nothing now
        await settle(app, pilot)
        assert app.current_mode == "overview"
        await pilot.press("x")
        await settle(app, pilot)
        assert app.current_mode == "strata"
        # the numbered bar names the key that now opens each view
        bar = app.screen.query_one("#viewbar").render().plain
        assert " x Strata " in bar and " 2 " not in bar and " 1 Ov" in bar
        await pilot.press("question_mark")  # help lists the keys as they are now
        await settle(app, pilot)
        from rankscope_tui.widgets.dialogs import HelpScreen

        assert isinstance(app.screen, HelpScreen)
        assert "| `x` | Strata | app |" in app.screen.markdown and "`1`–`9`, `0`" not in app.screen.markdown
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("q")  # quit moved to ctrl+x: q quits no more
        await settle(app, pilot)
        assert app.is_running and app.current_mode == "strata"
        await pilot.press("ctrl+x")
        await pilot.pause()
    assert not app.is_running


async def test_the_theme_is_applied(homes, demo_options, loaded):  # noqa: F811
    cfg, project, work = homes
    write(cfg, 'theme = "nord"\n')
    app = _app(demo_options, loaded, read_config())
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        assert app.theme == "nord"
        # the theme's colours are what the views draw with (Textual's own definition of nord)
        assert app.theme_variables["primary"].lower() == BUILTIN_THEMES["nord"].primary.lower()
        assert BUILTIN_THEMES["nord"].primary.lower() != BUILTIN_THEMES["textual-dark"].primary.lower()


def test_the_readmes_example_file_is_accepted(homes):
    """The config file the README shows is one rankscope reads as the README says."""
    import re

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    example = re.search(r"\*\*The config file\.\*\*.*?```toml\n(.*?)```", readme, re.S)
    assert example, "the README shows no example config file"
    cfg, project, work = homes
    write(cfg, example.group(1))
    c = read_config()
    assert c.metrics == ("ndcg@10", "rr", "p@10") and c.relevant == 2 and c.theme == "nord"
    assert c.strata == (str(cfg.parent / "strata.tsv"),)
    assert dict(c.keymap) == {"app.quit": "ctrl+q", "view.strata": "f2", "overview.next_tie": "n,t"}
