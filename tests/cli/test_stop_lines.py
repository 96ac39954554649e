"""How a command that did not finish says so: one line a user reads, and the exit code a shell
or CI reads (130 Ctrl-C, 143 SIGTERM, 1 a question answered no). click made every Ctrl-C an
`Abort`, after a blank line, and `aborted` followed a command's own stop line; a "no" exited
130 as if interrupted. Whole processes, real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from agentlens.providers.cache import ResponseCache
from tests.conftest import BENCH
from tests.process_group import finish_in_group
from tests.whole_process import agentlens, started


def _cache_env(tmp_path: Path) -> dict[str, str]:
    """A cache of its own (`cache clear` asks before it empties one), never the user's."""
    ResponseCache(tmp_path / "cache.sqlite").close()
    return {"AGENTLENS_LLM_CACHE": str(tmp_path / "cache.sqlite")}


def test_no_to_the_question_is_aborted_not_interrupted(tmp_path: Path) -> None:
    done = agentlens("cache", "clear", env=_cache_env(tmp_path), input="n\n")
    assert (done.returncode, done.stderr) == (1, "aborted\n"), done.stderr


def test_ctrl_c_at_the_question_is_one_interrupted_line(tmp_path: Path) -> None:
    proc = started("cache", "clear", env=_cache_env(tmp_path))
    asked = f"Delete all cached responses in {tmp_path / 'cache.sqlite'}? [y/N]: "

    def waits_for_the_answer() -> None:
        assert proc.stdout is not None
        assert proc.stdout.read(len(asked)) == asked

    assert _ctrl_c(proc, waits_for_the_answer, timeout=30) == (130, "interrupted\n")


def test_ctrl_c_in_a_command_is_one_interrupted_line(tmp_path: Path) -> None:
    """click printed a blank line, then `aborted`."""
    proc = started("cohort", str(BENCH / "trajectories"), "--json", env={"TMPDIR": str(tmp_path)})
    reading = partial(_wait_for_spill_folder, tmp_path, proc)
    assert _ctrl_c(proc, reading, timeout=60) == (130, "interrupted\n")
    assert not any(tmp_path.glob("agentlens-spill-*"))


def _ctrl_c(
    proc: subprocess.Popen[str], ready: Callable[[], None], timeout: float
) -> tuple[int | None, str]:
    """Ctrl-C to the command's process group once `ready` returns; its exit code and stderr.
    Nothing it started outlives the test, whether `ready` fails or it ignores the signal."""
    try:
        ready()
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    os.killpg(proc.pid, signal.SIGINT)
    _, err, _ = finish_in_group(proc, timeout)
    return proc.returncode, err


def _wait_for_spill_folder(tmp: Path, proc: subprocess.Popen[str]) -> None:
    """The batch read makes its spill folder in TMPDIR once it has started reading runs."""
    deadline = time.monotonic() + 60
    while not any(tmp.glob("agentlens-spill-*")):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no spill folder in 60 s"
        time.sleep(0.05)
