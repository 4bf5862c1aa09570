# chatkeep — `make run` sets up and runs the demo on the embedded SQLite default,
# `make test` sets up and runs the whole test suite.
# `make run` installs the runtime only; `make test` adds the test and lint tools.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
RUN_STAMP := $(VENV)/.installed

.PHONY: setup run test check bench fuzz clean

# Two stamps: the runtime alone (what `pip install chatkeep` gives) for `make run`, the test
# and lint tools on top of it for `make setup`, `make test` and `make check`.
$(VENV)/bin/python:
	$(PY) -m venv $(VENV)

$(RUN_STAMP): pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e .
	touch $(RUN_STAMP)

$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP) $(RUN_STAMP)

setup: $(STAMP)

run: $(RUN_STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

test: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/pytest -q

check: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/pip install --quiet -r bench/requirements.txt
	$(BIN)/python -m bench

# The property-based suites at 50× their CI budget: the hostile-input suite (1,075,000 examples,
# about an hour on two cores) and the promise that nothing given is lost (sequences of up
# to 28 user steps, 500 sequences). CI runs the same suites at 1× as part of `make test`.
fuzz: $(STAMP)
	CHATKEEP_FUZZ_SCALE=50 $(BIN)/pytest -q -p no:cacheprovider tests/hostile/test_properties.py tests/hostile/test_promise.py tests/hostile/test_import_fields.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
