"""Hostile-input fuzzing: mutants of real shared files must be read or rejected with a one-line
`AgentLensError` that names the file, never crash a reader with another exception.

Each reader's `read()` is called directly (not through `read_path`, whose wrapper turns a
KeyError into a vague `TraceError` and would hide the bug), with the reader that read the
original and with whichever reader `detect` picks for the mutant, lenient and strict.

Every reader must also return well-typed trajectories: they validate against the model (msgspec
does not check types on construction, so a number where a string belongs would otherwise pass).
Crashes and wrong-typed fields found and fixed stay as regressions (`FIXED`, `TYPED_FIXED`). A crash in a reader being
rewritten elsewhere goes into `KNOWN`: the fuzz run passes over it (so it keeps looking for new
ones) and `test_known_bug` replays it as a strict xfail, which fails once the bug is fixed.

CI budget: `EXAMPLES` mutants per sample, derandomised (the same mutants every run). A longer
random run by hand: `AGENTLENS_FUZZ_EXAMPLES=2000 python -m pytest -q -m slow <this file>`.
"""

from __future__ import annotations

import json
import os
import traceback
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from agentlens.errors import AgentLensError, UnknownFormatError
from agentlens.formats import detect
from agentlens.formats.jsonl import dump_jsonl
from agentlens.formats.load import HEAD_BYTES, read_path
from agentlens.formats.otel_writer import to_otlp
from agentlens.seams import TraceReader
from agentlens.trajectory import Trajectory
from tests.conftest import DATA
from tests.formats import _mutate
from tests.formats._known_bugs import (
    FIXED,
    KNOWN,
    TYPED_FIXED,
    KnownBug,
    Mutant,
)

EXAMPLES = 40
SLOW_EXAMPLES = int(os.environ.get("AGENTLENS_FUZZ_EXAMPLES", "0"))
CONVERTED = ".agentlens.jsonl"  # suffix of an in-memory canonical JSONL made from a real file
EXPORTED = ".otlp.json"  # suffix of an in-memory `convert --to otel` export of a real file
HERE = "tests:"  # prefix of a sample kept beside the tests (a real capture with no shared copy)

SAMPLES = [
    "agentlens-bench-dev/trajectories/scikit-learn__scikit-learn-12585/scikit-learn__scikit-learn-12585-logs-gemini-2.5-pro-fail-24945658083_pta.json",
    "swe-agent-java/20240825_SWE-agent_doubao-pro-128k/trajs/googlecontainertools__jib-4035.traj",
    "formats/swe-agent/function_calling_simple.traj",
    "mini-swe-agent-swebv/trajs/django__django-11099/django__django-11099.traj.json",
    "formats/mini-swe-agent-fixtures/local.traj.json",
    "formats/atif-harbor-golden/tests/golden/terminus_2/hello-world-timeout.trajectory.json",
    "formats/atif-like-openagents/trajectory.json",
    "formats/openhands/legacy-replay-trajs/basic_interactions.json",
    "formats/openhands/benchmarks-v1-output/openagentsafety_gpt-4o_output.jsonl",
    "formats/openhands/eval-output/multi_swe_bench_output.jsonl",  # V0 llm_metrics
    "formats/openhands/sdk-fixtures/goal_events.jsonl",
    "formats/claude-code/marot-spotter/short.jsonl",
    "formats/claude-code/daaain-claude-code-log/representative_messages.jsonl",
    "formats/codex/madshn-localpush/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl",
    "formats/codex/jnarowski-agentcmd/stream/stream-output-5.jsonl",
    "formats/gemini-cli/session-2025-10-27T19-55-981c87cb.json",
    "formats/gemini-cli-jsonl/session.jsonl",
    "formats/copilot-cli/events.jsonl",
    "formats/grok-cli/updates.jsonl",
    "formats/inspect-ai/log_tool_call_error.json",
    "formats/inspect-ai/log_read_sample.eval",
    "formats/openai-messages/openhands-sdk-llm-fixtures/fncall-llm-message.json",
    "formats/atif-harbor-golden/tests/golden/terminus_2/hello-world-context-summarization.summarization-1-questions.traces.json",
    # the canonical JSONL has no shared file: it is written in memory from a real trace
    "formats/claude-code/marot-spotter/short.jsonl" + CONVERTED,
    # OTel: a real OpenInference capture, and a real run as `convert --to otel` writes it
    HERE + "otel/openinference-openai-session.otlp.json",
    "formats/claude-code/marot-spotter/short.jsonl" + EXPORTED,
]


@dataclass(frozen=True)
class Sample:
    path: Path
    reader: type[TraceReader]
    parsed: _mutate.Parsed


