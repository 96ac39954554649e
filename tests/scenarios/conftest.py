from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

from agentlens.demo.tiny_repo import DEMO_SCENARIO, create_repo
from agentlens.scenarios.scenario import Scenario
from tests.cli.conftest import run_cli  # noqa: F401  (the `run_cli` fixture)

SCRIPTED = Path(__file__).with_name("scripted_agent.py")
INSTRUCTION = "sub() in calc/ops.py adds instead of subtracting. Have the agent fix it and test it."


def alive(pid: int) -> bool:
    """Running (a zombie is not: in a container PID 1 may never reap the orphans it inherits)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def session_marker() -> str:
    """A file name the sandboxed agent can write (`../NAME`: its session folder, the only
    writable place besides its workspace) and that is unique on this machine, so the host
    processes whose command line names it are this test's agent."""
    return f"../agentlens-test-{uuid.uuid4().hex}.pid"


def found(out: Path, marker: str) -> Path | None:
    """Where the agent wrote `marker` under the run folder `out`, if it has."""
    return next(out.rglob(Path(marker).name), None) if out.exists() else None


def host_pids(marker: str) -> list[int]:
    """Live host processes whose command line names `marker` (the agent runs in a PID namespace:
    the pid it writes is not the host's)."""
    token = Path(marker).name.encode()
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and token in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            continue
    return [pid for pid in pids if alive(pid)]


def scripted(mode: str, *extra: str) -> str:
    """The `--agent` spec of the scripted agent CLI in `mode`."""
    tail = " ".join(extra)
    return f"cmd:{sys.executable} {SCRIPTED} {mode} {{message}} {{turn}} {tail}".rstrip()


@pytest.fixture
def calc_project(tmp_path: Path) -> Path:
    """The review demo's tiny real git project (a pytest suite and one bug)."""
    return create_repo(tmp_path / "calc")


@pytest.fixture
def calc_scenario() -> Scenario:
    return Scenario(
        "fix_sub",
        list(DEMO_SCENARIO["verifiers"]),
        max_steps=2,
        user_instruction=INSTRUCTION,
    )
