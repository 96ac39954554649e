"""SWE-agent `.traj`: one JSON object with `trajectory[]` (one entry per action), `history[]` (the
chat sent to the model) and `info` (exit status, submission, `model_stats`).

Versions: 2024 files keep `state` as a JSON string, newer ones as a dict; function-calling runs add
`history[].tool_calls`, whose exact arguments are attached to the matching action; a history-only
file (no `trajectory`) is read from its tool calls. `state.working_dir` is each step's `cwd`
(`_start_dirs`): a run may `cd` below the checkout and name files from there. The task id is the
file name; the model comes from `metadata.yaml` or the run directory. Tokens and cost are
per-instance totals only (`instance_cost`; `total_cost` covers the whole batch). The verdict is
never in the file: `agentlens.outcomes` finds it beside `trajs/` (`run_instance.log`,
`results.json`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from agentlens.errors import SchemaError
from agentlens.formats import _openhands_common as common
from agentlens.formats._categories import categorize_editor
from agentlens.formats._json import ReadGuard, loads, require
from agentlens.formats._reader_base import SuffixReader
from agentlens.formats._swe_agent_runs import run_folder, run_model
from agentlens.formats._typed_json import scalar_text
from agentlens.shell.categories import analyse_command, categorize_command, files_in_command
from agentlens.shell.working_dir import working_folder
from agentlens.trajectory import Agent, Source, Step, StepKind, ToolCategory, Trajectory, Usage

ACI = {
    "open": ToolCategory.READ_FILE,
    "goto": ToolCategory.READ_FILE,
    "scroll_up": ToolCategory.READ_FILE,
    "scroll_down": ToolCategory.READ_FILE,
    "filemap": ToolCategory.READ_FILE,
    "search_dir": ToolCategory.SEARCH,
    "search_file": ToolCategory.SEARCH,
    "find_file": ToolCategory.SEARCH,
    "create": ToolCategory.CREATE_FILE,
    "edit": ToolCategory.EDIT,
    "insert": ToolCategory.EDIT,
    "append": ToolCategory.EDIT,
    "submit": ToolCategory.FINISH,
}
# First words whose operand or open file `_files` reads; any other action is a shell command.
FILE_WORDS = {
    "str_replace_editor",
    "open",
    "create",
    "search_file",
    "search_dir",
    "find_file",
    *ACI,
}
# the ACI word (counted from 0) that names the file: `open <path>`, `search_dir <text> <dir>`
OPERAND_AT = {
    "str_replace_editor": 2,
    "open": 1,
    "create": 1,
    "search_file": 2,
    "search_dir": 2,
    "find_file": 2,
}
ACI_WORDS = re.compile(r'"[^"]*"|\'[^\']*\'|\S+')
STARTS = re.compile(rb'^\s*\{\s*"(environment|trajectory|history|info|replay_config|attempts)"\s*:')
FINISH = ToolCategory.FINISH  # a global: `ToolCategory.FINISH` costs ~10x its look-up
METADATA_KEYS = ("exit_status", "submission", "best_attempt_idx")


class SweAgentReader(SuffixReader):
    name: ClassVar[str] = "swe-agent"
    suffixes: ClassVar[tuple[str, ...]] = (".traj",)

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        return bool(STARTS.match(head[:1024]))

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        with ReadGuard(path, self.name, loose=True):  # e.g. a token count that is a list
            trajectory = self._trajectory(path, data)
        yield trajectory

    def _trajectory(self, path: Path, data: bytes) -> Trajectory:
        doc = _chosen_attempt(
            path, require(path, self.name, loads(path, data, self.name), dict, "top level")
        )
        entries = require(path, self.name, doc.get("trajectory") or [], list, "'trajectory'")
        history = require(path, self.name, doc.get("history") or [], list, "'history'")
        if not entries and not history:
            raise SchemaError(path, "has neither 'trajectory' nor 'history' entries", self.name)
        for number, entry in enumerate(entries):
            if not isinstance(entry, dict):
                require(path, self.name, entry, dict, f"trajectory entry {number}")
        info = common.as_dict(doc.get("info"))
        steps = _preamble(history)
        steps += _from_trajectory(entries, history) if entries else _from_history(history)
        stats = common.as_dict(info.get("model_stats"))
        task_id = path.name.removesuffix(".traj")
        folder = run_folder(path)
        return Trajectory(
            id=task_id if folder.run_name is None else f"{folder.run_name}/{task_id}",
            task_id=task_id,
            task=next((s.text for s in steps if s.kind == "user"), None),
            agent=Agent(name="SWE-agent", version=_version(info)),
            model=run_model(folder, doc),
            source=Source(format=self.name, path=str(path), format_version=_flavour(entries)),
            steps=common.renumber(steps),
            reported_usage=_usage(stats),
            reported_cost=_cost(stats),
            metadata={k: info[k] for k in METADATA_KEYS if k in info},
        )


def _chosen_attempt(path: Path, doc: dict[str, Any]) -> dict[str, Any]:
    """Retry-loop runs save every attempt under `attempts` and merge the chosen one into the top
    level; without a merged one, the last attempt is read."""
    attempts = doc.get("attempts")
    if "trajectory" in doc or "history" in doc or not isinstance(attempts, list) or not attempts:
        return doc
    return require(path, SweAgentReader.name, attempts[-1], dict, "the last of 'attempts'")


def _preamble(history: list[Any]) -> list[Step]:
    """The system prompt and the task, the messages sent before the agent's first reply. A worked
    demonstration (`is_demo`, another task's issue solved) is the harness's, not the user's: a
    system step, so the task is the issue that follows it."""
    steps = []
    for message in history:
        if not isinstance(message, dict) or message.get("role") not in ("system", "user"):
            break
        harness = message["role"] == "system" or message.get("is_demo") is True
        kind: StepKind = "system" if harness else "user"
        steps.append(Step(index=0, kind=kind, text=common.text_of(message.get("content"))))
    return steps


def _from_trajectory(entries: list[Any], history: list[Any]) -> list[Step]:
    calls = [m for m in history if isinstance(m, dict) and m.get("role") == "assistant"]
    open_files: dict[str, str] = {}
    if len(calls) != len(entries):  # only a one-to-one history says which call made which action
        steps = [_action_step(entry, turn, None, open_files) for turn, entry in enumerate(entries)]
    else:
        steps = [
            _action_step(entry, turn, _first_call(call), open_files)
            for turn, (entry, call) in enumerate(zip(entries, calls, strict=True))
        ]
    for step, where in zip(steps, _start_dirs(entries), strict=True):
        step.cwd = where
    return steps


def _start_dirs(entries: list[dict[str, Any]]) -> list[str | None]:
    """The directory each action started in (`state.working_dir`). A 2024 file's string `state`
    was taken before its action ran; a later file's object `state` after it, so the action before
    says where one started, and the first action's own says, unless it ran a `cd`."""
    parsed: dict[str, str | None] = {}
    dirs = [_working_dir(entry.get("state"), parsed) for entry in entries]
    if not entries or isinstance(entries[0].get("state"), str):
        return dirs
    moved = "cd" in str(entries[0].get("action") or "")
    return [None if moved else dirs[0], *dirs[:-1]]


def _working_dir(state: Any, parsed: dict[str, str | None]) -> str | None:
    """`state.working_dir` when it is a working folder (a string `state` is parsed once)."""
    if isinstance(state, str):
        if state not in parsed:
            parsed[state] = _working_dir(common.parse_arguments(state), parsed)
        return parsed[state]
    return working_folder(common.as_dict(state).get("working_dir"))


def _action_step(
    entry: dict[str, Any], turn: int, call: dict[str, Any] | None, open_files: dict[str, str]
) -> Step:
    """One action; `open_files` holds the open file of each string `state` met in the file."""
    action = str(entry.get("action") or "").strip()
    text = str(entry.get("thought") or entry.get("response") or "")
    call_id = call.get("id") if call else None
    if type(call_id) is not str and call_id is not None:
        call_id = scalar_text(call_id, "tool call id")
    if not action:
        return Step(index=0, kind="agent", text=text, turn=turn, call_id=call_id, raw=entry)
    first = action.split(None, 1)[0]
    if action[0] in "\"'" or first.strip("\"'") in FILE_WORDS or first.startswith("exit_"):
        tool_name, category = classify(action, first)
        files = _files(action, first, category, entry.get("state"), open_files)
    else:  # a shell command (what `classify` and `_files` find, from one look-up)
        tool_name, (category, files) = "bash", analyse_command(action)
    arguments, observation = None, entry.get("observation")
    if call:
        function = common.as_dict(call.get("function"))
        arguments = common.parse_arguments(function.get("arguments"))
        tool_name = str(function.get("name") or tool_name)
    return Step(
        index=0,
        kind="tool",
        text=text,
        turn=turn,
        tool_name=tool_name,
        category=category,
        call_id=call_id,
        arguments={"command": action} if arguments is None else arguments,
        command=action,
        files=files,
        observation=(
            observation
            if type(observation) is str or observation is None
            else _observation(observation)
        ),
        raw=entry,
    )


def _from_history(history: list[Any]) -> list[Step]:
    """History-only files: each assistant tool call with the tool message that answers it."""
    results = {
        call_id: common.text_of(m.get("content"))
        for m in history
        if isinstance(m, dict) and m.get("role") == "tool"
        for call_id in m.get("tool_call_ids") or []
    }
    steps = []
    open_files: dict[str, str] = {}
    replies = [m for m in history if isinstance(m, dict) and m.get("role") == "assistant"]
    for turn, message in enumerate(replies):
        action = str(message.get("action") or "").strip()
        step = _action_step(
            {**message, "observation": None}, turn, _first_call(message), open_files
        )
        step.observation = results.get(step.call_id or "") if action else None
        step.raw = message
        steps.append(step)
    return steps


def classify(action: str, first: str) -> tuple[str, ToolCategory]:
    """(tool name, category) of one SWE-agent action line (`first`: its first word): an ACI
    command or a shell command."""
    if first == "str_replace_editor" and len(words := action.split(maxsplit=3)) >= 3:
        return first, categorize_editor(words[1], words[2])
    if first in ACI:
        return first, ACI[first]
    if first.startswith("exit_"):
        return first, ToolCategory.OTHER
    return "bash", categorize_command(action)


def _files(
    action: str, first: str, category: ToolCategory, state: Any, open_files: dict[str, str]
) -> list[str]:
    """Files a non-empty action (`first`: its first word) names: its path operand, the open
    file for `edit`/`goto`/..., or the files of a shell command."""
    if category is FINISH:
        return []
    # unquoted, the first ACI word is the first word; a quoted one may hold spaces
    word = _aci_word(action, 0)[0] if action[0] in "\"'" else first.strip("\"'")
    at = OPERAND_AT.get(word)
    if at is not None:
        return _aci_word(action, at)
    if word in ACI:  # edit, insert, goto, scroll_*: they act on the open file
        return _open_file(state, open_files)
    return files_in_command(action)


def _aci_word(action: str, at: int) -> list[str]:
    """Word `at` (from 0) of an action's first line, quotes dropped, if it has one (found in
    place: the lines after it are the body of an edit, often kilobytes)."""
    end = action.find("\n")
    words = ACI_WORDS.findall(action, 0, len(action) if end < 0 else end)
    return [words[at].strip("\"'")] if at < len(words) else []


def _open_file(state: Any, open_files: dict[str, str]) -> list[str]:
    """The open file of an action's `state`: a JSON string in 2024 files (one per action,
    mostly the same text, so each is parsed once per file) and an object later."""
    if isinstance(state, str):
        name = open_files.get(state)
        if name is None:
            name = open_files[state] = _open_file_name(common.parse_arguments(state))
    else:
        name = _open_file_name(state)
    return [name] if name else []


def _open_file_name(state: Any) -> str:
    """`state.open_file`, or "" when it is missing or SWE-agent's "n/a"."""
    name = common.as_dict(state).get("open_file")
    return name if isinstance(name, str) and name != "n/a" else ""


def _first_call(message: dict[str, Any]) -> dict[str, Any] | None:
    calls = message.get("tool_calls")
    return calls[0] if isinstance(calls, list) and calls and isinstance(calls[0], dict) else None


def _flavour(entries: list[Any]) -> str:
    if not entries:
        return "history-only"
    state = entries[0].get("state") if isinstance(entries[0], dict) else None
    return "v0-string-state" if isinstance(state, str) else "v1-dict-state"


def _observation(value: Any) -> str | None:
    return scalar_text(value, "trajectory observation")


def _version(info: dict[str, Any]) -> str | None:
    version = info.get("swe_agent_version")
    return str(version) if version else None


def _usage(stats: dict[str, Any]) -> Usage | None:
    if "tokens_sent" not in stats and "tokens_received" not in stats:
        return None
    return Usage(
        prompt_tokens=int(stats.get("tokens_sent") or 0),
        completion_tokens=int(stats.get("tokens_received") or 0),
    )


def _cost(stats: dict[str, Any]) -> float | None:
    cost = stats.get("instance_cost")
    return float(cost) if isinstance(cost, int | float) else None
