# Two entry points for a fresh clone: `make demo` and `make test`.
# Both create the virtual environment on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench fuzz clean

demo: $(STAMP)
	$(VENV)/bin/rankscope tui

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) -m pip install -q -e ".[test,bench]"
	$(PY) -m benchmarks

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test]"
	$(PY) -m compileall -q rankscope_tui
	touch $(STAMP)

clean:
	rm -rf $(VENV) build *.egg-info