@cache
def load_sample(name: str) -> Sample:
    if name.endswith(CONVERTED):
        source = DATA / name.removesuffix(CONVERTED)
        trajectories = read_path(source)
        path = source.with_name(source.name + CONVERTED)
        data = _to_jsonl(trajectories)
    elif name.endswith(EXPORTED) and not name.startswith(HERE):
        source = DATA / name.removesuffix(EXPORTED)
        path = source.with_name(source.name + EXPORTED)
        data = json.dumps(to_otlp(read_path(source))).encode()
    elif name.startswith(HERE):
        path = Path(__file__).parent / name.removeprefix(HERE)
        data = path.read_bytes()
    else:
        path = DATA / name
        data = path.read_bytes()
    return Sample(path, detect(path, data[:HEAD_BYTES]), _mutate.parse(path, data))


def _to_jsonl(trajectories: list[Trajectory]) -> bytes:
    import io

    out = io.BytesIO()
    dump_jsonl(trajectories, out)
    return out.getvalue()


def check_mutant(sample: Sample, data: bytes, lenient: bool, *, skip_known: bool = True) -> None:
    """The property: every applicable reader returns trajectories or raises an AgentLensError
    that names the file. A known bug is rejected (not counted) so the search goes on."""
    for reader_cls in _readers(sample, data):
        try:
            trajectories = list(reader_cls(lenient=lenient).read(sample.path, data))  # type: ignore[call-arg]
        except AgentLensError as exc:
            assert str(sample.path) in str(exc), f"{reader_cls.name}: message lacks the path: {exc}"
            assert "\n" not in str(exc), f"{reader_cls.name}: message of several lines: {exc!r}"
            continue
        except Exception as exc:
            if skip_known and _known(reader_cls.name, exc) is not None:
                reject()
            raise
        assert all(isinstance(t, Trajectory) for t in trajectories)
        _validate(reader_cls.name, trajectories)


def _validate(reader: str, trajectories: list[Trajectory]) -> None:
    try:
        msgspec.json.decode(msgspec.json.encode(trajectories), type=list[Trajectory])
    except msgspec.ValidationError as exc:
        raise AssertionError(f"{reader}: output does not fit the model: {exc}") from exc


def _readers(sample: Sample, data: bytes) -> list[type[TraceReader]]:
    readers = [sample.reader]
    try:
        detected = detect(sample.path, data[:HEAD_BYTES])
    except UnknownFormatError:
        return readers
    return readers if detected is sample.reader else [*readers, detected]


def _known(reader: str, exc: Exception) -> KnownBug | None:
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    where = (Path(frame.filename).name, frame.name)
    for bug in KNOWN:
        if bug.reader == reader and isinstance(exc, bug.error) and where == bug.where:
            return bug
    return None


def _fuzz(name: str, examples: int, derandomize: bool) -> None:
    sample = load_sample(name)

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=derandomize,
        database=None if derandomize else settings.default.database,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
    )
    @given(st.data())
    def run(data: st.DataObject) -> None:
        mutant, done = data.draw(_mutate.mutant(sample.parsed), label="mutant")
        lenient = data.draw(st.booleans(), label="lenient")
        note = f"{sample.reader.name} {name}: {'; '.join(done)}"
        try:
            check_mutant(sample, mutant, lenient)
        except AssertionError as exc:
            raise AssertionError(f"{note}: {exc}") from exc

    run()


@pytest.mark.parametrize("name", SAMPLES)
def test_mutants_are_read_or_rejected(name: str) -> None:
    _fuzz(name, EXAMPLES, derandomize=True)


@pytest.mark.slow
@pytest.mark.skipif(not SLOW_EXAMPLES, reason="set AGENTLENS_FUZZ_EXAMPLES to run a long fuzz")
@pytest.mark.parametrize("name", SAMPLES)
def test_mutants_long_run(name: str) -> None:
    _fuzz(name, SLOW_EXAMPLES, derandomize=False)


def test_samples_are_read_as_expected() -> None:
    """The unmutated samples read cleanly (strictly, except the one look-alike ATIF file), so a
    rejected mutant is rejected for its mutation."""
    for name in SAMPLES:
        sample = load_sample(name)
        lenient = "atif-like" in name
        data = _mutate.serialise(sample.parsed, sample.parsed.value)
        trajectories = list(sample.reader(lenient=lenient).read(sample.path, data))  # type: ignore[call-arg]
        assert trajectories, name
        assert sum(len(t.steps) for t in trajectories) > 1, name
        _validate(sample.reader.name, trajectories)


@pytest.mark.parametrize("mutant", FIXED + TYPED_FIXED, ids=[m.id for m in FIXED + TYPED_FIXED])
def test_fixed_crash_stays_fixed(mutant: Mutant) -> None:
    """A crash found and fixed, or (TYPED_FIXED) a wrong-typed field: the output validates."""
    sample = load_sample(mutant.sample)
    check_mutant(sample, mutant.data(sample.parsed), mutant.lenient, skip_known=False)


@pytest.mark.parametrize("bug", [pytest.param(b, marks=b.mark(), id=b.id) for b in KNOWN])
def test_known_bug(bug: KnownBug) -> None:
    sample = load_sample(bug.sample)
    check_mutant(sample, bug.data(sample.parsed), bug.lenient, skip_known=False)
