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
FUZZ_STAMP := $(VENV)/.installed-fuzz
# `make fuzz`: seconds per target (26 targets: readers, options, outputs, the API; two at a time: about 10 minutes at 45)
FUZZ_SECONDS ?= 45

.PHONY: demo test bench fuzz clean

demo: $(RUN_STAMP)
	$(VENV)/bin/rankscope tui

# the contracts a machine checks first (lint and import order, then types: strict on the
# kernel), then the tests in two workers, one test file each (module fixtures stay shared
# within a file); the 20 slowest tests are listed at the end
test: $(TEST_STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(PY) -m pytest -q -n 2 --dist loadfile --durations=20

bench: $(BENCH_STAMP)
	$(PY) -m benchmarks

# every target of fuzz/fuzz_readers.py for FUZZ_SECONDS each (fuzz/README.md);
# fails when a target has a finding (fuzz/out/TARGET/ holds the smallest reproducer)
fuzz: $(FUZZ_STAMP)
	$(PY) fuzz/fuzz_readers.py --all --seconds $(FUZZ_SECONDS) --jobs 2

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

# atheris makes the fuzzing coverage-guided; where it cannot be installed, the script's
# seeded mutation loop runs instead (the same targets and checks)
$(FUZZ_STAMP): pyproject.toml $(RUN_STAMP)
	$(PY) -m pip install -q atheris || echo "rankscope: atheris not installed; fuzzing with the seeded mutation loop"
	touch $@

clean:
	rm -rf $(VENV) build *.egg-info
