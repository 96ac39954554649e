"""`codex exec --json` event streams: `thread.started`, `turn.*`, `item.started` / `item.completed`.

Only completed items become steps (`item.started` is repeated by its completion). Reasoning text
becomes the `text` of the next step. The stream does not mark model-response boundaries inside a
turn, so `Step.turn` is the exec turn and `turn.completed.usage` (per turn, not cumulative) goes
on the turn's first step.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from agentlens.formats._json import ReadGuard, ShapeError, count, head_text, iter_jsonl
from agentlens.formats._reader_base import SuffixReader
from agentlens.formats._steps import classify
from agentlens.formats._typed_json import listed, scalar_text
from agentlens.trajectory import Agent, Source, Step, ToolCategory, Trajectory, Usage

FIRST_EVENT = re.compile(r'^\{\s*"type"\s*:\s*"(?:thread\.started|turn\.started|item\.\w+)"')
SHELLS = {"bash", "sh", "zsh"}
USAGE_KEYS = ("input_tokens", "output_tokens", "cached_input_tokens")
SHLEX_WORD = re.compile(r"[^ \t\r\n]+")  # shlex splits on exactly these four
SINGLE_QUOTED_WRAPPER = re.compile(
    r"[ \t\r\n]*(?:[^ \t\r\n'\"\\]*/)?(?:bash|sh|zsh)[ \t\r\n]+-l?c[ \t\r\n]+'([^']*)'[ \t\r\n]*"
)


class CodexExecReader(SuffixReader):
    name: ClassVar[str] = "codex-exec"
    suffixes: ClassVar[tuple[str, ...]] = (".jsonl",)

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        return bool(FIRST_EVENT.match(head_text(head)))

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        with ReadGuard(path, self.name):
            trajectory = self._trajectory(path, data)
        yield trajectory

    def _trajectory(self, path: Path, data: bytes) -> Trajectory:
        steps: list[Step] = []
        firsts: dict[int, Step] = {}  # turn -> its first step, which carries the turn's usage
        pending: list[str] = []
        errors: list[Any] = []
        reported: Usage | None = None
        thread_id, turn = None, -1
        for _, event in iter_jsonl(path, data, self.name):
            kind = event.get("type") if isinstance(event, dict) else None
            if kind == "thread.started":
                thread_id = event.get("thread_id")
                if type(thread_id) is not str:
                    thread_id = scalar_text(thread_id, "thread.started thread_id")
            elif kind == "turn.started":
                turn += 1
            elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
                usage = _usage(event["usage"], turn)
                if turn in firsts:
                    firsts[turn].usage = usage
                reported = usage if reported is None else reported + usage
            elif kind in ("turn.failed", "error"):
                errors.append(event)
            elif kind == "item.completed" and isinstance(event.get("item"), dict):
                step = _item_step(event["item"], pending)
                if step is not None:
                    step.index, step.turn = len(steps), turn
                    steps.append(step)
                    firsts.setdefault(turn, step)
        return Trajectory(
            id=thread_id or path.stem,
            agent=Agent(name="codex"),
            source=Source(format=self.name, path=str(path)),
            steps=steps,
            reported_usage=reported,
            metadata={"errors": errors} if errors else {},
        )


def _item_step(item: dict[str, Any], pending: list[str]) -> Step | None:
    kind = str(item.get("type"))
    if kind == "reasoning":
        pending.append(str(item.get("text") or ""))
        return None
    text = "\n\n".join(pending)
    pending.clear()
    if kind == "agent_message":
        return Step(
            index=0, kind="agent", text=f"{text}\n\n{item.get('text') or ''}".strip(), raw=item
        )
    if kind == "command_execution":
        return _command_step(item, text)
    if kind == "file_change":
        return _file_change_step(item, text)
    args = {k: v for k, v in item.items() if k not in ("id", "type", "status")}
    call_id = item.get("id")
    view = classify(kind, args)
    return Step(
        index=0,
        kind="tool",
        text=text,
        tool_name=kind,
        category=view.category,
        call_id=call_id if type(call_id) is str else scalar_text(call_id, "item id"),
        arguments=args,
        files=view.files,
        raw=item,
    )


def _command_step(item: dict[str, Any], text: str) -> Step:
    command = _unwrap(str(item.get("command") or ""))
    view = classify("shell", {"command": command})
    code, output = item.get("exit_code"), item.get("aggregated_output")
    call_id = item.get("id")
    return Step(
        index=0,
        kind="tool",
        text=text,
        tool_name="command_execution",
        category=view.category,
        call_id=call_id if type(call_id) is str else scalar_text(call_id, "item id"),
        arguments={"command": item.get("command")},
        command=command,
        files=view.files,
        observation=output if type(output) is str or output is None else _observation(output),
        is_error=(code != 0) if isinstance(code, int) else item.get("status") == "failed",
        raw=item,
    )


def _file_change_step(item: dict[str, Any], text: str) -> Step:
    changes = [c for c in listed(item.get("changes"), "file_change changes") if isinstance(c, dict)]
    adds = all(c.get("kind") == "add" for c in changes) and bool(changes)
    call_id = item.get("id")
    return Step(
        index=0,
        kind="tool",
        text=text,
        tool_name="file_change",
        category=ToolCategory.CREATE_FILE if adds else ToolCategory.EDIT,
        call_id=call_id if type(call_id) is str else scalar_text(call_id, "item id"),
        arguments={"changes": changes},
        files=[str(c.get("path")) for c in changes if c.get("path")],
        is_error=item.get("status") == "failed",
        raw=item,
    )


def _unwrap(command: str) -> str:
    """`bash -lc 'cat x'` runs `cat x`. `shlex` is pure Python and slow: it only runs for a line
    with quotes or escapes that is not the plain `bash -lc '...'` form."""
    wrapped = SINGLE_QUOTED_WRAPPER.fullmatch(command)
    if wrapped:
        return wrapped[1]
    if "'" in command or '"' in command or "\\" in command:
        try:
            words = shlex.split(command)
        except ValueError:
            return command
    else:
        words = SHLEX_WORD.findall(command)  # what shlex.split gives for an unquoted line
    if len(words) == 3 and words[0].rsplit("/", 1)[-1] in SHELLS and words[1] in ("-lc", "-c"):
        return words[2]
    return command


def _observation(output: Any) -> str | None:
    return scalar_text(output, "command_execution aggregated_output")


def _usage(raw: dict[str, Any], turn: int) -> Usage:
    given = raw.get("input_tokens"), raw.get("output_tokens"), raw.get("cached_input_tokens")
    prompt, completion, cached = given
    if type(prompt) is int and type(completion) is int and type(cached) is int:
        return Usage(prompt_tokens=prompt, completion_tokens=completion, cached_tokens=cached)
    try:
        prompt, completion, cached = (count(v, k) for v, k in zip(given, USAGE_KEYS, strict=True))
    except ShapeError as exc:
        raise ShapeError(f"turn {turn} usage.{exc}") from None
    return Usage(prompt_tokens=prompt, completion_tokens=completion, cached_tokens=cached)
