# The README's two commands: `make run` and `make test`.
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test lint format install install-dev

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
	$(PY) -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

run: install
	$(PY) manage.py migrate --no-input
	$(PY) manage.py load_packs
	$(PY) manage.py create_dev_admin
	@echo "Kindgi is serving on http://$(HOST):$(PORT)/ (admin at http://$(HOST):$(PORT)/admin/)"
	$(VENV)/bin/daphne -b $(HOST) -p $(PORT) kindgi_site.asgi:application

lint: install-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install-dev
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

test: lint
	$(VENV)/bin/pytest
