"""Pieces shared by the OpenHands readers (legacy V0 events, V1 SDK events, eval `output.jsonl`).

OpenHands reports token usage and cost as running totals (`llm_metrics.accumulated_*` on V0 action
events, `stats` state updates in V1); `RunningTotals` turns them into per-step amounts.

A command's result says the folder its shell, which stays open between calls, ended in
(`metadata.working_dir`); `start_folders` makes each call's `Step.cwd` the one the call before
ended in.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from agentlens.formats._categories import categorize_editor, categorize_tool
from agentlens.formats._json import ShapeError
from agentlens.shell.categories import categorize_command, files_in_command
from agentlens.shell.working_dir import moves_shell, working_folder
from agentlens.trajectory import Step, ToolCategory, Usage

DIRECTORY_LISTING = "Here's the files and directories"
UNKNOWN_START = "/?"  # no folder a `cd` can name whole; `cd .` still stays in it


class RunningTotals:
    """De-cumulates running token/cost totals; a total that goes down is taken as a reset."""

    def __init__(self) -> None:
        self.usage = Usage()
        self.cost = 0.0

    def step(self, usage: Usage, cost: float | None) -> tuple[Usage, float | None]:
        previous, self.usage = self.usage, usage
        # _diff written out three times: this runs once per action event
        now, before = usage.prompt_tokens, previous.prompt_tokens
        prompt = now - before if now >= before else now
        now, before = usage.completion_tokens, previous.completion_tokens
        completion = now - before if now >= before else now
        now, before = usage.cached_tokens, previous.cached_tokens
        cached = now - before if now >= before else now
        delta = Usage(prompt_tokens=prompt, completion_tokens=completion, cached_tokens=cached)
        if cost is None:
            return delta, None
        previous_cost, self.cost = self.cost, cost
        return delta, _diff(cost, previous_cost)


def _diff(now: float, before: float) -> Any:
    return now - before if now >= before else now


def usage_from_metrics(token_usage: Any, where: str | None = None) -> Usage:
    """`accumulated_token_usage`-style dict -> Usage (cache reads are the cached prompt tokens).
    With `where`, a count that is not a number is a `ShapeError` naming it (else int()'s error)."""
    if not isinstance(token_usage, dict):
        return Usage()
    return Usage(
        prompt_tokens=_tokens(token_usage.get("prompt_tokens"), where, "prompt_tokens"),
        completion_tokens=_tokens(token_usage.get("completion_tokens"), where, "completion_tokens"),
        cached_tokens=_tokens(token_usage.get("cache_read_tokens"), where, "cache_read_tokens"),
    )


def usage_from_response(usage: Any, where: str | None = None) -> Usage | None:
    """OpenAI/litellm `usage` of one model response -> Usage. `where` as in `usage_from_metrics`."""
    if not isinstance(usage, dict):
        return None
    details = usage.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(
        prompt_tokens=_tokens(usage.get("prompt_tokens"), where, "prompt_tokens"),
        completion_tokens=_tokens(usage.get("completion_tokens"), where, "completion_tokens"),
        cached_tokens=_tokens(
            cached or usage.get("cache_read_input_tokens"), where, "cached_tokens"
        ),
    )


def _tokens(value: Any, where: str | None, key: str) -> int:
    if value.__class__ is int:
        return value
    try:
        if value is True:  # int(True) is 1: a flag where a count belongs is nonsense, not 1 token
            raise TypeError("a token count should be a number, found a boolean")
        return int(value or 0)
    except (TypeError, ValueError):
        if where is None:
            raise
        raise ShapeError(f"{where}.{key} should be a number, found {value!r:.40}") from None


def parse_arguments(raw: Any) -> dict[str, Any] | None:
    """Tool-call arguments, given as a JSON string or an object; None when unusable."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str | bytes):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None
    return None


def categorize(
    tool_name: str, arguments: dict[str, Any], observation: str | None = None
) -> ToolCategory:
    """Category of an OpenHands tool call; a `view` that printed a listing is a directory."""
    name = tool_name.lower()
    if name in {"str_replace_editor", "file_editor", "edit", "read", "write"}:
        sub = str(arguments.get("command") or _implied_editor_command(name, arguments))
        listing = observation.startswith(DIRECTORY_LISTING) if observation is not None else None
        return categorize_editor(sub, str(arguments.get("path") or ""), is_dir=listing)
    if name in {"execute_ipython_cell", "run_ipython", "ipython"}:
        return _categorize_agentskill(str(arguments.get("code") or ""))
    if name in {"run", "cmd_run"} and isinstance(arguments.get("command"), str):
        return categorize_command(arguments["command"])
    if name in {"recall", "message"}:
        return ToolCategory.OTHER
    return categorize_tool(name, arguments)


AGENTSKILLS = {
    "open_file": ToolCategory.READ_FILE,
    "goto_line": ToolCategory.READ_FILE,
    "scroll_up": ToolCategory.READ_FILE,
    "scroll_down": ToolCategory.READ_FILE,
    "create_file": ToolCategory.CREATE_FILE,
    "edit_file_by_replace": ToolCategory.EDIT,
    "insert_content_at_line": ToolCategory.EDIT,
    "append_file": ToolCategory.EDIT,
    "search_dir": ToolCategory.SEARCH,
    "search_file": ToolCategory.SEARCH,
    "find_file": ToolCategory.SEARCH,
}
AGENTSKILL_CALL = re.compile(r"^\s*(?:print\()?(\w+)\(")
AGENTSKILL_FILE = re.compile(r"^\s*(?:print\()?(\w+)\(\s*(?:\w+\s*=\s*)?['\"]([^'\"\n]+)['\"]")


def _categorize_agentskill(code: str) -> ToolCategory:
    """Old CodeAct IPython cells that call one agentskills helper (`open_file('x')`)."""
    match = AGENTSKILL_CALL.match(code)
    return (
        AGENTSKILLS.get(match[1], ToolCategory.RUN_COMMAND) if match else ToolCategory.RUN_COMMAND
    )


def settle_listing(step: Step) -> None:
    """A file `view` whose result is a directory listing was a directory listing."""
    listed = step.observation is not None and step.observation.startswith(DIRECTORY_LISTING)
    if step.category is ToolCategory.READ_FILE and listed:
        step.category = ToolCategory.LIST_DIR


def _implied_editor_command(name: str, arguments: dict[str, Any]) -> str:
    if name == "read":
        return "view"
    if name == "write" or arguments.get("file_text"):
        return "create"
    return "str_replace" if arguments.get("old_str") is not None else "edit"


NOT_COMMANDS = {ToolCategory.THINK, ToolCategory.FINISH, ToolCategory.OTHER}
EDITOR_VERBS = {"view", "create", "str_replace", "insert", "undo_edit", "edit"}


def command_text(category: ToolCategory, arguments: dict[str, Any]) -> str | None:
    if category in NOT_COMMANDS:
        return None
    value = arguments.get("command")
    if isinstance(value, str) and value not in EDITOR_VERBS:
        return value
    value = arguments.get("code")
    if isinstance(value, str) and value not in EDITOR_VERBS:
        return value
    return None


def files_of(arguments: dict[str, Any], command: str | None) -> list[str]:
    """The editor's `path`, the file an agentskills cell opens, or the files of a shell line."""
    path = arguments.get("path")
    if isinstance(path, str) and path:
        return [path]
    code = arguments.get("code")
    if isinstance(code, str):  # Python, not shell: only `open_file('x')`-style calls name files
        match = AGENTSKILL_FILE.match(code)
        return [match[2]] if match and match[1] in AGENTSKILLS else []
    return files_in_command(command) if command else []


def exit_code_error(code: Any) -> bool | None:
    """Nonzero exit is an error; -1 is OpenHands' "no exit code yet" (a timeout), so unknown."""
    if isinstance(code, int) and not isinstance(code, bool) and code != -1:
        return code != 0
    return None


def text_of(content: Any) -> str:
    """Text of a content value that is a string or a list of `{type: text, text}` parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text") or "") if isinstance(part, dict) else str(part) for part in content
        )
    if isinstance(content, dict):
        return str(content.get("text") or "")
    return ""


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def start_folders(steps: list[Step], *result_keys: str) -> None:
    """Each call's `cwd`: the folder the call before ended in (its result's `<result_keys>.
    metadata.working_dir`). Calls up to the first result that says start where it ends, unless
    one moves the shell; after a call that moves it and says nothing, none is known."""
    calls = [s for s in steps if s.kind == "tool"]
    ends = [_end_folder(s, result_keys) for s in calls]
    first = next((i for i, end in enumerate(ends) if end), None)
    if first is None:
        return
    where: str | None = ends[first]
    # from an unknown start, any `cd` moves it: `cd /w/repo` from where it ends is no proof
    # the shell began there
    if not any(_moves(s, UNKNOWN_START) for s in calls[: first + 1]):
        for call in calls[: first + 1]:
            call.cwd = where
    for call, end in zip(calls[first + 1 :], ends[first + 1 :], strict=True):
        call.cwd = where
        where = end or (None if _moves(call, where) else where)


def _moves(step: Step, start: str | None) -> bool:
    return start is None or bool(step.command and moves_shell(step.command, start))


def _end_folder(step: Step, result_keys: tuple[str, ...]) -> str | None:
    result = as_dict(step.raw).get("result") if "call" in as_dict(step.raw) else None
    for key in result_keys:
        result = as_dict(result).get(key)
    return working_folder(as_dict(as_dict(result).get("metadata")).get("working_dir"))


def renumber(steps: list[Step]) -> list[Step]:
    for i, step in enumerate(steps):
        step.index = i
    return steps
