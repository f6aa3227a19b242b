# Everyday commands. `make run` and `make test` need only Python 3.11+, make and git.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
# The sandbox's own port (COMPLIANCE_SANDBOX_PORT, 0 = none): PORT + 1 unless set.
SANDBOX_PORT ?= $(or $(COMPLIANCE_SANDBOX_PORT),$(shell expr $(PORT) + 1))
# $(call port_free,PORT,NAME): stop with a message naming NAME unless HOST:PORT can be listened on.
port_free = $(BIN)/python -c "import socket; socket.create_server(('$(HOST)', $(1)), family=socket.AF_INET6 if ':' in '$(HOST)' else socket.AF_INET).close()" 2>/dev/null || \
	{ echo "error: $(HOST):$(1) ($(2)) is already in use (an earlier make run?): stop it or pick another $(2)=, then run make run again" >&2; exit 1; }

.PHONY: install run test test-pg lint format typecheck contract clients docs bench messages clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# `make run PORT=8010 HOST=0.0.0.0` serves elsewhere (the sandbox on PORT + 1, or SANDBOX_PORT=); the printed links
# follow.
run: install docs
	@$(call port_free,$(PORT),PORT)
	@$(call port_free,$(SANDBOX_PORT),SANDBOX_PORT)
	$(BIN)/compliance-api migrate
	COMPLIANCE_SANDBOX_PORT='$(SANDBOX_PORT)' $(BIN)/compliance-api demo --host '$(HOST)' --port '$(PORT)'
	COMPLIANCE_SANDBOX_PORT='$(SANDBOX_PORT)' $(BIN)/compliance-api serve --host '$(HOST)' --port '$(PORT)'

test: install
	$(BIN)/pytest -n auto

test-pg: install
	DATABASE_URL=postgresql://postgres@127.0.0.1:5432/test REDIS_URL=redis://127.0.0.1:6379/15 $(BIN)/pytest -n auto

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

# Python and TypeScript clients from the newest frozen contract, into var/clients/ (docs/integrate/clients.md).
clients: install
	bash clients/generate.sh

# The guide (docs/, mkdocs.yml), built strictly into compliance_api/guide_site; the service serves it at /guide/.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The dashboard's texts: extract the message ids from its templates and pages, then add the new ones to (and drop the
# old ones from) the Dutch, French and German catalogues; translate the empty entries and commit them.
messages: install
	mkdir -p var
	$(BIN)/pybabel --quiet extract -F babel.cfg --no-location --omit-header -o var/messages.pot .
	$(BIN)/pybabel --quiet update -i var/messages.pot -d compliance_api/dashboard/locales --no-fuzzy-matching --ignore-obsolete --width 120 --ignore-pot-creation-date

bench: install
	command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk)
	$(BIN)/python bench/health_ratio.py
	$(BIN)/python bench/classify_ratio.py

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache compliance_api/guide_site clients/typescript/node_modules clients/typescript/dist
