"""OpenTelemetry in and out: a real OpenInference capture of a tool-calling session against the
local model reads into the steps and usage the session had; `convert --to otel` round-trips."""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentlens.formats import detect, read_path
from tests.conftest import FORMATS

HERE = Path(__file__).parent / "otel"
CAPTURE = HERE / "openinference-openai-session.otlp.json"
SESSION = HERE / "openinference-openai-session.session.json"


def _session() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    record = json.loads(SESSION.read_text())
    return [r["llm"] for r in record if "llm" in r], [r["tool"] for r in record if "tool" in r]


def test_capture_was_made_by_real_instrumentation() -> None:
    doc = json.loads(CAPTURE.read_text())
    scopes = {s["scope"]["name"] for r in doc["resourceSpans"] for s in r["scopeSpans"]}
    assert "openinference.instrumentation.openai" in scopes
    assert detect(CAPTURE, CAPTURE.read_bytes()[:65536]).name == "otel"


def test_capture_reads_into_the_session_it_recorded() -> None:
    responses, tools = _session()
    (traj,) = read_path(CAPTURE)
    calls = [c for r in responses for c in r["tool_calls"]]
    assert [(s.call_id, s.tool_name) for s in traj.tool_steps] == [
        (c["id"], c["name"]) for c in calls
    ]
    assert [s.arguments for s in traj.tool_steps] == [json.loads(c["arguments"]) for c in calls]
    outputs = {t["id"]: t for t in tools}
    assert [s.observation for s in traj.tool_steps] == [outputs[c["id"]]["output"] for c in calls]
    assert [s.is_error for s in traj.tool_steps] == [outputs[c["id"]]["is_error"] for c in calls]
    plain = [r for r in responses if not r["tool_calls"]]
    assert [s.text for s in traj.steps if s.kind == "agent"] == [r["content"] for r in plain]
    usage = traj.usage_total()
    assert usage.prompt_tokens == sum(r["prompt_tokens"] for r in responses)
    assert usage.completion_tokens == sum(r["completion_tokens"] for r in responses)
    assert traj.model == "smollm2-135m" and traj.agent.name == "capture-agent"
    assert traj.steps[0].kind == "user" and traj.task == traj.steps[0].text


