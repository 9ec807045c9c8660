# Two entry points, both from a fresh clone with only Python 3.11, pip, git and make:
#   make demo   run the main job
#   make test   ruff + mypy --strict + the whole pytest suite
# and, apart from both: make mutation (mutation scores of the gates, the signal parser and plan inference)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint typecheck pytest bench mutation clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -c constraints.txt -e '.[dev,web]'
	touch $(STAMP)

# --web: the demo prints the dashboard's address; in a terminal it keeps serving after the run until Ctrl-C.
demo: $(STAMP)
	$(BIN)/pm-agent demo --web

lint: $(STAMP)
	$(BIN)/ruff check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy --strict src

# Two workers: the real-CLI tests mostly wait on agent processes, so the suite runs in about half the time.
# --durations: the 30 slowest tests, to keep `make test` within its 20 minutes as the suite grows.
pytest: $(STAMP)
	sh tests/web/install_chromium.sh
	sh tests/preflight/install_go.sh
	$(BIN)/pytest -n 2 --dist loadfile --durations=30

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

# mutmut ([tool.mutmut] in pyproject.toml) on gates/, the signal parser, plan/deps.py and plan/tier_rules.py with
# the fast tests of tests/gates, tests/signals and tests/plan; prints each module's score and the mutants no test
# detects. Equivalent mutants (no test can tell them from the source) are listed with their reason in
# bench/mutation_equivalent.txt, which the target prints. Cached in mutants/ (git-ignored): a first run (7,275
# mutants) takes two to three hours on 2 shared cores; later ones test only changed functions and the survivors.
# MUTATION_ARGS=--fresh forgets the cache.
mutation: $(STAMP)
	$(BIN)/python bench/mutation.py $(MUTATION_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache mutants
