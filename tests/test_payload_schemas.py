"""Every JSON payload rankscope writes names its schema in its first key, and CHANGELOG.md
lists every schema string the package writes.

The expected strings are written out here by hand (not read from the constants), so a
renamed schema fails until the changelog and this list say so too.
"""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import pytest

import rankscope_tui

REPO = Path(__file__).resolve().parents[1]
SCHEMA_RE = re.compile(r"\brankscope\.[a-z_]+/\d+\b")

#: payload -> its schema string (the ``schema`` key, first in the object)
EXPECTED = {
    "evaluate --out": "rankscope.report/1",
    "calibrate --out": "rankscope.thresholds/1",
    "compare --out": "rankscope.compare/1",
    "compare --all-pairs --out": "rankscope.all_pairs/1",
    "diff --out": "rankscope.diff/1",
    "verdict --out": "rankscope.verdict/1",
    "plan --out": "rankscope.plan/1",
    "pool --json": "rankscope.pool/1",
    "agree --out": "rankscope.agree/1",
}


def _first_key(path: Path) -> tuple[str, object]:
    payload = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(payload, dict) and payload, path
    key = next(iter(payload))
    return key, payload[key]


@pytest.fixture(scope="module")
def payloads(demo_dir, tmp_path_factory) -> dict[str, Path]:
    """One file per payload, written by the command line over the demo data."""
    from rankscope_tui import cli

    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}  # cli.main installs its own
    d = tmp_path_factory.mktemp("payloads")
    lanes = ["--lane", str(demo_dir / "lexical.run"), "--lane", str(demo_dir / "dense.run")]
    test_qrels = ["--qrels", str(demo_dir / "qrels-test.txt")]
    calls = {
        "evaluate --out": ["evaluate", *lanes, *test_qrels, "--resamples", "0", "--out", d / "r1.json"],
        "calibrate --out": ["calibrate", *lanes, "--qrels", str(demo_dir / "qrels-dev.txt"), "--gate-on", "dense",
                            "--resamples", "0", "--out", d / "th.json"],
        "compare --out": ["compare", *lanes, *test_qrels, "--resamples", "999", "--out", d / "c.json"],
        "compare --all-pairs --out": ["compare", *lanes, *test_qrels, "--all-pairs", "--resamples", "999",
                                      "--out", d / "a.json"],
        "plan --out": ["plan", *lanes, *test_qrels, "--delta", "0.05", "--out", d / "p.json"],
        "pool --json": ["pool", *lanes, *test_qrels, "--budget", "5", "--json", d / "pool.json"],
        "agree --out": ["agree", *test_qrels, "--qrels-b", d / "second-qrels.txt", *lanes, "--resamples", "99",
                        "--out", d / "g.json"],
    }
    (d / "second-qrels.txt").write_bytes((demo_dir / "qrels-test.txt").read_bytes())  # the same labels: kappa 1
    out = {}
    for name, argv in calls.items():
        rc = cli.main([str(a) for a in argv])
        assert rc == 0, name
        out[name] = Path(argv[-1])
    # a report against itself: every row reads "no change", the payload's shape is the same
    assert cli.main(["diff", "--before", str(d / "r1.json"), "--after", str(d / "r1.json"), "--resamples", "999",
                     "--out", str(d / "d.json")]) == 0
    out["diff --out"] = d / "d.json"
    # the demo's gates fail on purpose (exit 1); the payload is written either way
    assert cli.main(["verdict", "--report", str(d / "r1.json"), "--gates", str(demo_dir / "gates.json"),
                     "--out", str(d / "v.json")]) in (0, 1)
    out["verdict --out"] = d / "v.json"
    for sig, handler in saved.items():
        signal.signal(sig, handler)
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_payload_opens_with_its_schema(payloads, name, capsys):
    capsys.readouterr()
    assert _first_key(payloads[name]) == ("schema", EXPECTED[name])


def test_compare_out_schema_is_the_first_key_in_the_api_too(demo_dir):
    res = rankscope_tui.compare(str(demo_dir / "qrels-test.txt"),
                                [str(demo_dir / "lexical.run"), str(demo_dir / "dense.run")], resamples=999)
    payload = res.as_dict()
    assert list(payload)[0] == "schema" and payload["schema"] == "rankscope.compare/1"
    assert "comparisons" in payload and "settings" in payload  # the rest of the payload is still there


def _changelog_schemas() -> set[str]:
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    m = re.search(r"^## Payload schemas\n(.*?)(?=^## )", text, flags=re.S | re.M)
    assert m, "CHANGELOG.md has no '## Payload schemas' section"
    return set(SCHEMA_RE.findall(m.group(1)))


def _package_schemas() -> set[str]:
    """The schema strings written as literals in the package's source."""
    found: set[str] = set()
    for py in (REPO / "rankscope_tui").rglob("*.py"):
        found |= set(re.findall(r"[\"'](rankscope\.[a-z_]+/\d+)[\"']", py.read_text(encoding="utf-8")))
    return found


def test_changelog_lists_every_schema_the_package_writes():
    assert _package_schemas() == set(EXPECTED.values())
    assert _changelog_schemas() == set(EXPECTED.values())
