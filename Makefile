# LegacyMind: `make run` serves the app, `make test` runs the whole suite. Both set up everything.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
HOST ?= 127.0.0.1
PORT ?= 8000
# Local convenience defaults; production sets these in its environment (see .env.example).
RUN_ENV := DJANGO_DEBUG=$${DJANGO_DEBUG:-1}
TEST_ENV := DJANGO_SECRET_KEY=$${DJANGO_SECRET_KEY:-test-only-secret} AGENT_STATE_SECRET=$${AGENT_STATE_SECRET:-test-only-agent-secret}

.PHONY: help install system-deps setup port-free run test lint typecheck pytest bench screenshots db-stop clean

help:
	@echo "make run      - install, start the embedded Postgres, migrate, seed demo data, serve :$(PORT)"
	@echo "make test     - install, then ruff, mypy and the whole pytest suite"
	@echo "make bench    - run the benchmarks in bench/"
	@echo "make screenshots - regenerate docs/screenshots/*.png (every page, desktop and phone; key pages dark too)"
	@echo "make db-stop  - stop the embedded Postgres (also one left behind by a killed process)"

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# torch first, pinned to the CPU build: unpinned, sentence-transformers pulls a multi-GB CUDA build.
$(VENV)/.installed: pyproject.toml | $(BIN)/activate
	$(BIN)/pip install --quiet "torch==2.13.0"
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

install: $(VENV)/.installed

# Browser tests need Debian's chromium, and the worker test a redis-server binary when no Redis
# listens on 127.0.0.1:6379. Installed when missing and we may (root); otherwise those tests say
# what is missing.
system-deps:
	@missing=""; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v redis-server >/dev/null || missing="$$missing redis-server"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing$$missing"; \
	    (apt-get install -y -qq $$missing >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq $$missing)) ; \
	  else echo "note: missing$$missing (browser/worker tests need them)"; fi; \
	fi

setup: install
	$(RUN_ENV) $(PY) manage.py migrate --noinput
	$(RUN_ENV) $(PY) manage.py createcachetable
	$(RUN_ENV) $(PY) manage.py collectstatic --noinput --verbosity 0

# Checked first: a busy port otherwise failed only after the install, the migrations and the
# model load, with runserver's bare "That port is already in use".
port-free:
	@$(PYTHON) -c "import socket, sys; sys.exit(socket.socket().connect_ex(('$(HOST)', $(PORT))) == 0)" \
	  || { echo "Port $(PORT) on $(HOST) is in use: stop what listens there, or run make run PORT=8001"; exit 1; }

run: port-free setup
	$(RUN_ENV) $(PY) manage.py seed_demo
	PORT=$(PORT) $(RUN_ENV) $(PY) manage.py ensure_superuser
	$(RUN_ENV) $(PY) manage.py runserver $(HOST):$(PORT)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(TEST_ENV) $(BIN)/lint-imports

typecheck: install
	$(TEST_ENV) EMBEDDING_PROVIDER=hash $(BIN)/mypy .

pytest: install system-deps
	$(TEST_ENV) $(BIN)/pytest $(PYTEST_ARGS)

test: install system-deps setup lint typecheck pytest

# retrieval and reembed work in their own database (bench_legacymind), never the dev data.
bench: install
	$(TEST_ENV) $(PY) bench/retrieval.py
	$(TEST_ENV) $(PY) bench/reembed.py
	$(TEST_ENV) $(PY) bench/local_embed.py
	$(TEST_ENV) $(PY) bench/web_local.py
	$(TEST_ENV) $(PY) bench/kg_extract.py
	$(TEST_ENV) EMBEDDING_PROVIDER=local $(PY) bench/crux.py
	$(TEST_ENV) $(PY) bench/distress.py

# A live server on a test database with the demo data; chromium saves each page.
screenshots: install system-deps
	$(TEST_ENV) $(BIN)/pytest tests/e2e/screenshots.py -q

db-stop:
	@if [ -x $(PY) ]; then $(PY) -m legacymind.db.embedded stop var/pgdata; \
	else echo "No $(VENV) here: no embedded Postgres was started from this checkout."; fi

clean: db-stop
	rm -rf $(VENV) var
