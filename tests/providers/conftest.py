from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.providers.fault_server import FaultServer


@pytest.fixture(autouse=True)
def isolated_llm_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user config, price file or shared cache leaks into a test."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("AGENTLENS_LLM_CACHE", str(tmp_path / "cache.sqlite"))
    for name in ("AGENTLENS_CONFIG", "AGENTLENS_NO_CACHE", "AGENTLENS_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def fault_server() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server
