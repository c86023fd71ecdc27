# The README's two commands: `make run` and `make test`.
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
MAIL_PORT ?= 2525

.PHONY: run test lint format install install-dev fuzz bench chaos certify

# The first interpreter on PATH that is Python 3.12 or newer makes the virtualenv.
$(PY):
	@for candidate in python3.13 python3.12 python3 python; do \
		if command -v $$candidate >/dev/null 2>&1 && \
		   $$candidate -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then \
			echo "Creating $(VENV) with $$($$candidate --version)"; \
			$$candidate -m venv $(VENV) && exit 0; \
		fi; \
	done; \
	echo "error: Kindgi needs Python 3.12 or newer, and none was found on PATH" \
	     "(tried python3.13, python3.12, python3, python). Install one, or use pyenv with .python-version." >&2; \
	exit 1

$(VENV)/.installed: $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[testing]'
	@touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# `kindgi dev` migrates, loads the packs, makes the development admin, reviewer and API token,
# saves the URL and token for the `kindgi` CLI, and serves HTTP and WebSockets.
run: install
	$(VENV)/bin/kindgi dev --host $(HOST) --port $(PORT) --mail-port $(MAIL_PORT)

lint: install-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install-dev
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# The suite runs on SQLite, then again on PostgreSQL with the tests that need it. Where no
# PostgreSQL answers that second pass is left out with a message, except in CI (CI set to anything
# but 0 or false: tests/ci.py decides, for the suite too), where that is an error. The second pass
# leaves out what never touches the test database (the pack SDK, the engine's kernel, the docs,
# the bench harness, the Makefile, the CI guard, and `kindgi dev`, which serves a SQLite database
# of its own, as it does for the Python client's tests): those ran, the same, in the first.
#
# Each pass spreads its test files over TEST_PROCESSES processes (pytest-xdist, a test database
# each). The schema fuzz test runs on its own after them: schemathesis gives all its cases one
# test id, which xdist cannot hand out.
POSTGRES_URL ?= postgresql://postgres@127.0.0.1:5432/test
TEST_PROCESSES ?= 2
NOT_DATABASE_TESTS := tests/kindgi tests/runs/engine tests/test_docs.py tests/test_bench.py \
	tests/test_makefile.py tests/test_ci.py tests/cli/test_dev.py tests/cli/test_init.py \
	tests/test_settings_reference.py tests/client
# The console in Chromium runs in the first pass only: what a page shows and does is the same on
# either database, whose own behaviour (locks, the queue, concurrent decisions) the second pass
# certifies with the rest.
FIRST_PASS_ONLY := tests/browser
FUZZ_TESTS := tests/api/test_fuzz.py
# The queues' certification suite runs on its own, once per task backend (`make certify`).
CERTIFY_TESTS := tests/certify
CERTIFY ?= db rq celery
PARALLEL := --numprocesses $(TEST_PROCESSES) --dist loadfile --ignore=$(FUZZ_TESTS) --ignore=$(CERTIFY_TESTS)

test: lint
	$(VENV)/bin/pytest -m "not postgres" $(PARALLEL)
	$(VENV)/bin/pytest -m "not postgres" $(FUZZ_TESTS)
	@if DATABASE_URL=$(POSTGRES_URL) $(PY) bin/postgres-reachable; then \
		DATABASE_URL=$(POSTGRES_URL) $(VENV)/bin/pytest $(PARALLEL) \
			$(addprefix --ignore=,$(NOT_DATABASE_TESTS) $(FIRST_PASS_ONLY)) && \
		DATABASE_URL=$(POSTGRES_URL) $(VENV)/bin/pytest $(FUZZ_TESTS) && \
		$(MAKE) --no-print-directory certify; \
	elif $(PY) -m tests.ci; then \
		echo "error: the PostgreSQL tests must run in CI, and $(POSTGRES_URL) does not answer" >&2; exit 1; \
	else \
		echo "PostgreSQL does not answer at $(POSTGRES_URL): its tests were not run (CI runs them)"; \
	fi

# Each task backend (django-tasks-db, RQ, Celery) through the same suite, with real workers on
# PostgreSQL and Redis: one backend a pass (KINDGI_CERTIFY), so that each is certified by itself.
certify: install-dev
	@for backend in $(CERTIFY); do \
		echo "Certifying the $$backend queue"; \
		KINDGI_CERTIFY=$$backend DATABASE_URL=$(POSTGRES_URL) $(VENV)/bin/pytest $(CERTIFY_TESTS) || exit 1; \
	done

# The API fuzzed against its schema and the bad-input properties, 25 times longer than in `make test`.
fuzz: install-dev
	KINDGI_FUZZ_SCALE=25 $(VENV)/bin/pytest tests/api/test_fuzz.py tests/properties

# The benchmarks (never part of `make test`): every workload, the peers beside them, a table,
# and bench/results/<date>.json. PostgreSQL and Redis parts run when those answer.
$(VENV)/.installed-bench: $(VENV)/.installed-dev
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	@touch $@

bench: $(VENV)/.installed-bench
	$(PY) -m bench

# Faults on purpose (never part of `make test`): 200 gated runs on a PostgreSQL cluster and a Redis
# server of its own, 2 web processes and 2 workers, while it kills and restarts them; a table of
# what happened, and bench/results/chaos-<date>.json. Loopback only.
chaos: $(VENV)/.installed-dev
	$(PY) -m bench.chaos
