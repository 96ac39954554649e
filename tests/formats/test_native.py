"""The compiled twins (`formats/*.pyx`) give exactly what the Python functions they stand for give,
and the modules compiled as they are (`*_compiled`) read as their source does.

Each twin is checked against its Python specification in this process: on every shell command and
fenced reply of the real runs, on generated shell-like and fenced text, and on fuzzed copies of
the shared mini-swe-agent files (whole reads, errors included); the compiled OpenHands converter
against its module on fuzzed copies of the shared OpenHands files. A last test reads every shared
trajectory twice, here and in a Python started with `AGENTLENS_PURE_PYTHON=1`, and compares the
canonical JSON of each: an install without a C compiler reads everything exactly as this one.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlens.errors import AgentLensError
from agentlens.formats import _categories as cat
from agentlens.formats import _fenced_commands as fenced
from agentlens.formats import _native, _openhands_legacy, openhands_eval, openhands_events
from agentlens.formats import _shell_tokens as sh
from agentlens.formats import mini_swe_agent as mini
from agentlens.trajectory import Trajectory
from tests.conftest import DATA, FORMATS
from tests.formats import _mutate
from tests.formats.test_categories_property import PIECES, _lines

SHELL = _native.compiled("_shell_accel")
MINI = _native.compiled("_mini_swe_agent_accel")
LEGACY = _native.compiled("_openhands_legacy_compiled")
if SHELL is None or MINI is None or LEGACY is None:
    if os.environ.get("CI"):  # CI has a C compiler: the twins must have been built
        raise RuntimeError("the compiled twins were not built (see setup.py)")
    pytest.skip(
        "the compiled twins were not built (pip install -e . builds them)", allow_module_level=True
    )

MINI_FILES = sorted(DATA.glob("mini-swe-agent-swebv/trajs/*/*.traj.json")) + sorted(
    (FORMATS / "mini-swe-agent-fixtures").glob("*.traj.json")
)
# characters that mean something to the tokenizer, and some that only look as if they might
SHELL_CHARS = [*"ab c./-=_'\"\\|&;<>()#\n\t$*0123\u00a0\u2028\x1c\x00é٣", "<<", "EOF"]
FENCE_PIECES = ["```", "bash", "mswea_bash_command", "\n", " ", "\t", "\u2028", "ls -la", "x", "`"]


def _same(expected: Callable[[], Any], actual: Callable[[], Any]) -> None:
    """Both give equal values, or both raise the same error with the same message."""
    try:
        want: Any = expected()
    except Exception as exc:  # any error must be matched exactly
        want = (type(exc), str(exc))
    try:
        got: Any = actual()
    except Exception as exc:
        got = (type(exc), str(exc))
    assert got == want


def _check_line(line: str) -> None:
    _same(lambda: sh.strip_heredocs(line), lambda: SHELL.strip_heredocs(line))
    _same(lambda: cat._analyse_line(line), lambda: SHELL.analyse_line(line))
    _same(lambda: cat._analyse_command(line), lambda: SHELL.analyse_command(line))


def test_shell_twin_matches_on_real_and_seeded_lines() -> None:
    lines = _lines()
    assert len(lines) > 4000
    for line in lines:
        _check_line(line)
        _check_line(line.strip())


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([*SHELL_CHARS, *PIECES]), max_size=30).map("".join))
def test_shell_twin_matches_on_generated_lines(line: str) -> None:
    _check_line(line)


def test_shell_twin_caches_are_cleared_and_bounded() -> None:
    SHELL.cache_clear()
    first = SHELL.analyse("cat a.py")
    assert SHELL.analyse("cat a.py") is first  # cached
    SHELL.cache_clear()
    assert SHELL.analyse("cat a.py") is not first
    for number in range(9000):  # past the bound: the cache empties itself, answers stay right
        assert SHELL.analyse(f"cat f{number}.py") == cat._analyse_cached(f"cat f{number}.py")


@cache
def _replies() -> list[str]:
    replies = []
    for path in MINI_FILES:
        doc = orjson.loads(path.read_bytes())
        for message in doc if isinstance(doc, list) else doc["messages"]:
            if isinstance(message.get("content"), str):
                replies.append(message["content"])
    return replies


def test_fence_twin_matches_on_real_replies() -> None:
    assert len(_replies()) > 300
    for text in _replies():
        assert MINI.command_blocks(text) == fenced._command_blocks(text)
        wide = text + "\u0394"  # the same text stored two bytes a character
        assert MINI.command_blocks(wide) == fenced._command_blocks(wide)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FENCE_PIECES), max_size=24).map("".join))
def test_fence_twin_matches_on_generated_replies(text: str) -> None:
    assert MINI.command_blocks(text) == fenced._command_blocks(text)


def _outcome(read: Callable[[], list[Trajectory]]) -> Any:
    """The canonical JSON of what a read returns, or its error's type and message."""
    try:
        return msgspec.json.encode(read())
    except AgentLensError as exc:
        return type(exc), str(exc)


