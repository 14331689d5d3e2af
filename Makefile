# The two commands of the README's quick start: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
ARGS ?=

.PHONY: setup run test nightly-tests lint unit integration clean

# The search compiled with mypyc (core/compiled.py): rebuilt when its sources
# change, a no-op otherwise; without a C compiler the plain Python search runs.
setup: $(VENV)/.installed
	@$(BIN)/python scripts/compile_checker.py

# The checkout on the path (compat mode: a .pth line, no import finder to load at every
# start; setuptools calls the mode transitional, hence the fallback).
$(VENV)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]' --config-settings editable_mode=compat 2>/dev/null \
	  || $(BIN)/pip install -q -e '.[dev]'
	touch $@

# A first run on the built-in sim target: no Docker needed.
run: setup
	$(BIN)/harness run $(ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

unit: setup
	$(BIN)/pytest -q tests/unit

integration: setup
	$(BIN)/pytest -q tests/integration

# Everything CI runs: lint, type checks, unit and integration tests.
test: lint
	$(BIN)/pytest -q --durations=40 -m "not nightly" tests

# The variants and repeats of CI's tests (marked nightly): the nightly workflow runs them.
nightly-tests: setup
	$(BIN)/pytest -q --durations=40 -m nightly tests

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
