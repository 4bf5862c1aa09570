# chatkeep — `make run` sets up and runs the demo on the embedded SQLite default,
# `make test` sets up and runs the whole test suite.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup run test check bench fuzz clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
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

# The property-based hostile-input suite at 50× its CI budget: 1,075,000 examples (about an hour
# on two cores). CI runs the same suite at 1× (21,500 examples) as part of `make test`.
fuzz: $(STAMP)
	CHATKEEP_FUZZ_SCALE=50 $(BIN)/pytest -q -p no:cacheprovider tests/hostile/test_properties.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
