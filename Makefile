# Two entry points for a fresh clone: `make demo` and `make test`.
# Both create the virtual environment on first use; `demo` installs what rankscope
# needs to run, `test` adds the test tools and the peers the tests compare against.
# A failed install stops here, before anything opens.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
BASE := $(VENV)/.venv-created
RUN_STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test
BENCH_STAMP := $(VENV)/.installed-bench

.PHONY: demo test bench fuzz clean

demo: $(RUN_STAMP)
	$(VENV)/bin/rankscope tui

# the contracts a machine checks first (lint and import order, then types: strict on the
# kernel), then the tests in two workers, one test file each (module fixtures stay shared
# within a file)
test: $(TEST_STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(PY) -m pytest -q -n 2 --dist loadfile

bench: $(BENCH_STAMP)
	$(PY) -m benchmarks

$(BASE):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	touch $@

$(RUN_STAMP): pyproject.toml $(BASE)
	@echo "rankscope: installing rankscope into $(VENV)"
	$(PY) -m pip install -q -e .
	$(PY) -m compileall -q rankscope_tui
	@echo "rankscope: installed"
	touch $@

$(TEST_STAMP): pyproject.toml $(RUN_STAMP)
	@echo "rankscope: installing the test tools into $(VENV)"
	$(PY) -m pip install -q -e ".[test]"
	touch $@

$(BENCH_STAMP): pyproject.toml $(TEST_STAMP)
	$(PY) -m pip install -q -e ".[test,bench]"
	touch $@

clean:
	rm -rf $(VENV) build *.egg-info