@pytest.mark.parametrize(
    "source",
    [
        CAPTURE,
        FORMATS / "gemini-cli-jsonl" / "session.jsonl",
        FORMATS / "copilot-cli" / "events.jsonl",
        FORMATS / "codex" / "jnarowski-agentcmd" / "stream" / "stream-output-3.jsonl",
        FORMATS / "openhands" / "legacy-replay-trajs" / "basic_interactions.json",
    ],
    ids=["openinference-capture", "gemini-cli-jsonl", "copilot-cli", "codex-exec", "openhands"],
)
def test_convert_to_otel_round_trips(
    source: Path, tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    result = run_cli("convert", "--to", "otel", "-o", str(tmp_path), str(source))
    assert result.code == 0  # type: ignore[attr-defined]
    (written,) = tmp_path.glob("*.otlp.json")
    (original,) = read_path(source)
    (back,) = read_path(written)
    assert back.source.format == "otel"
    assert back.id != "" and back.model == original.model
    kept = [s for s in original.steps if s.kind in ("agent", "tool")]
    got = [s for s in back.steps if s.kind in ("agent", "tool")]
    assert _facts_of(got) == _facts_of(kept)
    assert back.usage_total() == original.usage_total()
    assert back.task == (
        original.task or next((s.text for s in original.steps if s.kind == "user"), None)
    )


def _facts_of(steps: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (
            s.kind,
            s.text,
            s.tool_name,
            s.call_id,
            s.arguments,
            s.observation,
            bool(s.is_error),
            s.usage,
        )
        for s in steps
    ]


@pytest.mark.parametrize(
    "source",
    [
        FORMATS / "openhands" / "eval-output" / "resolver_mock_output.jsonl",  # outcome, cost
        FORMATS / "copilot-cli" / "events.jsonl",  # only the session's reported usage
        FORMATS / "swe-agent" / "tests__gpt4__swe-agent__test-repo__default_from_url__t-0.00"
        "__p-0.95__c-3.00__install-1__swe-agent__test-repo-i1.traj",  # reported usage, cost
    ],
    ids=["openhands-resolver", "copilot-cli", "swe-agent"],
)
def test_convert_to_otel_keeps_ids_outcome_tokens_and_cost(
    source: Path, tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    """What the writer puts on the root span comes back: a run converted to OTel and read
    again keeps its id, task, pass/fail, token totals and price (they used to read back as a
    hex trace id, outcome unknown, no tokens, no price)."""
    assert run_cli("convert", "--to", "otel", "-o", str(tmp_path), str(source)).code == 0  # type: ignore[attr-defined]
    (written,) = tmp_path.glob("*.otlp.json")
    originals, back = read_path(source), read_path(written)
    assert [t.id for t in back] == [t.id for t in originals]
    for original, again in zip(originals, back, strict=True):
        assert (again.task_id, again.outcome) == (original.task_id, original.outcome)
        assert again.usage_known() == original.usage_known()
        assert again.cost_total() == pytest.approx(original.cost_total())
        assert original.cost_total() is not None or original.usage_known() is not None


@pytest.mark.parametrize(
    "source",
    [
        FORMATS / "gemini-cli" / "session-2025-10-27T19-55-981c87cb.json",
        FORMATS / "claude-code" / "marot-spotter" / "tool_heavy.jsonl",
        FORMATS
        / "codex"
        / "madshn-localpush"
        / "rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl",
    ],
    ids=["gemini-cli", "claude-code", "codex"],
)
def test_convert_to_otel_keeps_the_users_later_messages(
    source: Path, tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    """A dialog (a scenario run's simulated user, a developer's follow-ups) used to reach the
    export with its first message only: each later one now opens the input of the response
    that answers it, and reads back as a user step before that response."""
    assert run_cli("convert", "--to", "otel", "-o", str(tmp_path), str(source)).code == 0  # type: ignore[attr-defined]
    (written,) = tmp_path.glob("*.otlp.json")
    (original,), (back,) = read_path(source), read_path(written)
    said = [s.text for s in original.steps if s.kind == "user"]  # after the last answer too
    assert len(said) >= 3
    assert [s.text for s in back.steps if s.kind == "user"][1:] == said[1:]


@pytest.mark.parametrize(
    "source",
    [
        FORMATS / "gemini-cli-jsonl" / "session.jsonl",
        FORMATS / "copilot-cli" / "events.jsonl",
        FORMATS / "claude-code" / "daaain-claude-code-log" / "session_b.jsonl",
    ],
    ids=["gemini-cli-jsonl", "copilot-cli", "claude-code"],
)
def test_convert_to_otel_keeps_the_agent_time(
    source: Path, tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    """A chat span lasts from the request to the response, and reads back that way: telemetry's
    agent time of the export is the original's (it was 23.9 s for 140.6 s, and 0 for 30 s)."""
    from agentlens.reviews.telemetry import trajectory_telemetry

    assert run_cli("convert", "--to", "otel", "-o", str(tmp_path), str(source)).code == 0  # type: ignore[attr-defined]
    (written,) = tmp_path.glob("*.otlp.json")
    (original,), (back,) = read_path(source), read_path(written)
    expected = trajectory_telemetry(original).time_s
    assert expected and trajectory_telemetry(back).time_s == pytest.approx(expected, abs=0.01)


LONG_SESSION = (
    FORMATS / "claude-code" / "marot-spotter" / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
)


def _full_history_spans(times: int, style: str) -> list[Any]:
    """The LLM spans an instrumented client records for a long real session said `times` times
    over: each input is the whole conversation before the response, as OpenInference's indexed
    keys or as GenAI's `gen_ai.input.messages` JSON (texts cut to 200 characters, so that it
    stays a few MB)."""
    from agentlens.formats._otel_spans import Span

    (session,) = read_path(LONG_SESSION)
    said: list[tuple[str, str]] = []
    for step in session.steps:
        if step.kind == "user":
            said.append(("user", step.text))
        elif step.kind in ("agent", "tool"):  # a response: its text or call, then the output
            said.append(("assistant", step.text or str(step.arguments)))
            said += [("tool", step.observation or "")] if step.kind == "tool" else []
    attrs: dict[str, Any] = {"openinference.span.kind": "LLM"}
    messages: list[dict[str, Any]] = []
    spans = []
    for i, (role, whole) in enumerate(said * times):
        text = whole[:200]
        if role == "assistant":  # the span of a response holds everything before it
            if style == "genai":
                attrs["gen_ai.input.messages"] = json.dumps(messages)
            spans.append(Span("t", str(i), None, "llm", i, dict(attrs), None))
        attrs[f"llm.input_messages.{i}.message.role"] = role
        attrs[f"llm.input_messages.{i}.message.content"] = text
        messages.append({"role": role, "parts": [{"type": "text", "content": text}]})
    return spans


@pytest.mark.parametrize("style", ["openinference", "genai"])
def test_new_user_texts_of_full_history_spans_take_linear_time(style: str) -> None:
    """Each span of a full-history capture used to have every earlier message decoded to learn
    that one is the assistant's: a session of N responses took time in N²."""
    from agentlens.formats._otel_spans import new_user_texts

    def seconds(spans: list[Any]) -> float:
        # the short session reads in under a millisecond: repeat it and keep the collector out,
        # or a clock tick or one collection in a loaded suite reads as a quadratic ratio
        runs = []
        gc.disable()
        try:
            for _ in range(5):
                start = time.process_time()
                for _ in range(20):
                    assert all(new_user_texts(span) == [] for span in spans[1:])
                runs.append(time.process_time() - start)
        finally:
            gc.enable()
        return min(runs)

    short, long = _full_history_spans(1, style), _full_history_spans(4, style)
    assert len(long) == 4 * len(short) > 200
    ratio = seconds(long) / seconds(short)
    assert ratio < 8, f"4x the responses took {ratio:.1f}x the time (linear: 4, quadratic: 16)"


@pytest.mark.parametrize(
    "source",
    [
        FORMATS / "mini-swe-agent-fixtures" / "github_issue.traj.json",  # no time; is_error None
        FORMATS / "claude-code" / "marot-spotter" / "tool_heavy.jsonl",
        FORMATS / "copilot-cli" / "events.jsonl",
        FORMATS
        / "codex"
        / "madshn-localpush"
        / "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl",  # a step untimed
    ],
    ids=["mini-swe-agent", "claude-code", "copilot-cli", "codex"],
)
def test_convert_to_otel_keeps_system_prompt_metadata_version_and_error_flags(
    source: Path, tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    """The export used to drop the system prompt, the metadata, the agent version and an
    unknown error flag (read back as "succeeded"), and gave a trace without timestamps times
    from 2023 that looked real; they read back as they were, and no time is made up."""
    assert run_cli("convert", "--to", "otel", "-o", str(tmp_path), str(source)).code == 0  # type: ignore[attr-defined]
    (written,) = tmp_path.glob("*.otlp.json")
    (original,), (back,) = read_path(source), read_path(written)
    system = [s.text for s in original.steps if s.kind == "system"]
    assert system and [s.text for s in back.steps if s.kind == "system"] == system
    assert back.agent.version == original.agent.version
    assert back.metadata == json.loads(json.dumps(original.metadata, default=str))
    assert [s.is_error for s in back.tool_steps] == [s.is_error for s in original.tool_steps]
    stamps = [s.timestamp for s in original.steps if s.timestamp is not None]
    for step in back.steps:  # a time read back is one of the original's, never one made up
        assert step.timestamp is None or any(
            abs((step.timestamp - real).total_seconds()) < 0.002 for real in stamps
        ), step
    if not stamps:
        doc = json.loads(written.read_text())
        spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
        assert max(int(s["endTimeUnixNano"]) for s in spans) < 10**9 * 3600  # 1970, not 2023


def test_otel_forced_on_another_agents_files_fails_each_file_by_name() -> None:
    """`--format otel` on Codex rollouts read 0 runs and no failure, so `inspect` said only "no
    trace files in <the file the user named>"; each file is now a failure saying why."""
    from agentlens.formats.stream import read_paths

    folder = FORMATS / "codex" / "madshn-localpush"
    result = read_paths([str(folder)], format="otel")
    files = sorted(folder.glob("*.jsonl"))
    assert files and not result.trajectories
    assert sorted(f.path for f in result.failures) == [str(f) for f in files]
    assert all("not an OTLP JSON export" in f.reason for f in result.failures)


ROUND_TRIP_FOLDERS = ("copilot-cli", "gemini-cli", "gemini-cli-jsonl", "grok-cli")
OTHER_FOLDERS = tuple(
    sorted({p.name for p in FORMATS.iterdir() if p.is_dir()} - set(ROUND_TRIP_FOLDERS))
)


def _traces_in(folders: tuple[str, ...]) -> list[Path]:
    """Every trace file of the folders (their sidecars and expected-output files are not)."""
    from fnmatch import fnmatch

    from tests.formats.test_all_shared_files import EXPECTED

    found = [p for folder in folders for p in sorted((FORMATS / folder).rglob("*")) if p.is_file()]
    rows = [(p, next(r for g, r in EXPECTED if fnmatch(str(p.relative_to(FORMATS.parent)), g)))
            for p in found]  # fmt: skip
    return [p for p, reader in rows if reader is not None]


def _step_facts(step: Any) -> tuple[Any, ...]:
    return (
        step.kind, step.text, step.tool_name, step.category, step.call_id, step.arguments,
        step.command, step.files, step.observation, step.is_error, step.usage, step.cost,
        step.model, step.timestamp, step.stored_stage, step.subtrajectory,
    )  # fmt: skip


def _shares_turn(steps: list[Any]) -> list[bool]:
    return [
        i > 0 and s.turn is not None and s.turn == steps[i - 1].turn for i, s in enumerate(steps)
    ]


def _through_otel(source: Path, tmp_path: Path, run_cli: Callable[..., Any]) -> list[Any]:
    assert run_cli("convert", "--to", "otel", "-o", str(tmp_path), str(source)).code == 0
    (written,) = tmp_path.glob("*.otlp.json")
    return read_path(written)


@pytest.mark.parametrize(
    "source", _traces_in(ROUND_TRIP_FOLDERS), ids=lambda p: str(p.relative_to(FORMATS))
)
def test_convert_to_otel_and_back_keeps_every_step(
    source: Path, tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    """Step by step, a run of an agent whose tool names only its own reader knows comes back
    from OTel as it was: category, command and files (Copilot's `view` read back as `other`),
    the messages after the last response (Gemini's "Request cancelled." was lost) and each
    step's own time (pushed a millisecond on, or to its turn's time)."""
    (original,), (back,) = read_path(source), _through_otel(source, tmp_path, run_cli)
    assert [_step_facts(s) for s in back.steps] == [_step_facts(s) for s in original.steps]
    assert _shares_turn(back.tool_steps) == _shares_turn(original.tool_steps)
    assert (back.id, back.task_id, back.task, back.model) == (
        original.id, original.task_id, original.task, original.model,
    )  # fmt: skip
    assert (back.agent, back.outcome) == (original.agent, original.outcome)
    assert back.metadata == json.loads(json.dumps(original.metadata, default=str))


@pytest.mark.parametrize(
    "source", _traces_in(OTHER_FOLDERS), ids=lambda p: str(p.relative_to(FORMATS))
)
def test_convert_to_otel_and_back_keeps_every_step_of_any_format(
    source: Path, tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    """The same, step by step, for every other format's traces: interleaved system and user
    messages kept their order, a task that was no user step did not become one, and a message's
    observation and error flag (a parse error given back) came back."""
    originals, backs = read_path(source), _through_otel(source, tmp_path, run_cli)
    assert [t.id for t in backs] == [t.id for t in originals]
    for original, back in zip(originals, backs, strict=True):
        _assert_same_steps(back, original)


def _assert_same_steps(back: Any, original: Any) -> None:
    """Step by step, and so each sub-agent, with the steps that started them."""
    assert [_step_facts(s) for s in back.steps] == [_step_facts(s) for s in original.steps]
    assert _shares_turn(back.tool_steps) == _shares_turn(original.tool_steps)
    assert (back.task, back.parent_id) == (original.task, original.parent_id)
    assert [s.id for s in back.subtrajectories] == [s.id for s in original.subtrajectories]
    for back_sub, original_sub in zip(back.subtrajectories, original.subtrajectories, strict=True):
        _assert_same_steps(back_sub, original_sub)


def test_the_round_trip_covers_every_trace_of_the_four_folders() -> None:
    assert {p.parent.name for p in _traces_in(ROUND_TRIP_FOLDERS)} == set(ROUND_TRIP_FOLDERS)


def _calls_answered_last_first(count: int) -> list[Any]:
    """One response asking for `count` calls, their tool spans in the reverse order."""
    from agentlens.formats._otel_spans import Span

    asked = [{"type": "tool_call", "id": f"c{i}", "name": "bash", "arguments": {}}
             for i in range(count)]  # fmt: skip
    output = json.dumps([{"role": "assistant", "parts": asked}])
    chat = {"gen_ai.operation.name": "chat", "gen_ai.output.messages": output}
    spans = [Span("t", "chat", None, "chat", 0, chat, None)]
    for i in reversed(range(count)):
        ran = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash",
               "gen_ai.tool.call.id": f"c{i}"}  # fmt: skip
        spans.append(Span("t", f"t{i}", None, "tool", count - i, ran, None))
    return spans


def test_tool_spans_find_their_calls_in_linear_time() -> None:
    """Found by review: each tool span looked for its call among all the calls still open, so
    one response of 30k calls answered last first took 34 s."""
    from agentlens.formats.otel import _Steps

    def seconds(spans: list[Any]) -> float:
        runs = []
        for _ in range(3):
            builder, start = _Steps(), time.process_time()
            builder.response(spans[0])
            for span in spans[1:]:
                builder.execution(span)
            runs.append(time.process_time() - start)
            assert all(s.call_id == f"c{i}" for i, s in enumerate(builder.steps))
        return min(runs)

    ratio = seconds(_calls_answered_last_first(8000)) / seconds(_calls_answered_last_first(2000))
    assert ratio < 8, f"4x the calls took {ratio:.1f}x the time (linear: 4, quadratic: 16)"
