"""Reader registry: name -> dotted path, imported lazily; detection asks each reader in turn."""

from __future__ import annotations

import importlib
from pathlib import Path

from agentlens.errors import ConfigError, UnknownFormatError
from agentlens.formats._lookalikes import lookalike
from agentlens.seams import TraceReader

HEAD_BYTES = 65536
LOOKALIKE_SUFFIXES = {".jsonl", ".json", ".ndjson"}

# Order matters only where two readers could both claim a file: more specific formats first.
READERS: dict[str, str] = {
    "agentlens-bench": "agentlens.formats.agentlens_bench:AgentLensBenchReader",
    "gemini-cli": "agentlens.formats.gemini_cli:GeminiCliReader",
    "otel": "agentlens.formats.otel:OtelReader",
    "gemini-cli-jsonl": "agentlens.formats.gemini_cli_jsonl:GeminiCliJsonlReader",
    "copilot-cli": "agentlens.formats.copilot_cli:CopilotCliReader",
    "grok-cli": "agentlens.formats.grok_cli:GrokCliReader",
    "agentlens-jsonl": "agentlens.formats.jsonl:JsonlReader",
    "atif": "agentlens.formats.atif:AtifReader",
    "claude-code": "agentlens.formats.claude_code:ClaudeCodeReader",
    "codex-rollout": "agentlens.formats.codex_rollout:CodexRolloutReader",
    "codex-exec": "agentlens.formats.codex_exec:CodexExecReader",
    "inspect-ai": "agentlens.formats.inspect_ai:InspectAiReader",
    "openhands-events": "agentlens.formats.openhands_events:OpenHandsEventsReader",
    "openhands-eval": "agentlens.formats.openhands_eval:OpenHandsEvalReader",
    "openhands-v1": "agentlens.formats.openhands_v1:OpenHandsV1Reader",
    "swe-agent": "agentlens.formats.swe_agent:SweAgentReader",
    "mini-swe-agent": "agentlens.formats.mini_swe_agent:MiniSweAgentReader",
    # Keep last: a bare list of {role, content} is the least specific shape.
    "openai-messages": "agentlens.formats.openai_messages:OpenAIMessagesReader",
}

# What each reader takes, for `agentlens formats`: the agent (or tool) and the file's shape.
DESCRIPTIONS: dict[str, str] = {
    "agentlens-bench": "AgentLens-Bench / swe-trace-sdk: .json with initial_state",
    "gemini-cli": "Gemini CLI session (2025): .json with sessionId, projectHash",
    "otel": "OpenTelemetry GenAI / OpenInference spans: OTLP .json, .jsonl",
    "gemini-cli-jsonl": "Gemini CLI session log (2026): .jsonl with $set patches",
    "copilot-cli": "GitHub Copilot CLI: events.jsonl",
    "grok-cli": "Grok CLI session folder: updates.jsonl",
    "agentlens-jsonl": "AgentLens canonical JSONL (`convert --to jsonl`): .jsonl",
    "atif": "ATIF v1.0 - v1.8: .json with schema_version ATIF-v...",
    "claude-code": "Claude Code session or -p stream-json output: .jsonl",
    "codex-rollout": "Codex CLI rollout: .jsonl",
    "codex-exec": "Codex CLI `codex exec --json` output: .jsonl",
    "inspect-ai": "Inspect AI log: .eval zip or .json",
    "openhands-events": "OpenHands V0 events: .json list",
    "openhands-eval": "OpenHands eval output.jsonl, one run a line",
    "openhands-v1": "OpenHands V1 SDK events: .jsonl",
    "swe-agent": "SWE-agent 2024 v0.x and v1.x: .traj",
    "mini-swe-agent": "mini-swe-agent (bare list, -1, -1.1): .json",
    "openai-messages": "OpenAI messages, litellm logs, Harbor *.traces.json: .json",
}


UTF8_BOM = b"\xef\xbb\xbf"
"""Written first by some Windows tools; JSON may carry one, and it says nothing (RFC 8259 §8.1)."""


def get_reader(name: str) -> type[TraceReader]:
    """Return the reader class registered as `name`, or imported from a `module:Class` path."""
    target = READERS.get(name, name)
    if ":" not in target:
        known = ", ".join(sorted(READERS))
        raise ConfigError(f"unknown format '{name}'; known formats: {known}")
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def detect(path: Path, head: bytes) -> type[TraceReader]:
    """Pick the reader for a file from its name and first bytes. A known look-alike (a Qwen Code
    log shaped like Claude Code's) is named as such rather than claimed by the wrong reader."""
    head = head.removeprefix(UTF8_BOM)
    if path.suffix in LOOKALIKE_SUFFIXES and (what := lookalike(head)) is not None:
        error = UnknownFormatError(path, what)
        error.telltale = "a session log"
        raise error
    for name in READERS:
        reader = get_reader(name)
        if reader.handles_location(path) and reader.handles_bytes(head):
            return reader
    raise UnknownFormatError(path, _why_unknown(head))


def _why_unknown(head: bytes) -> str:
    if not head.strip():
        return "empty file"
    if b"\x00" in head[:4096] and not head.startswith(b"PK\x03\x04"):
        return "binary content, not a trace"
    if b'"merged_state_' in head[:256]:
        return "a merged PTA reference, not a trajectory (pass it to `agentlens score --reference`)"
    return "not a known trace format (see `agentlens formats`)"
