# One entry point for every task. Each target sets up .venv first (Python >= 3.11).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Libraries the PDF briefs need (WeasyPrint: Pango, HarfBuzz subsetting; fonts), and programs the
# tests drive for real (LibreOffice recalculates the workbook, and python3-uno lets a test sort, filter,
# insert rows and type in Calc itself; poppler reads and renders the PDFs; headless Chromium and its
# driver load the review page, out/report.html, as a browser does).
RUNTIME_PACKAGES := libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core
TEST_PACKAGES    := $(RUNTIME_PACKAGES) libreoffice-calc-nogui python3-uno poppler-utils gnumeric \
                    chromium chromium-driver

.PHONY: build test bench docs golden runtime-deps system-deps clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

build: $(STAMP) runtime-deps  ## compute the shipped plan -> out/
	$(BIN)/ckptreport build

test: export CKPTREPORT_HOSTILE_LOG := $(CURDIR)/.pytest_cache/hostile.jsonl
test: $(STAMP) system-deps  ## run the whole test suite, on every core (pytest-xdist); counts the hostile cases
	$(BIN)/python -m pytest -n auto --dist worksteal

HAVE_RUNTIME := ldconfig -p | grep -q libpangoft2-1.0 && ldconfig -p | grep -q libharfbuzz-subset
HAVE_TESTING := $(HAVE_RUNTIME) && command -v soffice >/dev/null && command -v pdftoppm >/dev/null \
                && command -v ssconvert >/dev/null && command -v chromium >/dev/null \
                && command -v chromedriver >/dev/null \
                && test -f /usr/lib/python3/dist-packages/uno.py

runtime-deps:  ## Pango and fonts for the PDF briefs (Debian/Ubuntu; installs as root)
	@$(MAKE) --no-print-directory apt PACKAGES="$(RUNTIME_PACKAGES)" CHECK="$(HAVE_RUNTIME)"

system-deps:  ## everything the tests run for real: the above, LibreOffice, Gnumeric, poppler, Chromium
	@$(MAKE) --no-print-directory apt PACKAGES="$(TEST_PACKAGES)" CHECK="$(HAVE_TESTING)"

apt:
	@if sh -c '$(CHECK)'; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(PACKAGES); \
	else echo "note: install $(PACKAGES) with your package manager"; fi

bench: $(STAMP) system-deps  ## every benchmark, its figures written into the README's Speed section
	$(BIN)/python benchmarks/run_all.py README.md

docs: $(STAMP)  ## regenerate the README's schema and column tables
	$(BIN)/python -m ckptreport.docs README.md

golden: $(STAMP)  ## regenerate the golden HTML of the briefs (review the diff before committing)
	$(BIN)/python -m ckptreport.build --golden tests/golden/briefs

clean:
	rm -rf out $(VENV) .pytest_cache .hypothesis
