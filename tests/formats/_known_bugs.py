"""Concrete mutants of the fuzz samples: crashes found by `test_fuzz_readers` and fixed (kept as
regressions) and crashes still open in readers another engineer is rewriting (strict xfails).

A mutant is a list of edits (position, operation, replacement) applied to a real sample by
`_mutate.edit`; ids read `<reader>:<function that crashed>:<exception>`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.formats import _mutate

ATIF = "formats/atif-harbor-golden/tests/golden/terminus_2/hello-world-timeout.trajectory.json"
ATIF_LIKE = "formats/atif-like-openagents/trajectory.json"
ATIF_REFS = "formats/atif-harbor-golden/tests/golden/terminus_2/hello-world-context-summarization.trajectory.json"
BENCH = "agentlens-bench-dev/trajectories/scikit-learn__scikit-learn-12585/scikit-learn__scikit-learn-12585-logs-gemini-2.5-pro-fail-24945658083_pta.json"
CLAUDE = "formats/claude-code/marot-spotter/short.jsonl"
CODEX_EXEC = "formats/codex/jnarowski-agentcmd/stream/stream-output-5.jsonl"
CODEX_ROLLOUT = "formats/codex/madshn-localpush/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"
GEMINI = "formats/gemini-cli/session-2025-10-27T19-55-981c87cb.json"
INSPECT_EVAL = "formats/inspect-ai/log_read_sample.eval"
INSPECT_JSON = "formats/inspect-ai/log_tool_call_error.json"
LITELLM = "formats/openai-messages/openhands-sdk-llm-fixtures/fncall-llm-message.json"
LITELLM_LOG = "formats/openai-messages/openhands-sdk-llm-fixtures/litellm_proxy__anthropic__claude-sonnet-4-20250514-1757015046.707.json"
MINI_SWEBV = "mini-swe-agent-swebv/trajs/django__django-11099/django__django-11099.traj.json"
OH_EVAL = "formats/openhands/benchmarks-v1-output/openagentsafety_gpt-4o_output.jsonl"
OH_EVAL_V0 = "formats/openhands/eval-output/multi_swe_bench_output.jsonl"
OH_EVENTS = "formats/openhands/legacy-replay-trajs/basic_interactions.json"
OH_V1 = "formats/openhands/sdk-fixtures/goal_events.jsonl"
SWE_FC = "formats/swe-agent/function_calling_simple.traj"
SWE_JAVA = (
    "swe-agent-java/20240825_SWE-agent_doubao-pro-128k/trajs/googlecontainertools__jib-4035.traj"
)


@dataclass(frozen=True)
class Mutant:
    id: str
    sample: str
    edits: tuple[tuple[tuple[Any, ...], str, Any], ...]
    lenient: bool

    def data(self, parsed: _mutate.Parsed) -> bytes:
        value = parsed.value
        for position, op, replacement in self.edits:
            value, _ = _mutate.edit(value, position, op, replacement)
        return _mutate.serialise(parsed, value)


@dataclass(frozen=True)
class KnownBug(Mutant):
    reader: str
    error: type[Exception]
    where: tuple[str, str]  # (file name, function) of the innermost traceback frame
    reason: str  # file:line at the time it was found, and the exception

    def mark(self) -> pytest.MarkDecorator:
        return pytest.mark.xfail(strict=True, raises=self.error, reason=self.reason)


# Crashes fixed (the first 22 in this task; swe-agent and mini-swe-agent ones by their rewrite;
# the codex, inspect-ai and openhands ones by the ingest-speed rework of those readers).
FIXED: list[Mutant] = [
    Mutant(
        "agentlens-bench:lambda:AttributeError",
        BENCH,
        ((("states", "state_0"), "replace", True),),
        True,
    ),
    Mutant(
        "agentlens-bench:_step:AttributeError",
        BENCH,
        ((("states", "state_1", "log_entry"), "duplicate", None),),
        True,
    ),
    Mutant(
        "agentlens-bench:_task_step:AttributeError", BENCH, ((("metadata",), "replace", -1),), True
    ),
    Mutant(
        "agentlens-bench:_step:TypeError",
        BENCH,
        ((("states", "state_1", "tool_used"), "duplicate", None),),
        True,
    ),
    Mutant("agentlens-bench:read:TypeError", BENCH, ((("initial_state",), "replace", []),), False),
    Mutant(
        "atif:dictcomp:AttributeError",
        ATIF,
        ((("steps", 1, "observation", "results"), "duplicate", None),),
        True,
    ),
    Mutant(
        "atif:_convert:AttributeError", ATIF, ((("steps", 2, "observation"), "replace", 1.5),), True
    ),
    Mutant(
        "atif:_sub_ref:AttributeError",
        ATIF,
        (
            (("steps", 3, "observation", "results"), "duplicate", None),
            (("steps", 3, "tool_calls"), "duplicate", None),
        ),
        True,
    ),
    Mutant("atif:to_trajectory:AttributeError", ATIF, ((("agent",), "replace", -1),), True),
    Mutant(
        "atif:setcomp:TypeError",
        ATIF_LIKE,
        ((("steps", 6, "tool_calls", 1, "id"), "replace", []),),
        True,
    ),
    Mutant(
        "atif:_match:TypeError",
        ATIF,
        ((("steps", 2, "observation", "results"), "replace", -1),),
        True,
    ),
    Mutant("atif:_step:TypeError", ATIF_LIKE, ((("steps", 0, "source"), "replace", {}),), True),
    Mutant(
        "claude-code:update:TypeError",
        CLAUDE,
        (((9, "message", "model"), "duplicate", None),),
        True,
    ),
    Mutant(
        "claude-code:_tool_use:TypeError",
        CLAUDE,
        (((9, "message", "content", 0, "id"), "duplicate", None),),
        True,
    ),
    Mutant(
        "claude-code:_usage:TypeError",
        CLAUDE,
        (((4, "message", "usage", "input_tokens"), "duplicate", None),),
        False,
    ),
    Mutant(
        "gemini-cli:_result:AttributeError",
        GEMINI,
        ((("messages", 8, "toolCalls", 0, "result", 0), "replace", 1.5),),
        True,
    ),
    Mutant(
        "gemini-cli:_tool_step:AttributeError",
        GEMINI,
        ((("messages", 1, "toolCalls"), "duplicate", None),),
        True,
    ),
    Mutant(
        "gemini-cli:_message_steps:TypeError",
        GEMINI,
        ((("messages", 3, "thoughts"), "replace", 1180591620717411303424),),
        True,
    ),
    Mutant(
        "gemini-cli:_result:TypeError",
        GEMINI,
        ((("messages", 14, "toolCalls", 0, "result"), "replace", 1180591620717411303424),),
        True,
    ),
    Mutant(
        "gemini-cli:_usage:TypeError",
        GEMINI,
        ((("messages", 8, "tokens", "input"), "duplicate", None),),
        False,
    ),
    Mutant(
        "gemini-cli:_usage:ValueError",
        GEMINI,
        ((("messages", 7, "tokens", "input"), "replace", "2024-13-45T99:99:99Z"),),
        True,
    ),
    Mutant(
        "openai-messages:messages_to_steps:TypeError",
        LITELLM,
        (((6, "tool_calls"), "replace", -1),),
        True,
    ),
    Mutant(
        "mini-swe-agent:_created:OverflowError",
        MINI_SWEBV,
        ((("messages", 36, "extra", "response", "created"), "replace", -1e308),),
        False,
    ),
    Mutant(
        "mini-swe-agent:usage_from_response:TypeError",
        MINI_SWEBV,
        ((("messages", 6, "extra", "response", "usage", "prompt_tokens"), "duplicate", None),),
        False,
    ),
    Mutant(
        "mini-swe-agent:usage_from_response:ValueError",
        MINI_SWEBV,
        (
            (
                ("messages", 38, "extra", "response", "usage", "prompt_tokens"),
                "replace",
                "2024-13-45T99:99:99Z",
            ),
        ),
        True,
    ),
    Mutant(
        "swe-agent:dictcomp:TypeError",
        SWE_FC,
        ((("history", 9, "tool_call_ids"), "replace", -1),),
        True,
    ),
    Mutant(
        "swe-agent:_from_history:TypeError",
        SWE_FC,
        ((("history", 4, "tool_calls", 0, "id"), "duplicate", None),),
        False,
    ),
    Mutant(
        "swe-agent:_usage:TypeError",
        SWE_JAVA,
        ((("info", "model_stats", "tokens_sent"), "duplicate", None),),
        False,
    ),
    Mutant(
        "swe-agent:_usage:ValueError",
        SWE_JAVA,
        ((("info", "model_stats", "tokens_sent"), "replace", "2024-13-45T99:99:99Z"),),
        True,
    ),
    Mutant(
        "codex-exec:__add__:TypeError",
        CODEX_EXEC,
        (
            ((3, "item"), "delete", None),
            ((7,), "duplicate", None),
            ((7, "usage", "output_tokens"), "duplicate", None),
        ),
        False,
    ),
    Mutant(
        "codex-rollout:listcomp:AttributeError",
        CODEX_ROLLOUT,
        (((14, "payload", "summary", 0), "replace", 0),),
        True,
    ),
    Mutant(
        "codex-rollout:_call:TypeError",
        CODEX_ROLLOUT,
        (((17, "payload", "call_id"), "duplicate", None),),
        True,
    ),
    Mutant(
        "codex-rollout:_item:TypeError",
        CODEX_ROLLOUT,
        (((14, "payload", "summary"), "replace", -1),),
        False,
    ),
    Mutant(
        "codex-rollout:_message:TypeError",
        CODEX_ROLLOUT,
        (((1, "payload", "content"), "replace", 1.5),),
        True,
    ),
    Mutant(
        "inspect-ai:dictcomp:AttributeError",
        INSPECT_EVAL,
        ((("samples/1_epoch_1.json", "scores", "match"), "duplicate", None),),
        True,
    ),
    Mutant(
        "inspect-ai:_steps:AttributeError",
        INSPECT_JSON,
        ((("samples", 0, "messages", 8), "replace", 0),),
        True,
    ),
    Mutant(
        "inspect-ai:_trajectory:AttributeError",
        INSPECT_EVAL,
        ((("header.json",), "replace", 0),),
        True,
    ),
    Mutant(
        "inspect-ai:listcomp:TypeError",
        INSPECT_EVAL,
        ((("samples/1_epoch_1.json", "events", 8, "span_id"), "duplicate", None),),
        False,
    ),
    Mutant(
        "inspect-ai:setcomp:TypeError",
        INSPECT_EVAL,
        ((("samples/1_epoch_1.json", "events", 13, "id"), "duplicate", None),),
        True,
    ),
    Mutant(
        "inspect-ai:_steps:TypeError",
        INSPECT_JSON,
        ((("samples", 0, "messages"), "replace", -1),),
        False,
    ),
    Mutant(
        "openhands-events:_call_arguments:AttributeError",
        OH_EVENTS,
        (((5, "tool_call_metadata", "model_response", "choices", 0, "message"), "replace", True),),
        True,
    ),
    Mutant(
        "openhands-events:usage_from_response:TypeError",
        OH_EVENTS,
        (
            (
                (5, "tool_call_metadata", "model_response", "usage", "prompt_tokens"),
                "duplicate",
                None,
            ),
        ),
        False,
    ),
    Mutant(
        "openhands-events:_call_arguments:TypeError",
        OH_EVENTS,
        (((5, "tool_call_metadata", "model_response", "choices"), "replace", -1),),
        False,
    ),
    Mutant(
        "openhands-events:usage_from_response:ValueError",
        OH_EVENTS,
        (((5, "tool_call_metadata", "model_response", "usage", "prompt_tokens"), "replace", "x"),),
        False,
    ),
    Mutant(
        "openhands-v1:text_of:TypeError",
        OH_V1,
        (((8, "thought", 0, "text"), "replace", -1),),
        False,
    ),
    Mutant(
        "openhands-v1:usage_from_metrics:TypeError",
        OH_V1,
        (
            (
                (
                    1,
                    "value",
                    "usage_to_metrics",
                    "default",
                    "accumulated_token_usage",
                    "prompt_tokens",
                ),
                "duplicate",
                None,
            ),
        ),
        True,
    ),
    Mutant(
        "openhands-v1:_stats:TypeError",
        OH_V1,
        (((1, "value", "usage_to_metrics", "default", "accumulated_cost"), "duplicate", None),),
        False,
    ),
    Mutant(
        "openhands-v1:usage_from_metrics:ValueError",
        OH_V1,
        (
            (
                (
                    7,
                    "value",
                    "usage_to_metrics",
                    "default",
                    "accumulated_token_usage",
                    "prompt_tokens",
                ),
                "replace",
                "x",
            ),
        ),
        False,
    ),
    Mutant(
        "openhands-v1:_stats:ValueError",
        OH_V1,
        (((1, "value", "usage_to_metrics", "default", "accumulated_cost"), "replace", "x"),),
        True,
    ),
    Mutant(
        "inspect-ai:_trajectory:AttributeError",
        INSPECT_JSON,
        ((("eval", "packages"), "replace", 1.5),),
        False,
    ),
    Mutant(
        "agentlens-bench:_step-fast-path:AttributeError",
        BENCH,
        ((("states", "state_1", "log_entry", "args"), "duplicate", None),),
        False,
    ),
]

# Found while typing the readers' output (no fuzz sample had V0 `llm_metrics`): an
# `accumulated_token_usage` that is an array crashed the per-step model look-up.
FIXED.append(
    Mutant(
        "openhands-eval:_add_usage:AttributeError",
        OH_EVAL_V0,
        (((0, "history", 4, "llm_metrics", "accumulated_token_usage"), "duplicate", None),),
        False,
    )
)
# Found by a long fuzz run (2026-12-01): a run's own `metrics` token count that is an array.
FIXED.append(
    Mutant(
        "openhands-eval:reported_usage:TypeError",
        OH_EVAL_V0,
        (((2, "metrics", "accumulated_token_usage", "cache_read_tokens"), "duplicate", None),),
        False,
    )
)
FIXED.append(  # and an observation's `extras.metadata` that is an array
    Mutant(
        "openhands-eval:_observation_error:AttributeError",
        OH_EVAL_V0,
        (((0, "history", 5, "extras", "metadata"), "duplicate", None),),
        False,
    )
)

# Found by the coverage-guided campaign (atheris, 2026-12-02).
FIXED += [
    Mutant(  # a line payload with invalid UTF-8, which msgspec checks only when decoding it
        "codex-rollout:feed:DecodeError",
        CODEX_ROLLOUT,
        (((1, "payload", "content", 0, "text"), "replace", "\udc98"),),
        False,
    ),
    Mutant(
        "codex-exec:_file_change_step:TypeError",
        CODEX_EXEC,
        (((4, "item"), "replace", {"type": "file_change", "changes": 1.5}),),
        False,
    ),
    Mutant(  # `attachments` an array while a message refers to one
        "inspect-ai:_resolve:AttributeError",
        INSPECT_EVAL,
        (
            (
                ("samples/1_epoch_1.json", "messages", 0, "content"),
                "replace",
                "attachment://dfedc191e05d9d04e0c236656454a610",
            ),
            (("samples/1_epoch_1.json", "attachments"), "duplicate", None),
        ),
        True,
    ),
    Mutant(
        "openai-messages:_tokens:TypeError",
        LITELLM_LOG,
        ((("response", "usage", "prompt_tokens"), "duplicate", None),),
        False,
    ),
    Mutant(
        "openai-messages:_tokens:ValueError",
        LITELLM_LOG,
        ((("response", "usage", "prompt_tokens"), "replace", "user"),),
        False,
    ),
    Mutant(  # seen while fixing the two above, in the same function
        "openai-messages:_litellm:TypeError",
        LITELLM_LOG,
        ((("response", "choices"), "replace", -1),),
        False,
    ),
    Mutant(
        "openai-messages:_litellm:KeyError",
        LITELLM_LOG,
        ((("response", "choices"), "replace", {"a": 1}),),
        False,
    ),
    Mutant(  # the message named an unknown field as written, newline and all: two lines
        "atif:read:multi-line-message",
        ATIF,
        ((("agent",), "replace", {"name": "terminus-2", "version": "2", "a\nb": 1}),),
        False,
    ),
    Mutant(  # a document that is a number, read as --format openai-messages
        "openai-messages:read:TypeError", LITELLM, (((), "replace", -1),), False
    ),
    Mutant(  # a sub-agent file name too long for the file system (not even read_path caught it)
        "atif:_ref_paths:OSError",
        ATIF_REFS,
        (
            (
                ("steps", 4, "observation", "results", 0, "subagent_trajectory_ref", 0),
                "replace",
                {"trajectory_path": "x" * 300},
            ),
        ),
        False,
    ),
]

# Open: the fuzz run skips these (matched by reader, exception and where) and keeps searching.
KNOWN: list[KnownBug] = []

# Samples whose reader still overflows the stack (or crashes) on 1000-deep JSON values, for
# `test_hostile_text.test_reader_survives_deep_nesting`: sample -> (exception, where first seen).
DEEP_BUGS: dict[str, tuple[type[Exception] | tuple[type[Exception], ...], str]] = {}


@dataclass(frozen=True)
class Untyped(Mutant):
    reason: str  # what msgspec says when the output is validated against the model


# Wrong-typed fields fixed (kept as regressions; every reader's output must fit the model): ids, versions and
# model names given as numbers are read as their str(), integral float token counts as ints;
# bools, arrays and objects there, and fractional or bool token counts, are one-line SchemaErrors.
# `reason` is what msgspec said of the output before the fix.
TYPED_FIXED: list[Untyped] = [
    Untyped(
        "codex-exec:$[i].id",
        CODEX_EXEC,
        (((0, "thread_id"), "replace", 1.5),),
        False,
        "Expected `str`, got `float`",
    ),
    Untyped(
        "codex-exec:$[i].steps[i].call_id",
        CODEX_EXEC,
        (((4, "item", "id"), "duplicate", None),),
        True,
        "Expected `str | null`, got `array`",
    ),
    Untyped(
        "codex-exec:$[i].steps[i].observation",
        CODEX_EXEC,
        (((4, "item", "aggregated_output"), "replace", True),),
        True,
        "Expected `str | null`, got `bool`",
    ),
    Untyped(
        "codex-exec:$[i].steps[i].usage.cached_tokens",
        CODEX_EXEC,
        (((7, "usage", "cached_input_tokens"), "replace", 1.5),),
        False,
        "Expected `int`, got `float`",
    ),
    Untyped(
        "codex-exec:$[i].steps[i].usage.completion_tokens",
        CODEX_EXEC,
        (((7, "usage", "output_tokens"), "replace", True),),
        False,
        "Expected `int`, got `bool`",
    ),
    Untyped(
        "codex-exec:$[i].steps[i].usage.prompt_tokens",
        CODEX_EXEC,
        (((7, "usage", "input_tokens"), "replace", 1180591620717411303424),),
        False,
        "Expected `int`, got `float`",
    ),
    Untyped(
        "codex-rollout:$[i].agent.version",
        CODEX_ROLLOUT,
        (((0, "payload", "cli_version"), "duplicate", None),),
        True,
        "Expected `str | null`, got `array`",
    ),
    Untyped(
        "codex-rollout:$[i].model",
        CODEX_ROLLOUT,
        (((11, "payload", "model"), "duplicate", None),),
        True,
        "Expected `str | null`, got `array`",
    ),
    Untyped(
        "codex-rollout:$[i].steps[i].call_id",
        CODEX_ROLLOUT,
        (((17, "payload", "call_id"), "replace", 1180591620717411303424),),
        True,
        "Expected `str | null`, got `float`",
    ),
    Untyped(
        "codex-rollout:$[i].steps[i].usage.prompt_tokens",
        CODEX_ROLLOUT,
        (((18, "payload", "info", "total_token_usage", "input_tokens"), "replace", 1.5),),
        False,
        "Expected `int`, got `float`",
    ),
    Untyped(
        "inspect-ai:$[i].agent.version",
        INSPECT_JSON,
        ((("eval", "packages", "inspect_ai"), "replace", False),),
        True,
        "Expected `str | null`, got `bool`",
    ),
    Untyped(
        "inspect-ai:$[i].model",
        INSPECT_JSON,
        ((("eval", "model"), "replace", -1e308),),
        False,
        "Expected `str | null`, got `float`",
    ),
    Untyped(
        "inspect-ai:$[i].source.index",
        INSPECT_EVAL,
        ((("samples/1_epoch_1.json", "id"), "replace", False),),
        True,
        "Expected `int | null`, got `bool`",
    ),
    Untyped(
        "inspect-ai:$[i].steps[i].call_id",
        INSPECT_JSON,
        ((("samples", 0, "messages", 9, "tool_call_id"), "duplicate", None),),
        True,
        "Expected `str | null`, got `array`",
    ),
    Untyped(
        "inspect-ai:$[i].steps[i].model",
        INSPECT_EVAL,
        ((("samples/1_epoch_1.json", "messages", 2, "model"), "duplicate", None),),
        True,
        "Expected `str | null`, got `array`",
    ),
    Untyped(
        "inspect-ai:$[i].steps[i].usage.completion_tokens",
        INSPECT_EVAL,
        (
            (
                ("samples/1_epoch_1.json", "events", 8, "output", "usage", "output_tokens"),
                "replace",
                -1e308,
            ),
        ),
        False,
        "Expected `int`, got `float`",
    ),
    Untyped(
        "mini-swe-agent:$[i].agent.version",
        MINI_SWEBV,
        ((("info", "mini_version"), "replace", -1),),
        True,
        "Expected `str | null`, got `int`",
    ),
    Untyped(
        "mini-swe-agent:$[i].steps[i].model",
        MINI_SWEBV,
        ((("messages", 38, "extra", "response", "model"), "duplicate", None),),
        True,
        "Expected `str | null`, got `array`",
    ),
    Untyped(
        "openhands-eval:$[i].steps[i].call_id",
        OH_EVAL,
        (((0, "history", 12, "tool_call_id"), "replace", 0),),
        True,
        "Expected `str | null`, got `int`",
    ),
    Untyped(
        "openhands-events:$[i].steps[i].call_id",
        OH_EVENTS,
        (((5, "tool_call_metadata", "tool_call_id"), "duplicate", None),),
        True,
        "Expected `str | null`, got `array`",
    ),
    Untyped(
        "openhands-events:$[i].steps[i].model",
        OH_EVENTS,
        (((5, "tool_call_metadata", "model_response", "model"), "replace", True),),
        False,
        "Expected `str | null`, got `bool`",
    ),
    Untyped(
        "openhands-v1:$[i].steps[i].call_id",
        OH_V1,
        (((3, "tool_call_id"), "duplicate", None),),
        True,
        "Expected `str | null`, got `array`",
    ),
    Untyped(
        "swe-agent:$[i].steps[i].call_id",
        SWE_FC,
        ((("history", 2, "tool_calls", 0, "id"), "replace", -1),),
        True,
        "Expected `str | null`, got `int`",
    ),
    Untyped(
        "swe-agent:$[i].steps[i].observation",
        SWE_JAVA,
        ((("trajectory", 0, "observation"), "replace", False),),
        True,
        "Expected `str | null`, got `bool`",
    ),
]
