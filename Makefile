# One entry point for every task. Each target sets up .venv first (Python >= 3.11).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Programs the tests drive for real: LibreOffice recalculates the workbook, poppler renders pages.
SYSTEM_PACKAGES := libreoffice-calc-nogui poppler-utils fonts-dejavu-core

.PHONY: build test bench docs system-deps clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

build: $(STAMP)  ## compute the shipped plan -> out/
	$(BIN)/ckptreport build

test: $(STAMP) system-deps  ## run the whole test suite
	$(BIN)/python -m pytest

system-deps:  ## LibreOffice and poppler for the tests (Debian/Ubuntu; needs root)
	@if command -v soffice >/dev/null && command -v pdftoppm >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(SYSTEM_PACKAGES); \
	else echo "note: install $(SYSTEM_PACKAGES) for the workbook tests (they are skipped without them)"; fi

bench: $(STAMP)  ## speed and memory benchmarks (figures, not pass/fail)
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_workbook.py

docs: $(STAMP)  ## regenerate the README's schema and column tables
	$(BIN)/python -m ckptreport.docs README.md

clean:
	rm -rf out $(VENV) .pytest_cache .hypothesis
