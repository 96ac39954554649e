"""canonical -> ATIF -> canonical and canonical -> JSONL -> canonical on real trajectories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from agentlens.formats import detect, read_path
from agentlens.formats.atif import AtifReader
from agentlens.formats.atif_schema import validate
from agentlens.formats.atif_writer import VERSION, to_atif
from agentlens.formats.jsonl import dump_jsonl, load_jsonl
from agentlens.trajectory import Step, Trajectory
from tests.conftest import BENCH, FORMATS

SOURCES = [
    *sorted((BENCH / "trajectories").glob("*/*.json"))[::50],
    FORMATS / "atif-harbor-golden/tests/golden/openhands/hello-world.trajectory.json",
    FORMATS
    / "atif-harbor-golden/tests/golden/terminus_2/hello-world-context-summarization.trajectory.json",
    FORMATS / "claude-code/marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    FORMATS / "claude-code/daaain-claude-code-log/edge_cases.jsonl",
    FORMATS
    / "codex/madshn-localpush/rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl",
    FORMATS / "codex/jnarowski-agentcmd/stream/stream-output-4.jsonl",
    FORMATS / "codex/jnarowski-agentcmd/stream/stream-output-multi-1.jsonl",
    FORMATS / "inspect-ai/2025-05-12T20-27-36-04-00_browser.json",
    FORMATS / "inspect-ai/log_tool_call_error.json",
    FORMATS / "swe-agent/ctf__misc__networking_1.traj",  # calls without ids
    FORMATS / "openhands/eval-output/multi_swe_bench_output.jsonl",  # an agent step in error
]


def _signature(step: Step) -> tuple[Any, ...]:
    return (
        step.kind,
        step.text,
        step.tool_name,
        step.call_id,
        step.arguments,
        step.command,
        step.files,
        step.category,
        step.observation,
        step.is_error,
        step.usage,
        step.cost,
        step.timestamp,
        step.model,
        step.stored_stage,
        step.subtrajectory,
    )


def _turn_partition(trajectory: Trajectory) -> list[bool]:
    """For each step: does it share its turn with the step before (turn numbers may change)."""
    steps = trajectory.steps
    return [
        i > 0 and s.turn is not None and s.turn == steps[i - 1].turn for i, s in enumerate(steps)
    ]


def _through_atif(trajectory: Trajectory) -> tuple[dict[str, Any], Trajectory]:
    doc = to_atif(trajectory)
    data = orjson.dumps(doc)
    (back,) = AtifReader().read(Path("roundtrip.json"), data)
    return doc, back


def test_the_sources_span_several_formats() -> None:
    formats = {detect(p, p.read_bytes()[:65536]).name for p in SOURCES}
    assert {"agentlens-bench", "atif", "claude-code", "codex-rollout", "codex-exec"} <= formats
    assert "inspect-ai" in formats


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name[-40:])
def test_atif_round_trip_keeps_steps_calls_observations_and_usage(path: Path) -> None:
    originals = read_path(path)
    assert originals
    for original in originals:
        doc, back = _through_atif(original)
        assert doc["schema_version"] == VERSION
        assert validate(doc) == []
        assert [_signature(s) for s in back.steps] == [_signature(s) for s in original.steps]
        assert _turn_partition(back) == _turn_partition(original)
        assert [s.turn for s in back.steps] == [s.turn for s in original.steps]
        assert back.usage_total() == original.usage_total()
        assert (back.id, back.task_id, back.task) == (original.id, original.task_id, original.task)
        assert back.outcome == original.outcome
        assert (back.model, back.agent) == (original.model, original.agent)
        assert [s.id for s in back.subtrajectories] == [s.id for s in original.subtrajectories]
        # a scenario run's termination, tags and verdicts live here (telemetry, review read them)
        assert back.metadata == original.metadata


def test_atif_round_trip_keeps_sub_agents() -> None:
    (original,) = read_path(next(p for p in SOURCES if p.parent.name == "marot-spotter"))
    _, back = _through_atif(original)
    assert len(back.subtrajectories) == len(original.subtrajectories) == 2
    for sub, sub_back in zip(original.subtrajectories, back.subtrajectories, strict=True):
        assert [_signature(s) for s in sub_back.steps] == [_signature(s) for s in sub.steps]
        assert sub_back.parent_id == original.id


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name[-40:])
def test_jsonl_round_trip_is_exact(path: Path, tmp_path: Path) -> None:
    originals = read_path(path)
    out = tmp_path / "out.jsonl"
    assert dump_jsonl(originals, out) == len(originals)
    assert detect(out, out.read_bytes()[:65536]).name == "agentlens-jsonl"
    assert load_jsonl(out) == originals
    assert read_path(out) == originals


def test_jsonl_rejects_a_line_that_breaks_the_model(tmp_path: Path) -> None:
    from agentlens.errors import SchemaError

    (original,) = read_path(SOURCES[0])
    out = tmp_path / "bad.jsonl"
    dump_jsonl([original], out)
    broken = orjson.loads(out.read_bytes())
    broken["steps"][0]["kind"] = "robot"
    out.write_bytes(out.read_bytes() + orjson.dumps(broken) + b"\n")
    with pytest.raises(SchemaError, match="line 2"):
        load_jsonl(out)


def test_jsonl_writes_the_schema_version_once_when_it_is_an_equal_string(tmp_path) -> None:
    """A real trajectory whose schema_version is an equal string, not the default object itself
    (as read back from a database), still gets exactly one schema_version key."""
    import msgspec

    from agentlens.trajectory import SCHEMA_VERSION

    (real,) = read_path(sorted((BENCH / "trajectories" / "psf__requests-1724").glob("*.json"))[0])
    copy = msgspec.structs.replace(real, schema_version="".join(SCHEMA_VERSION))
    assert copy.schema_version is not SCHEMA_VERSION
    dump_jsonl([copy], tmp_path / "t.jsonl")
    line = (tmp_path / "t.jsonl").read_bytes()
    assert line.count(b'"schema_version"') == 1
    assert load_jsonl(tmp_path / "t.jsonl") == [real]


@pytest.mark.parametrize(
    "path",
    [
        FORMATS / "grok-cli" / "updates.jsonl",  # no tokens recorded anywhere
        FORMATS / "openhands" / "eval-output" / "resolver_mock_output.jsonl",  # price, no tokens
        FORMATS / "swe-agent" / "function_calling_simple.traj",
        FORMATS / "copilot-cli" / "events.jsonl",  # the session's reported totals only
    ],
    ids=lambda p: p.parent.name,
)
def test_atif_round_trip_keeps_unknown_tokens_unknown(path: Path) -> None:
    """A trace that says nothing about tokens must not come back as one that used 0 of them
    (telemetry would print 0 tokens and `compare` would test zeros)."""
    for original in read_path(path):
        _, back = _through_atif(original)
        assert back.usage_known() == original.usage_known()
        assert [s.usage for s in back.steps if s.kind != "tool"] == [
            s.usage for s in original.steps if s.kind != "tool"
        ]
        assert back.cost_total() == original.cost_total()
