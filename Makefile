# The two commands of README's Quick start. Each sets up what it needs in .venv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: examples test setup lint

$(BIN)/cudalens: pyproject.toml setup.py
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,torch]'
	touch $@

setup: $(BIN)/cudalens

# Findings are the point here, so exit status 1 ("findings") is success for this target.
examples: setup
	$(BIN)/cudalens check examples/ || [ $$? -eq 1 ]

lint: setup
	$(BIN)/ruff check .

test: setup lint
	$(BIN)/python -m pytest
