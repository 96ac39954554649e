"""Step-building helpers shared by the ATIF, Claude Code, Codex and Inspect readers.

Maps a raw tool name plus its arguments to a `ToolCategory`, the shell `command` text and the
files it touches. Shell lines go through `agentlens.shell`, editor calls through `_categories`;
this module only knows the tool names of the agents these formats carry (Claude Code, Codex,
Terminus, OpenHands, Inspect).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, NamedTuple

import orjson

from agentlens.formats._categories import categorize_editor, categorize_tool
from agentlens.formats._json import count
from agentlens.shell.categories import analyse_command
from agentlens.shell.working_dir import moves_shell, working_folder
from agentlens.trajectory import Step, ToolCategory, Usage

SHELL_TOOLS = {
    "bash",
    "shell",
    "exec_command",
    "execute_bash",
    "bash_command",
    "run_in_terminal",
    "local_shell",
    "container.exec",
    "terminal",
    "run_command",
    "execute_command",
}
EDITOR_TOOLS = {"str_replace_editor", "text_editor", "str_replace_based_edit_tool", "file_editor"}
NAMED: dict[str, ToolCategory] = {
    "read": ToolCategory.READ_FILE,
    "read_file": ToolCategory.READ_FILE,
    "notebookread": ToolCategory.READ_FILE,
    "view_image": ToolCategory.READ_FILE,
    "edit": ToolCategory.EDIT,
    "multiedit": ToolCategory.EDIT,
    "notebookedit": ToolCategory.EDIT,
    "apply_patch": ToolCategory.EDIT,
    "replace_string_in_file": ToolCategory.EDIT,
    "write": ToolCategory.CREATE_FILE,
    "create_file": ToolCategory.CREATE_FILE,
    "grep": ToolCategory.SEARCH,
    "glob": ToolCategory.SEARCH,
    "search": ToolCategory.SEARCH,
    "find_file": ToolCategory.SEARCH,
    "websearch": ToolCategory.SEARCH,  # as `_tool_table` files Gemini's google_web_search
    "web_search": ToolCategory.SEARCH,
    "web_search_call": ToolCategory.SEARCH,
    "webfetch": ToolCategory.READ_FILE,
    "ls": ToolCategory.LIST_DIR,
    "list_dir": ToolCategory.LIST_DIR,
    "todowrite": ToolCategory.THINK,
    "todoread": ToolCategory.THINK,
    "exitplanmode": ToolCategory.THINK,
    "update_plan": ToolCategory.THINK,
    "think": ToolCategory.THINK,
    "mark_task_complete": ToolCategory.FINISH,
    "python": ToolCategory.RUN_COMMAND,
}
PATH_KEYS = ("file_path", "path", "notebook_path", "filename")
PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
SHELL_WRAPPER = {"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh"}


class ToolView(NamedTuple):
    category: ToolCategory
    command: str | None
    files: list[str]


def call_arguments(raw: Any) -> dict[str, Any]:
    """A call's arguments as an object. Some logs store them as a JSON string: it is parsed;
    any other value is kept under `_raw`, not dropped (it still shows, and redaction sees it)."""
    if isinstance(raw, dict):
        return raw
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
    return {"_raw": raw}


def classify(name: str, arguments: dict[str, Any]) -> ToolView:
    """Category, shell command text and touched files of one tool call."""
    key = name.strip().lower()
    if key in SHELL_TOOLS:
        command = shell_text(arguments)
        if command is None:
            return ToolView(ToolCategory.RUN_COMMAND, None, [])
        category, files = analyse_command(command)
        return ToolView(category, command, files)
    files = _arg_files(arguments)
    if key in EDITOR_TOOLS:
        sub = str(arguments.get("command") or "")
        return ToolView(categorize_editor(sub, files[0] if files else ""), None, files)
    if key == "apply_patch":
        patch = arguments.get("input") or arguments.get("patch") or ""
        files = files or PATCH_FILE.findall(str(patch))
    category = NAMED.get(key) or categorize_tool(name, arguments)
    return ToolView(category, None, files)


def shell_text(arguments: dict[str, Any]) -> str | None:
    """The command line of a shell tool call: `command` (str or argv), `cmd`, or `keystrokes`."""
    for key in ("command", "cmd", "keystrokes", "code"):
        value = arguments.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return _argv_text(value)
    return None


def _argv_text(argv: list[str]) -> str:
    # ["bash", "-lc", "ls -la"] runs the last element; other argv lists are joined.
    if len(argv) == 3 and argv[0] in SHELL_WRAPPER and argv[1] in {"-lc", "-c"}:
        return argv[2]
    return " ".join(argv)


def _arg_files(arguments: dict[str, Any]) -> list[str]:
    for key in PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return [value]
    return []


def start_in_session_folder(steps: list[Step], folder: Any) -> None:
    """Each call's `cwd`: the session's folder, up to the first command that moves the shell. A
    shell that stays open between calls (Copilot CLI's, Grok's) starts later ones elsewhere, and
    the log does not say where, so they keep none."""
    start = working_folder(folder)
    if start is None:
        return
    for step in steps:
        if step.kind != "tool":
            continue
        step.cwd = start
        if step.command and moves_shell(step.command, start):
            return


def parse_time(value: Any) -> datetime | None:
    """An ISO 8601 timestamp (a trailing `Z` allowed), or None when absent or malformed."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def token_usage(raw: Any, cached_key: str, where: str = "") -> Usage | None:
    """`{input_tokens, output_tokens, <cached_key>}` (Codex, Inspect) -> Usage; a count that is
    not a whole number is a `ShapeError` naming `<where><key>`."""
    if not isinstance(raw, dict):
        return None
    prompt, completion, cached = (
        raw.get("input_tokens"),
        raw.get("output_tokens"),
        raw.get(cached_key),
    )
    return Usage(
        prompt_tokens=prompt if type(prompt) is int else count(prompt, f"{where}input_tokens"),
        completion_tokens=(
            completion if type(completion) is int else count(completion, f"{where}output_tokens")
        ),
        cached_tokens=cached if type(cached) is int else count(cached, f"{where}{cached_key}"),
    )
