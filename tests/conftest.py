"""Shared fixtures. Tests read the real traces in ../shared/data in place; they never copy them in."""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

if TYPE_CHECKING:
    from agentlens.seams import Engine

DATA = Path(
    os.environ.get("AGENTLENS_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
BENCH = DATA / "agentlens-bench-dev"
FORMATS = DATA / "formats"


def missing(reason: str) -> NoReturn:
    """Skip a test whose extra, model or browser is missing here, except on CI (env CI set),
    which installs them all: there a missing one fails, so that no test passes by not running."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: this test must run)")
    pytest.skip(reason, allow_module_level=True)


def needed(module: str, hint: str = "") -> ModuleType:
    """`pytest.importorskip`, failing on CI as `missing` does."""
    try:
        return importlib.import_module(module)
    except ImportError:
        missing(f"{module} is not installed" + (f": {hint}" if hint else ""))


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