def _read(path: Path, data: bytes, monkeypatch: pytest.MonkeyPatch, *, python: bool) -> Any:
    """What the mini-swe-agent reader makes of `data`, with the Python or the compiled loop."""
    with monkeypatch.context() as patched:
        if python:
            patched.setattr(mini, "steps_of", mini._steps)
            patched.setattr(mini, "first_unreadable", mini._first_unreadable)
        return _outcome(lambda: list(mini.MiniSweAgentReader().read(path, data)))


def test_mini_swe_agent_twin_reads_the_shared_files_as_python_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert len(MINI_FILES) >= 8
    for path in MINI_FILES:
        data = path.read_bytes()
        compiled = _read(path, data, monkeypatch, python=False)
        assert isinstance(compiled, bytes), compiled
        assert compiled == _read(path, data, monkeypatch, python=True), path


class _Mutant:
    """A mutated file, shown by what was done to it (a failing example prints that, not MBs)."""

    def __init__(self, drawn: tuple[bytes, list[str]]) -> None:
        self.data, self.done = drawn

    def __repr__(self) -> str:
        return f"mutant({'; '.join(self.done)})"


@pytest.mark.parametrize("path", MINI_FILES[:3] + MINI_FILES[-2:], ids=lambda p: p.name)
def test_mini_swe_agent_twin_reads_mutants_as_python_does(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _same_on_mutants(path, _read, monkeypatch)


def _same_on_mutants(path: Path, read: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """`read` gives the same with `python=True` and `False` on 60 fuzzed copies of `path`."""
    parsed = _mutate.parse(path, path.read_bytes())

    @settings(
        max_examples=60,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(_mutate.mutant(parsed).map(_Mutant))
    def run(mutant: _Mutant) -> None:
        compiled = read(path, mutant.data, monkeypatch, python=False)
        assert compiled == read(path, mutant.data, monkeypatch, python=True), mutant

    run()


def test_mini_swe_agent_twin_reads_uncommon_shapes_as_python_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Tool calls, actions, list content, ISO and huge times, odd token counts, answers to
    several calls: the shapes the twin hands to the Python helpers, and the edges it keeps."""
    reply = "THOUGHT: look\n\n```bash\nls -la\n```"
    call = {"id": "c1", "function": {"name": "bash", "arguments": '{"command": "cat a.py"}'}}
    second = {"id": "c2", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
    shapes: list[dict[str, Any]] = [
        {"role": "assistant", "content": reply, "tool_calls": [call, second]},
        {"role": "tool", "tool_call_id": "c2", "content": "<returncode>0</returncode>"},
        {"role": "tool", "tool_call_id": "zz", "content": "<returncode>2</returncode>"},
        {"role": "assistant", "content": reply, "extra": {"actions": [{"command": "pwd"}]}},
        {"role": "user", "content": "<output>no code</output>", "extra": {"returncode": 3}},
        {"role": "assistant", "content": [{"type": "text", "text": reply}]},
        {"role": "user", "content": [{"type": "text", "text": "<returncode>0</returncode>"}]},
        {"role": "assistant", "content": reply, "extra": {"timestamp": "2025-01-02T03:04:05Z"}},
        {"role": "assistant", "content": reply, "extra": {"timestamp": 1763509284.123456}},
        {"role": "assistant", "content": reply, "extra": {"timestamp": 253402300799}},
        {"role": "assistant", "content": reply, "extra": {"response": {"created": -86400}}},
        {"role": "assistant", "content": reply, "extra": {"cost": True, "response": {"usage": {
            "prompt_tokens": 3.0, "completion_tokens": None,
            "prompt_tokens_details": {"cached_tokens": 2}}}}},
        {"role": "assistant", "content": "no block", "extra": {"response": {"model": 7}}},
        {"role": "assistant", "content": "two\n```bash\na\n```\n```bash\nb\n```"},
        {"role": "assistant", "content": "```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"},
        {"role": "system", "content": None},
        {"role": 5, "content": "odd role"},
    ]  # fmt: skip
    bad_times = [2**70, 1e300, 253402300800, -1e20]
    documents = [shapes] + [
        [{"role": "assistant", "content": reply, "extra": {"timestamp": t}}] for t in bad_times
    ]
    documents.append([{"role": "assistant", "content": reply, "extra": {"cost": 10**400}}])
    path = Path("shapes.traj.json")
    for document in documents:
        data = json.dumps({"messages": document, "trajectory_format": "mini-swe-agent-1"}).encode()
        compiled = _read(path, data, monkeypatch, python=False)
        assert compiled == _read(path, data, monkeypatch, python=True), document
    assert isinstance(_read(path, json.dumps({"messages": shapes}).encode(), monkeypatch,
                            python=False), bytes)  # fmt: skip


@settings(max_examples=2000, deadline=None)
@given(st.integers(-(2**40), 2**40) | st.floats(-1e12, 1e12))
def test_mini_swe_agent_twin_times_match(when: int | float) -> None:
    from datetime import UTC, datetime

    reply = {"role": "assistant", "content": "x", "extra": {"timestamp": when}}
    _same(lambda: datetime.fromtimestamp(when, UTC), lambda: MINI.steps([reply])[0].timestamp)
    _same(lambda: mini._steps([reply]), lambda: MINI.steps([reply]))
    if -(2**31) < when < 2**31:
        timestamp = MINI.steps([reply])[0].timestamp
        assert timestamp.tzinfo is UTC and timestamp.fold == 0


OPENHANDS_FILES = [
    FORMATS / "openhands/legacy-replay-trajs/basic_gui_mode.json",
    FORMATS / "openhands/legacy-replay-trajs/wrong_initial_state.json",
    FORMATS / "atif-harbor-golden/docs/rfcs/0001-trajectory-format/openhands_trajectory.json",
    FORMATS / "openhands/eval-output/multi_swe_bench_output.jsonl",
]


def _read_openhands(
    path: Path, data: bytes, monkeypatch: pytest.MonkeyPatch, *, python: bool
) -> Any:
    """What the OpenHands reader of `path` makes of `data`, with the source or compiled converter."""
    reader = openhands_eval.OpenHandsEvalReader if path.suffix == ".jsonl" else None
    reader = reader or openhands_events.OpenHandsEventsReader
    with monkeypatch.context() as patched:
        if python:
            patched.setattr(openhands_events, "LegacyConverter", _openhands_legacy.LegacyConverter)
            patched.setattr(openhands_eval, "LegacyConverter", _openhands_legacy.LegacyConverter)
        return _outcome(lambda: list(reader().read(path, data)))


def test_the_compiled_openhands_converter_is_the_one_read_with() -> None:
    assert openhands_events.LegacyConverter is LEGACY.LegacyConverter
    assert openhands_eval.LegacyConverter is LEGACY.LegacyConverter


@pytest.mark.parametrize("path", OPENHANDS_FILES, ids=lambda p: p.name)
def test_the_compiled_openhands_converter_reads_mutants_as_its_source_does(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = path.read_bytes()
    compiled = _read_openhands(path, data, monkeypatch, python=False)
    assert isinstance(compiled, bytes), compiled
    assert compiled == _read_openhands(path, data, monkeypatch, python=True)
    _same_on_mutants(path, _read_openhands, monkeypatch)


PURE_READ = """
import hashlib, json, sys
import msgspec
from agentlens.formats import _categories, mini_swe_agent
from agentlens.formats.load import read_paths
assert _categories.analyse_command is _categories._analyse_command
assert mini_swe_agent.steps_of is mini_swe_agent._steps
from agentlens.formats import openhands_events
assert openhands_events.LegacyConverter.__module__ == "agentlens.formats._openhands_legacy"
result = read_paths([sys.argv[1]])
print(json.dumps({t.source.path + "#" + t.id: hashlib.sha256(msgspec.json.encode(t)).hexdigest()
                  for t in result.trajectories}))
"""


def test_a_pure_python_install_reads_every_shared_file_alike() -> None:
    from agentlens.formats.load import read_paths

    here = {
        t.source.path + "#" + t.id: hashlib.sha256(msgspec.json.encode(t)).hexdigest()
        for t in read_paths([DATA]).trajectories
    }
    assert len(here) > 500
    pure = subprocess.run(
        [sys.executable, "-c", PURE_READ, str(DATA)],
        env=os.environ | {"AGENTLENS_PURE_PYTHON": "1"},
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    assert json.loads(pure.stdout) == here


def test_formats_says_which_accelerators_run() -> None:
    from click.testing import CliRunner

    from agentlens.cli import cli

    line = CliRunner().invoke(cli, ["formats"]).output.splitlines()[-1]
    assert line == (
        "accelerators: compiled: shell-command classifier, mini-swe-agent steps, "
        "OpenHands legacy converter"
    )
    pure = subprocess.run(
        [sys.executable, "-m", "agentlens", "formats"],
        env=os.environ | {"AGENTLENS_PURE_PYTHON": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert (
        pure.stdout.splitlines()[-1] == "accelerators: pure Python (AGENTLENS_PURE_PYTHON is set)"
    )


def test_compiled_trajectories_validate() -> None:
    for path in MINI_FILES:
        for trajectory in mini.MiniSweAgentReader().read(path, path.read_bytes()):
            encoded = msgspec.json.encode(trajectory)
            assert msgspec.json.decode(encoded, type=Trajectory) == trajectory
