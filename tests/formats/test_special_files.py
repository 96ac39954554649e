"""Files that are not regular files, met by a glob or a walk: a FIFO (opening it waits for a
writer for ever), a link to nothing, a link loop. None of them may hang the batch, and none is
dropped unsaid: each is named, with its reason, among the skipped files (`--debug`)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.whole_process import agentlens

GEMINI = "formats/gemini-cli/session-2025-10-27T19-55-981c87cb.json"


def _folder(data_dir: Path, tmp_path: Path) -> Path:
    (tmp_path / "session.json").write_bytes((data_dir / GEMINI).read_bytes())
    return tmp_path


def test_a_globbed_fifo_named_like_a_sidecar_does_not_hang(data_dir: Path, tmp_path: Path) -> None:
    folder = _folder(data_dir, tmp_path)
    os.mkfifo(folder / "results.json")  # a sidecar's name: its head was opened to look inside
    shown = agentlens("--debug", "inspect", "--json", str(folder / "*.json"))
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 1
    assert f"skipped: {folder / 'results.json'}: " in shown.stderr


def test_a_walk_names_each_file_it_cannot_read_as_a_trace(data_dir: Path, tmp_path: Path) -> None:
    folder = _folder(data_dir, tmp_path)
    os.mkfifo(folder / "pipe.jsonl")
    (folder / "gone.jsonl").symlink_to(folder / "moved-away.jsonl")
    (folder / "loop.jsonl").symlink_to(folder / "loop.jsonl")
    shown = agentlens("--debug", "inspect", "--json", str(folder))
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 1
    skipped = {line for line in shown.stderr.splitlines() if line.startswith("skipped")}
    assert skipped == {
        f"skipped: {folder / 'pipe.jsonl'}: cannot read a FIFO: only regular files are traces",
        f"skipped: {folder / 'gone.jsonl'}: cannot read: No such file or directory",
        f"skipped: {folder / 'loop.jsonl'}: cannot read: Too many levels of symbolic links",
        "skipped 3 non-trace files",
    }


def test_named_they_are_failures_still(data_dir: Path, tmp_path: Path) -> None:
    folder = _folder(data_dir, tmp_path)
    os.mkfifo(folder / "pipe.jsonl")
    (folder / "gone.jsonl").symlink_to(folder / "moved-away.jsonl")
    shown = agentlens("inspect", "--json", *(str(folder / n) for n in ("pipe.jsonl", "gone.jsonl")))
    assert shown.returncode == 1
    assert shown.stderr.count("failed: ") == 2 and "Traceback" not in shown.stderr


def test_a_walk_names_a_linked_folder_it_does_not_follow(data_dir: Path, tmp_path: Path) -> None:
    """A link to a folder is not walked (`runs/latest -> runs/2026-…` would read every run
    twice); it is named among the skipped files, and naming it reads it."""
    folder = _folder(data_dir, tmp_path)
    (folder / "copilot").symlink_to(data_dir / "formats/copilot-cli")
    shown = agentlens("--debug", "inspect", "--json", str(folder))
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 1
    note = f"skipped: {folder / 'copilot'}: a link to a folder, not followed: name it to read it"
    assert note in shown.stderr.splitlines()
    named = agentlens("inspect", "--json", str(folder / "copilot"))
    assert named.returncode == 0 and len(named.stdout.splitlines()) == 1


CLAUDE = "formats/claude-code/marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
OPENHANDS = "formats/openhands/sdk-fixtures"


def _session_with_subagent(data_dir: Path, tmp_path: Path, make: str) -> Path:
    tmp_path.mkdir()
    session = tmp_path / "session.jsonl"
    session.write_bytes((data_dir / CLAUDE).read_bytes())
    folder = tmp_path / "session" / "subagents"
    folder.mkdir(parents=True)
    if make == "fifo":
        os.mkfifo(folder / "agent-pipe.jsonl")
    elif make == "device":
        (folder / "agent-zero.jsonl").symlink_to("/dev/zero")
    else:  # a sparse file over the input cap
        with open(folder / "agent-huge.jsonl", "wb") as huge:
            huge.truncate(64 << 20)
    return session


def test_a_subagent_file_that_is_a_fifo_a_device_or_over_the_cap_costs_only_itself(
    data_dir: Path, tmp_path: Path
) -> None:
    """A sub-agent file beside a Claude Code session was read whole, unchecked: a FIFO hung
    `inspect` for ever, a link to /dev/zero read until memory ran out (`internal error
    (MemoryError)`), a huge file ignored the input cap. Each is now that sub-agent's warning."""
    for make in ("fifo", "device", "huge"):
        session = _session_with_subagent(data_dir, tmp_path / make, make)
        shown = agentlens("--max-file-size", "32M", "inspect", "--json", str(session))
        assert shown.returncode == 0, (make, shown.stderr)
        assert len(shown.stdout.splitlines()) == 1, make
        assert "sub-agent file skipped" in shown.stderr, (make, shown.stderr)


def test_a_sidecar_state_that_is_a_fifo_is_not_waited_for(data_dir: Path, tmp_path: Path) -> None:
    """OpenHands' `base_state.json` beside the events was opened whatever it was."""
    events = sorted((data_dir / OPENHANDS).glob("*events*.jsonl"))[0]
    (tmp_path / events.name).write_bytes(events.read_bytes())
    os.mkfifo(tmp_path / "base_state.json")
    shown = agentlens("inspect", "--json", str(tmp_path / events.name))
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 1


def test_a_named_path_too_long_for_the_file_system_is_its_own_failure(
    data_dir: Path, tmp_path: Path
) -> None:
    """`Path.is_dir()` raises for ENAMETOOLONG: the whole command stopped with `error: ...: File
    name too long` (exit 2) and the other files went unread."""
    too_long = tmp_path / ("a" * 300 + ".json")
    shown = agentlens("inspect", "--json", str(too_long), str(data_dir / GEMINI))
    assert shown.returncode == 1, shown.stderr
    assert len(shown.stdout.splitlines()) == 1
    assert "failed: " in shown.stderr and "File name too long" in shown.stderr


def test_a_huge_outcome_sidecar_beside_a_trace_is_not_read(data_dir: Path, tmp_path: Path) -> None:
    """A report found beside a trace (`sb-cli-report.json`) was read whole, cap or not: a sparse
    600 MB one took 1.2 GB of memory under `--max-file-size 10M`. It is now refused by its size,
    unread, with the usual warning."""
    trace = tmp_path / "github_issue.traj.json"
    trace.write_bytes(
        (data_dir / "formats/mini-swe-agent-fixtures/github_issue.traj.json").read_bytes()
    )
    with open(tmp_path / "sb-cli-report.json", "wb") as huge:
        huge.truncate(600 << 20)
    shown = agentlens("--max-file-size", "10M", "inspect", "--json", str(trace))
    assert shown.returncode == 0 and len(shown.stdout.splitlines()) == 1, shown.stderr
    assert "outcome sidecar ignored" in shown.stderr and "over 256 MiB, not read" in shown.stderr
