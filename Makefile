# One entry point for every task. Each target sets up .venv first (Python >= 3.11).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: build test bench docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

build: $(STAMP)  ## compute the shipped plan -> out/
	$(BIN)/ckptreport build

test: $(STAMP)  ## run the whole test suite
	$(BIN)/python -m pytest

bench: $(STAMP)  ## speed and memory benchmarks (figures, not pass/fail)
	$(BIN)/python benchmarks/bench_engine.py

docs: $(STAMP)  ## regenerate the README's schema and column tables
	$(BIN)/python -m ckptreport.docs README.md

clean:
	rm -rf out $(VENV) .pytest_cache .hypothesis
