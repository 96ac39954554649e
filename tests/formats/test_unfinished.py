"""A JSONL trace whose last line is cut short (a session still being written, an agent killed)
reads its complete lines, with one warning and `metadata["truncated"]`; any other broken line
still fails the file. Each case is a real file from ../shared/data, copied with a line cut."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentlens.errors import TraceError
from agentlens.formats import read_path
from agentlens.formats.claude_code import ClaudeCodeReader
from agentlens.formats.jsonl import dump_jsonl
from agentlens.formats.stream import read_paths
from agentlens.trajectory import Trajectory
from tests.conftest import DATA, FORMATS

CUT_NOTE = "last line is incomplete ({} bytes), ignored: session still being written?"
SESSIONS = {  # one real file of each format whose lines are the events of one run
    "claude-code": FORMATS / "claude-code" / "marot-spotter" / "short.jsonl",
    "codex-rollout": FORMATS
    / "codex"
    / "madshn-localpush"
    / "rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl",
    "codex-exec": FORMATS / "codex" / "jnarowski-agentcmd" / "stream" / "stream-output-4.jsonl",
    "copilot-cli": FORMATS / "copilot-cli" / "events.jsonl",
    "gemini-cli-jsonl": FORMATS / "gemini-cli-jsonl" / "session.jsonl",
    "grok-cli": FORMATS / "grok-cli" / "updates.jsonl",
    "openhands-v1": FORMATS / "openhands" / "sdk-fixtures" / "goal_events.jsonl",
}
RUNS = FORMATS / "openhands" / "eval-output" / "resolver_mock_output.jsonl"  # a run per line


def _lines(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().splitlines() if line.strip()]


def _write(folder: Path, name: str, lines: list[bytes], tail: bytes = b"") -> Path:
    """`lines` each ended by a newline, then `tail` (a cut line has none)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(b"".join(line + b"\n" for line in lines) + tail)
    return path


