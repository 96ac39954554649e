"""A trace saved by a Windows tool (a UTF-8 byte order mark, CRLF line ends) reads as the file
without them: detection already looks past a BOM, and review documents and scenario folds
accept one too."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from agentlens.formats import read_path
from tests.conftest import DATA

BOM = b"\xef\xbb\xbf"
SAMPLES = [
    "formats/gemini-cli-jsonl/session.jsonl",
    "formats/copilot-cli/events.jsonl",
    "formats/gemini-cli/session-2025-10-27T19-55-981c87cb.json",
    "formats/claude-code/marot-spotter/short.jsonl",
    "formats/codex/madshn-localpush/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl",
    "formats/codex/jnarowski-agentcmd/stream/stream-output-5.jsonl",
    "formats/openhands/sdk-fixtures/goal_events.jsonl",
    "formats/openhands/legacy-replay-trajs/basic_interactions.json",
    "formats/swe-agent/function_calling_simple.traj",
    "formats/mini-swe-agent-fixtures/local.traj.json",
    "formats/atif-harbor-golden/tests/golden/terminus_2/hello-world-timeout.trajectory.json",
    "formats/inspect-ai/log_tool_call_error.json",
    "formats/openai-messages/openhands-sdk-llm-fixtures/fncall-llm-message.json",
]


def _steps(path: Path) -> list[bytes]:
    return [msgspec.json.encode(t.steps) for t in read_path(path)]


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.split("/")[1])
def test_a_bom_and_crlf_line_ends_read_as_the_plain_file(sample: str, tmp_path: Path) -> None:
    original = DATA / sample
    copy = tmp_path / original.name
    copy.write_bytes(BOM + original.read_bytes().replace(b"\n", b"\r\n"))
    assert _steps(copy) == _steps(original)
