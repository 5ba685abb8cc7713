"""The version is written once, as ``rankscope_tui.__version__``; the distribution's
metadata (``importlib.metadata.version("rankscope")``) is read from it by setuptools."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

import rankscope_tui

REPO = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    with open(REPO / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)


def test_pyproject_reads_the_version_from_the_package():
    conf = _pyproject()
    assert "version" not in conf["project"], "pyproject.toml writes the version a second time"
    assert "version" in conf["project"]["dynamic"]
    assert conf["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "rankscope_tui.__version__"}


def test_the_attr_setuptools_reads_is_the_package_version_without_importing_it():
    """setuptools reads ``attr:`` statically when the value is a literal (no import of the
    package at build time); the value it reads is the one ``import rankscope_tui`` gives."""
    from setuptools.config.expand import read_attr

    code = ("import sys; from setuptools.config.expand import read_attr; "
            f"v = read_attr('rankscope_tui.__version__', root_dir={str(REPO)!r}); "
            "print(v, 'rankscope_tui' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split() == [rankscope_tui.__version__, "False"]
    assert read_attr("rankscope_tui.__version__", root_dir=str(REPO)) == rankscope_tui.__version__


def test_the_version_is_a_literal_written_once_in_the_package():
    tree = ast.parse((REPO / "rankscope_tui" / "__init__.py").read_text(encoding="utf-8"))
    values = [n.value.value for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
              and any(isinstance(t, ast.Name) and t.id == "__version__" for t in n.targets)]
    assert values == [rankscope_tui.__version__]
    assert re.fullmatch(r"\d+\.\d+\.\d+", rankscope_tui.__version__)  # PEP 440 release segment, no suffix
    hits = [p for p in (REPO / "rankscope_tui").rglob("*.py")
            if p != REPO / "rankscope_tui" / "__init__.py"
            if re.search(rf"[\"']{re.escape(rankscope_tui.__version__)}[\"']", p.read_text(encoding="utf-8"))]
    assert hits == [], f"the version string written again in {hits}"


def _installed_from_this_checkout() -> bool:
    try:
        raw = metadata.distribution("rankscope").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return False
    if not raw:
        return False
    url = json.loads(raw).get("url", "")
    return url.startswith("file://") and Path(unquote(urlparse(url).path)).resolve() == REPO


def test_installed_metadata_carries_the_package_version():
    """Where this checkout is the installed one (``make test`` installs it editable), the
    metadata pip recorded holds the same version; a stale one means reinstall."""
    if not _installed_from_this_checkout():
        pytest.skip("rankscope is not installed from this checkout (the metadata belongs to another tree)")
    assert metadata.version("rankscope") == rankscope_tui.__version__
