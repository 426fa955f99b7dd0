# The two commands of README's Quick start. Each sets up what it needs in .venv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: examples test setup lint vscode release

EXTRAS ?= dev,torch

# pip's own output (with -q still the build backend's warnings, and on some machines a line per package for an
# index location it skips: ~190 lines before `make examples` printed a finding) goes to $(VENV)/pip.log; only a
# failure shows its end.
$(BIN)/cudalens: pyproject.toml setup.py
	$(PY) -m venv $(VENV)
	@echo "installing cudalens[$(EXTRAS)] into $(VENV) (pip's output: $(VENV)/pip.log)"
	@{ $(BIN)/python -m pip install -q --upgrade pip && $(BIN)/python -m pip install -q -e '.[$(EXTRAS)]'; } \
		>$(VENV)/pip.log 2>&1 || { tail -n 25 $(VENV)/pip.log; echo "pip failed: all of it is in $(VENV)/pip.log"; exit 1; }
	touch $@

setup: $(BIN)/cudalens

# Findings are the point here, so exit status 1 ("findings") is success for this target.
examples: setup
	$(BIN)/cudalens check examples/ || [ $$? -eq 1 ]

lint: setup
	$(BIN)/ruff check .

test: setup lint vscode
	$(BIN)/python -m pytest

# The VS Code extension: lint, type-check and package it into vscode-client/dist/cudalens.vsix, which the tests
# under tests/vscode install into a real VS Code. Rebuilt only when its sources change; skipped without npm.
EXT := vscode-client
EXT_SOURCES := $(wildcard $(EXT)/src/*.ts $(EXT)/test/*.ts $(EXT)/e2e/*.ts) $(EXT)/package.json \
	$(EXT)/tsconfig.json $(EXT)/tsconfig.test.json $(EXT)/esbuild.mjs $(EXT)/eslint.config.mjs $(EXT)/README.md

$(EXT)/node_modules/.installed: $(EXT)/package.json $(EXT)/package-lock.json
	cd $(EXT) && npm ci --no-audit --no-fund
	touch $@

$(EXT)/dist/cudalens.vsix: $(EXT)/node_modules/.installed $(EXT_SOURCES)
	cd $(EXT) && npm run -s lint && npm run -s typecheck && npm run -s package

vscode:
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory $(EXT)/dist/cudalens.vsix; \
	else echo "npm not found: the VS Code extension is not built and its tests will skip"; fi

# A release: the tag `v<version>` (pyproject.toml's) on the commit checked out, which README's pre-commit snippet
# names as its `rev`. Refuses a tree with uncommitted changes, and a tag that exists on another commit.
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
release:
	@git diff --quiet HEAD || { echo "release: commit your changes first"; exit 1; }
	@if git rev-parse -q --verify "refs/tags/v$(VERSION)" >/dev/null; then \
		test "$$(git rev-parse "v$(VERSION)^{commit}")" = "$$(git rev-parse HEAD)" \
			|| { echo "release: v$(VERSION) already tags another commit: raise the version"; exit 1; }; \
	else git tag -a "v$(VERSION)" -m "cudalens $(VERSION)"; fi
	@echo "tagged v$(VERSION)"
