"""What the simulated user sees of an agent turn (spec §4.2): the agent's messages, its tool calls
(arguments cut at 5,000 characters, results at 10,000), all code changes so far (60,000
characters per file, 150,000 in all) and up to five IDE errors per changed file
(`ide_errors`)."""

from __future__ import annotations

import orjson

from agentlens import redaction
from agentlens.scenarios.ide_errors import IdeReport
from agentlens.scenarios.turns import AgentTurn
from agentlens.trajectory import Step

TOOL_ARGUMENT_CHARS = 5_000
TOOL_RESULT_CHARS = 10_000
DIFF_FILE_CHARS = 60_000
DIFF_TOTAL_CHARS = 150_000
FILE_HEADER = "diff --git "


def cut(text: str, limit: int) -> str:
    """`text` cut at `limit` characters, or past a redaction mark the cut would split, its
    secrets masked first (`redaction.masked_head`): a request is masked only as it is sent, and
    by then a key cut short is too short for a detector to know."""
    head = redaction.masked_head(text, limit)
    if len(head) >= len(text):
        return head
    return f"{head}\n[... {len(text) - len(head)} more characters cut]"


def turn_view(turn: AgentTurn, diff: str, ide: IdeReport | None = None) -> str:
    """The simulator's next prompt: this turn of the agent, the diff since the base, and the IDE
    errors of the changed files (none when IDE errors are off)."""
    parts = [_step_view(step) for step in turn.steps]
    parts = [p for p in parts if p]
    if turn.reply and not any(s.kind == "agent" and s.text == turn.reply for s in turn.steps):
        parts.append(f"<agent_message>\n{turn.reply}\n</agent_message>")
    body = "\n".join(parts) or "(the agent did nothing this turn)"
    view = f"<agent_turn>\n{body}\n</agent_turn>\n<code_diffs>\n{cut_diff(diff)}\n</code_diffs>"
    if ide is None:
        return view
    return f"{view}\n<ide_errors>\n{ide.render()}\n</ide_errors>"


def _step_view(step: Step) -> str:
    if step.kind == "agent":
        return f"<agent_message>\n{step.text}\n</agent_message>" if step.text.strip() else ""
    if step.kind != "tool":
        return ""
    arguments = step.command if step.command is not None else _json(step.arguments)
    result = step.observation if step.observation is not None else "(no result)"
    return (
        f"<tool_call name={_json(step.tool_name or 'tool')}>\n"
        f"{cut(arguments, TOOL_ARGUMENT_CHARS)}\n</tool_call>\n"
        f"<tool_result error={_json(bool(step.is_error))}>\n"
        f"{cut(result, TOOL_RESULT_CHARS)}\n</tool_result>"
    )


def cut_diff(diff: str) -> str:
    """Each file's part cut at `DIFF_FILE_CHARS`; files after `DIFF_TOTAL_CHARS` are only counted."""
    if not diff.strip():
        return "(no changes yet)"
    shown: list[str] = []
    total, left_out = 0, 0
    for chunk in _file_chunks(diff):
        piece = cut(chunk, DIFF_FILE_CHARS)
        if total + len(piece) > DIFF_TOTAL_CHARS:
            left_out += 1
            continue
        shown.append(piece)
        total += len(piece)
    if left_out:
        shown.append(f"[... {left_out} more changed files cut]")
    return "\n".join(shown)


def _file_chunks(diff: str) -> list[str]:
    chunks: list[list[str]] = []
    for line in diff.splitlines(keepends=True):
        if line.startswith(FILE_HEADER) or not chunks:
            chunks.append([line])
        else:
            chunks[-1].append(line)
    return ["".join(lines).rstrip("\n") for lines in chunks]


def _json(value: object) -> str:
    return orjson.dumps(value, default=str).decode()