def _cut(source: Path, folder: Path) -> tuple[Path, int, int]:
    """A copy of `source` whose last line is cut in half: (copy, its line number, bytes kept)."""
    lines = _lines(source)
    half = lines[-1][: len(lines[-1]) // 2]
    return _write(folder, source.name, lines[:-1], half), len(lines), len(half)


def _steps(trajectory: Trajectory) -> list[Any]:
    return msgspec.to_builtins(trajectory.steps)


@pytest.mark.parametrize("format", sorted(SESSIONS))
def test_a_cut_last_line_keeps_the_run_read_from_the_lines_before_it(
    format: str, tmp_path: Path
) -> None:
    source = SESSIONS[format]
    cut, line, size = _cut(source, tmp_path / "cut")
    whole = _write(tmp_path / "whole", source.name, _lines(source)[:-1])
    result = read_paths([cut])
    assert not result.failures
    (read,), (expected,) = result.trajectories, read_path(whole)
    assert read.source.format == format
    assert _steps(read) == _steps(expected)
    assert read.metadata["truncated"] == {"line": line, "bytes": size}
    assert dict(result.warnings) == {f"{cut}: line {line}: {CUT_NOTE.format(size)}": 1}


@pytest.mark.parametrize("format", ["claude-code", "copilot-cli", "grok-cli"])
def test_inspect_warns_once_about_a_cut_last_line_and_exits_0(
    format: str, tmp_path: Path, run_cli: Callable[..., Any]
) -> None:
    cut, line, size = _cut(SESSIONS[format], tmp_path)
    result = run_cli("inspect", str(cut))
    assert result.code == 0
    assert result.err.splitlines() == [f"warning: {cut}: line {line}: {CUT_NOTE.format(size)}"]
    assert "1 trajectory" in result.out
    assert f" steps (cut at line {line}) · tokens " in result.out  # not only in the warning
    summary = json.loads(run_cli("inspect", "--json", str(cut)).out)
    assert summary["truncated"] == {"line": line, "bytes": size}


@pytest.mark.parametrize("format", sorted(SESSIONS))
def test_a_broken_line_before_the_last_still_fails_the_file(
    format: str, tmp_path: Path, run_cli: Callable[..., Any]
) -> None:
    lines = _lines(SESSIONS[format])
    broken = lines[-2][: len(lines[-2]) // 2]
    path = _write(tmp_path, SESSIONS[format].name, [*lines[:-2], broken, lines[-1]])
    result = run_cli("inspect", str(path))
    assert result.code == 1
    (failed,) = [line for line in result.err.splitlines() if line.startswith("failed:")]
    assert failed.startswith(f"failed: {path} [{format}]: invalid JSON on line {len(lines) - 1}")
    assert "warning:" not in result.err and "Traceback" not in result.err


@pytest.mark.parametrize(
    "last",
    [b'{"type": "assistant"}} x', b"not json at all"],
    ids=["trailing-garbage", "not-json"],
)
def test_a_last_line_broken_rather_than_cut_still_fails(last: bytes, tmp_path: Path) -> None:
    """Only a line whose JSON the line ends before is taken as cut short."""
    lines = _lines(SESSIONS["claude-code"])
    path = _write(tmp_path, "session.jsonl", lines, last)
    with pytest.raises(TraceError, match=f"invalid JSON on line {len(lines) + 1}"):
        read_path(path)


def test_a_file_whose_only_line_is_cut_fails(tmp_path: Path) -> None:
    first = _lines(SESSIONS["copilot-cli"])[0]
    path = _write(tmp_path, "events.jsonl", [], first[: len(first) // 2])
    with pytest.raises(TraceError, match="invalid JSON on line 1"):
        read_path(path, format="copilot-cli")


def test_a_reader_called_outside_a_batch_read_still_fails_on_a_cut_line(tmp_path: Path) -> None:
    """It has no one to tell that it skipped a line, so it does not skip it."""
    cut, line, _ = _cut(SESSIONS["claude-code"], tmp_path)
    with pytest.raises(TraceError, match=f"invalid JSON on line {line}"):
        list(ClaudeCodeReader().read(cut, cut.read_bytes()))


def test_a_cut_run_of_a_run_per_line_file_is_a_run_lost_not_a_run_cut(tmp_path: Path) -> None:
    """In OpenHands' output.jsonl each line is a whole run: the runs before the cut one are
    complete, so none is marked truncated, and the warning is said once."""
    cut, line, size = _cut(RUNS, tmp_path)
    result = read_paths([cut])
    assert not result.failures
    assert [t.id for t in result.trajectories] == [t.id for t in read_path(RUNS)][:-1]
    assert all("truncated" not in t.metadata for t in result.trajectories)
    assert dict(result.warnings) == {f"{cut}: line {line}: {CUT_NOTE.format(size)}": 1}


def test_a_canonical_dump_cut_while_written_keeps_its_whole_runs(tmp_path: Path) -> None:
    originals = read_path(RUNS)
    dump = tmp_path / "dump.jsonl"
    dump_jsonl(originals, dump)
    cut, line, size = _cut(dump, tmp_path / "cut")
    result = read_paths([cut])
    assert [t.id for t in result.trajectories] == [t.id for t in originals][:-1]
    (warning,) = result.warnings  # after the path the runs were first read from
    assert warning.endswith(f": {cut}: line {line}: {CUT_NOTE.format(size)}")


def test_a_cut_sub_agent_file_marks_the_sub_agent_and_warns_on_the_session(
    tmp_path: Path,
) -> None:
    shutil.copyfile(SESSIONS["claude-code"], tmp_path / "session.jsonl")
    sub_source = next((FORMATS / "claude-code" / "marot-spotter").rglob("agent-*.jsonl"))
    sub, line, size = _cut(sub_source, tmp_path / "session" / "subagents")
    (session,) = read_paths([tmp_path / "session.jsonl"]).trajectories
    (agent,) = session.subtrajectories
    assert agent.metadata["truncated"] == {"line": line, "bytes": size}
    assert "truncated" not in session.metadata
    assert session.metadata["warnings"] == [f"{sub}: line {line}: {CUT_NOTE.format(size)}"]


def _trace_files() -> list[str]:
    """Every trace file of the shared data (AgentLens-Bench's 399, one reader, by a sample)."""
    from tests.formats.test_all_shared_files import EXPECTED, _all_files

    traces = [f for f in _all_files() if next(r for p, r in EXPECTED if fnmatch(f, p))]
    bench = [f for f in traces if f.startswith("agentlens-bench-dev/")]
    return sorted(set(traces) - set(bench)) + sorted(bench)[::50]


@pytest.mark.parametrize("name", _trace_files())
def test_any_trace_cut_in_half_is_one_line_that_says_so(
    name: str, tmp_path: Path, run_cli: Callable[..., Any]
) -> None:
    """A file cut while written, in any format: a JSONL session reads its complete lines with
    a warning; anything else fails in one line naming the file and saying it was cut short."""
    data = (DATA / name).read_bytes()
    cut = tmp_path / Path(name).name
    cut.write_bytes(data[: len(data) // 2])
    result = run_cli("inspect", str(cut))
    assert "Traceback" not in result.err
    if result.code == 0:
        assert f"warning: {cut}: line " in result.err and "last line is incomplete" in result.err
        return
    (failed,) = [line for line in result.err.splitlines() if line.startswith("failed:")]
    assert failed.startswith(f"failed: {cut} [") and "truncated?" in failed, failed


def test_a_collector_file_cut_while_written_keeps_its_complete_exports(
    tmp_path: Path, run_cli: Callable[..., Any]
) -> None:
    """The OTel collector's file exporter writes one export request per line: a real run's
    export, then a second cut short, reads as the first with the cut one named."""
    assert run_cli("convert", "--to", "otel", "-o", str(tmp_path), str(RUNS)).code == 0
    (export,) = tmp_path.glob("*.otlp.json")
    line = json.dumps(json.loads(export.read_bytes())).encode()  # one line, as a collector's
    spans = _write(tmp_path / "collector", "spans.jsonl", [line], line[: len(line) // 2])
    result = read_paths([spans])
    runs = result.trajectories
    assert [t.id for t in runs] == [t.id for t in read_path(export)] and len(runs) == 2
    # the cut request may have held spans of any trace in the file: each run says so
    assert all(t.metadata["truncated"] == {"line": 2, "bytes": len(line) // 2} for t in runs)
    assert dict(result.warnings) == {f"{spans}: line 2: {CUT_NOTE.format(len(line) // 2)}": 2}
    empty = _write(tmp_path / "empty", "spans.jsonl", [b'{"resourceSpans": []}'], line[:100])
    with pytest.raises(TraceError, match=r"line 2: last line is incomplete .*, and no run before"):
        read_path(empty)
