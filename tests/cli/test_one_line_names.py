"""A newline in a file name or in a trace's id, task or model is text, not a line break: the
line that names it stays one line, so a hostile name cannot forge a `failed:` line or a
trajectory of its own in what the user reads."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests import whole_process

COPILOT = "formats/copilot-cli/events.jsonl"
FORGED = "\nfailed: other.jsonl [copilot-cli]: forged"


def agentlens(*args: str) -> subprocess.CompletedProcess[str]:
    return whole_process.agentlens(*args, env={"COLUMNS": "119"})  # the narrow view, unwrapped


def test_a_file_name_with_a_newline_is_one_failure_line(data_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / f"run{FORGED}.jsonl"
    events = (data_dir / COPILOT).read_bytes()
    broken.write_bytes(events[:-200] + b"\n" + events[-200:])  # a line cut mid-file: a failure
    shown = agentlens("inspect", str(broken))
    assert shown.returncode == 1
    failed = [line for line in shown.stderr.splitlines() if line.startswith("failed:")]
    assert len(failed) == 1
    assert failed[0].startswith(f"failed: {tmp_path}/run␊failed: other.jsonl [copilot-cli]: forged")


def test_an_id_task_or_model_with_a_newline_stays_on_its_line(
    data_dir: Path, tmp_path: Path
) -> None:
    events = [json.loads(line) for line in (data_dir / COPILOT).read_text().splitlines()]
    for event in events:
        if event["type"] == "session.start":
            event["data"]["sessionId"] += FORGED
        if event["type"] == "session.model_change":
            event["data"]["newModel"] += FORGED
    session = tmp_path / "events.jsonl"
    session.write_text("".join(json.dumps(event) + "\n" for event in events))
    shown = agentlens("inspect", str(session))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert len(lines) == 5  # "1 trajectory", then the run's four lines
    assert lines[1].startswith("96ef38f0-9d09-45c3-8124-6448c36090ed␊failed: other.jsonl")
    assert not any(line.startswith("failed:") for line in lines)
