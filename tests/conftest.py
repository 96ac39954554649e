"""Shared fixtures. Tests read the real traces in ../shared/data in place; they never copy them in."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from agentlens.seams import Engine

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


@pytest.fixture
def memory_cgroup() -> None:
    """Skips, with the reason, on a host that lends AgentLens no memory cgroup: there a sandbox
    bounds each process only, which the per-process tests check."""
    from agentlens.verification import memory_group

    group = memory_group.make(16)
    group.remove()
    if group.path is None:
        pytest.skip(f"no memory cgroup can be made here: {group.why_not}")


pytest_plugins = ["tests.workers"]

# Real local model fixtures (`local_llm_url`, `local_gguf_path`) and the `--run-paid` option.
from tests.llm import (  # noqa: E402, F401
    isolated_llm_cache,
    local_gguf_path,
    local_llm_url,
    pytest_addoption,
    pytest_collection_modifyitems,
)


@pytest.fixture(scope="session")
def ray_session() -> Iterator[Any]:
    """One local Ray for the whole session, shared by the engine and scenario scale-out tests (it
    takes seconds to start). Without ray installed the Ray tests skip, except on CI (env CI set),
    where a missing ray is a failure."""
    try:
        import ray
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("ray is not installed (CI is set): pip install 'ray>=2.9'")
        pytest.skip("ray is not installed: pip install 'ray>=2.9' to run the Ray engine tests")
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="session")
def ray_engine(ray_session: Any) -> Iterator[Engine]:
    from agentlens.engine import get_engine

    with get_engine("ray") as engine:
        yield engine
