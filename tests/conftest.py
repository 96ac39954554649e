"""Shared fixtures. Tests read the real traces in ../shared/data in place; they never copy them in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DATA = Path(
    os.environ.get("AGENTLENS_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
BENCH = DATA / "agentlens-bench-dev"
FORMATS = DATA / "formats"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA.is_dir():
        pytest.fail(f"shared data not found at {DATA}; set AGENTLENS_DATA")
    return DATA


# Real local model fixtures (`local_llm_url`, `local_gguf_path`) and the `--run-paid` option.
from tests.llm import (  # noqa: E402, F401
    isolated_llm_cache,
    local_gguf_path,
    local_llm_url,
    pytest_addoption,
    pytest_collection_modifyitems,
)
