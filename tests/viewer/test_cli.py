"""`agentlens view`: the real server process, and the one-line errors before it starts."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import httpx
import pytest

from agentlens.cli import main
from tests.viewer.conftest import Built
from tests.viewer.server import running


def test_serves_until_ctrl_c_then_exits_130(built: Built) -> None:
    with running(built.path) as server:
        runs = httpx.get(server.url + "api/runs").json()["runs"]
        assert {r["id"] for r in runs} >= {built.import_run, built.score_run}
        code, printed, err = server.stop()
    assert code == 130
    assert "Traceback" not in err
    assert printed.startswith(f"AgentLens viewer on {server.url} ")


def test_port_in_use_is_one_line(built: Built, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["view", "--store", str(built.path), "--port", str(port)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"127.0.0.1:{port}" in err and "--port" in err
    assert len(err.splitlines()) == 1


def test_missing_store_file_is_refused_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nothing.db"
    assert main(["view", "--store", str(missing)]) == 2
    assert "agentlens store import" in capsys.readouterr().err
    assert not missing.exists()


def test_missing_starlette_names_the_extra(
    built: Built, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "starlette", None)
    assert main(["view", "--store", str(built.path), "--port", "0"]) == 2
    assert "pip install 'agentlens[viewer]'" in capsys.readouterr().err
