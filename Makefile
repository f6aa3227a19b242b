# Everyday commands. `make run` and `make test` need only Python 3.11+, make and git.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test test-pg lint format typecheck contract docs bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: install docs
	@$(BIN)/python -c "import socket; socket.create_server(('127.0.0.1', 8000)).close()" 2>/dev/null || \
		{ echo "error: 127.0.0.1:8000 is already in use (an earlier make run?): stop it, then run make run again" >&2; exit 1; }
	$(BIN)/compliance-api migrate
	$(BIN)/compliance-api demo
	$(BIN)/compliance-api serve

test: install
	$(BIN)/pytest

test-pg: install
	DATABASE_URL=postgresql://postgres@127.0.0.1:5432/test REDIS_URL=redis://127.0.0.1:6379/15 $(BIN)/pytest

lint: install
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: install
	$(BIN)/mypy

contract: install
	$(BIN)/compliance-api openapi --write

# The guide (docs/, mkdocs.yml), built strictly into compliance_api/guide_site; the service serves it at /guide/.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

bench: install
	command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk)
	$(BIN)/python bench/health_ratio.py
	$(BIN)/python bench/classify_ratio.py

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache compliance_api/guide_site
