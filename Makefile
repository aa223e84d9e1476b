# The two commands a fresh clone needs: `make demo` and `make test`.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# make demo PORT=8010: where the demo serves; it stops before changing anything if the port is taken.
PORT ?= 8000
export PYTHONPATH := $(CURDIR)
# A machine whose environment says PYTHONDONTWRITEBYTECODE=1 (container images often do) would
# have every Python the build starts compile all it imports again: seconds a process, and the
# suite starts hundreds (servers, workers, agents, the demo's runs; the demo 17 s -> 11 s of
# processor). The project's venv and checkout keep their bytecode (__pycache__ is ignored).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test test-fast docs docs-build dist venv chromium pgbouncer lint migrations-check test-sqlite test-postgres matrix bench cluster clean

# uv installs what pip would (the same releases from PyPI) in seconds instead of minutes: pip
# brings uv into the venv, uv the rest (the dev group keeps uv there for nox and make bench).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet "uv>=0.9"
	$(BIN)/uv pip install --quiet --python $(BIN)/python -e ".[api,postgres]" --group dev
	touch $(STAMP)

venv: $(STAMP)

demo: venv
	$(BIN)/python manage.py chronica_demo --serve --addrport 127.0.0.1:$(PORT)

# Everything, every leg at once (scripts/ci.py: its own log and time each): the checks
# (lint, migrations, the docs site), the suite on SQLite and PostgreSQL on the venv's
# Python 3.11 + Django 5.2, and again on Python 3.13 + Django 6.1 (nox, pyenv).
test: venv chromium pgbouncer
	$(BIN)/python scripts/ci.py

# The inner loop: the suite on SQLite without the slow and once-per-build tests and
# without the ones that start servers and commands in processes of their own.
test-fast: venv
	PYTHONWARNINGS=error::DeprecationWarning CHRONICA_TEST_DB=sqlite $(BIN)/python -m pytest -q \
		-m "not slow and not once" --ignore=tests/example --ignore=tests/commands -p no:cacheprovider

# The documentation site (mkdocs.yml, docs/): `make docs` serves it at http://127.0.0.1:$(DOCS_PORT)
# and rebuilds on every change; `make test` builds it with --strict (a broken link fails) and runs
# its Python snippets (tests/project/test_docs.py).
DOCS_PORT ?= 8001
export NO_MKDOCS_2_WARNING := 1
docs: venv
	$(BIN)/mkdocs serve --dev-addr 127.0.0.1:$(DOCS_PORT)

docs-build: venv
	$(BIN)/mkdocs build --strict --site-dir $(VENV)/docs-site

# dist/chronica-<version>.tar.gz and the wheel built from it (README: "Install into your project").
dist: venv
	rm -rf dist
	$(BIN)/python -m build --outdir dist .

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

migrations-check: venv
	DJANGO_SETTINGS_MODULE=tests.settings $(BIN)/django-admin makemigrations --check --dry-run

# The browser tests drive Debian's Chromium; say so before apt-get runs.
chromium:
	@echo "Browser tests: Debian's chromium and chromium-driver; scripts/ensure-chromium.sh"
	@echo "  installs them with apt-get if missing (CHRONICA_NO_APT=1: never; the tests then skip)."
	@bash scripts/ensure-chromium.sh

# The pooler tests (tests/stores/test_pgbouncer.py) start Debian's PgBouncer.
pgbouncer:
	@echo "Pooler tests: Debian's pgbouncer; scripts/ensure-pgbouncer.sh"
	@echo "  installs it with apt-get if missing (CHRONICA_NO_APT=1: never; the tests then skip)."
	@bash scripts/ensure-pgbouncer.sh

# Deprecation warnings are errors, as in the matrix: make test is its Python 3.11 + Django 5.2 pair.
test-sqlite: venv chromium
	PYTHONWARNINGS=error::DeprecationWarning CHRONICA_TEST_DB=sqlite $(BIN)/python -m pytest

test-postgres: venv chromium pgbouncer
	@if [ "$$CHRONICA_SKIP_POSTGRES" = "1" ]; then \
		echo "SKIPPED: the PostgreSQL run (CHRONICA_SKIP_POSTGRES=1 was set on purpose)"; \
	else \
		PYTHONWARNINGS=error::DeprecationWarning CHRONICA_TEST_DB=postgres $(BIN)/python -m pytest; \
	fi

# Python 3.13 + Django 6.1 (under pyenv) alone; make test runs it beside Python 3.11 + Django 5.2.
matrix: venv
	$(BIN)/nox

# A PostgreSQL primary and a streaming replica of our own (free ports, a temporary
# directory; Enter stops both). The PostgreSQL run of make test starts its own
# (tests/stores/test_clusters.py), skipped with the reason where the binaries are missing.
cluster:
	bash scripts/pg-cluster.sh try

bench: venv
	$(BIN)/uv pip install --quiet --python $(BIN)/python --group bench
	$(BIN)/python -m benchmarks

clean:
	rm -rf site $(VENV) .nox .test-db .ci-logs .pytest_cache .mypy_cache .ruff_cache *.egg-info
