"""`agentlens run` says "stopped: N of M pairs finished…" for Ctrl-C or a stop signal only: a
stray `sys.exit` from code it runs is no stop and gets no resume line."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from agentlens.cli import run_cmd
from agentlens.scenarios import Fold, RunSettings
from agentlens.stop_signals import StopSignalExit


def _raising(exc: BaseException) -> Any:
    def run(work: Any) -> None:
        work.close()  # the fold's coroutine, never started
        raise exc

    return run


def _run(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    """Failure injection: the fold's run ends with `exc`."""
    monkeypatch.setattr(run_cmd, "run_stoppable", _raising(exc))
    monkeypatch.setattr(run_cmd, "run_fold", lambda *a, **k: _coroutine())
    fold = cast(Fold, SimpleNamespace(scenarios=[1], personas=[1, 2]))
    run_cmd._run_with_progress(fold, cast(RunSettings, None), "OUT")


async def _coroutine() -> None:
    return None


def test_a_stray_sys_exit_is_not_taken_for_a_stop(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended:
        _run(monkeypatch, SystemExit(3))
    assert ended.value.code == 3 and type(ended.value) is SystemExit
    assert "stopped:" not in capsys.readouterr().err


def test_a_stop_signal_says_what_was_kept(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(BaseException) as ended:
        _run(monkeypatch, StopSignalExit(15))
    assert getattr(ended.value, "code", None) == 143, ended.value
    assert "stopped: 0 of 2 pairs finished and kept in OUT" in capsys.readouterr().err
