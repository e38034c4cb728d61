# Two commands: `make run` (demo on a bundled real transcript) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.ctxkit-installed
DEMO_HOME := .ctx-demo
DEMO := examples/claude-code_spotter_491e126e_session.jsonl

.PHONY: setup run test bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -c constraints.txt -e '.[test]'
	@touch $(STAMP)

run: setup
	@mkdir -p $(DEMO_HOME)
	@echo "== ctx import $(DEMO)"
	CTX_HOME=$(DEMO_HOME) $(BIN)/ctx import $(DEMO) > $(DEMO_HOME)/session.jsonl
	@echo "== ctx count (o200k_base, as for gpt-4o)"
	CTX_HOME=$(DEMO_HOME) $(BIN)/ctx count $(DEMO_HOME)/session.jsonl --model gpt-4o
	@echo "== ctx truncate --budget 8000 --strategy middle_out | ctx count"
	CTX_HOME=$(DEMO_HOME) $(BIN)/ctx truncate $(DEMO_HOME)/session.jsonl --budget 8000 --strategy middle_out | CTX_HOME=$(DEMO_HOME) $(BIN)/ctx count
	@echo "== ctx status --budget 100000 --log"
	CTX_HOME=$(DEMO_HOME) $(BIN)/ctx status $(DEMO_HOME)/session.jsonl --budget 100000 --log -t

test: setup
	$(BIN)/python -m pytest

bench: setup
	$(BIN)/python -m pip install -q ttok
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) $(DEMO_HOME) .pytest_cache
