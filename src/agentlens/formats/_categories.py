"""The `ToolCategory` of a tool call by the tool names several agents share, and of
`str_replace_editor`-style editor calls; a shell tool's command line is classified by
`agentlens.shell.categories`, so a `cat` counts as a read whichever agent ran it.
"""

from __future__ import annotations

from typing import Any

from agentlens.shell.categories import categorize_command
from agentlens.trajectory import ToolCategory

EDITOR_EDITS = {"str_replace", "insert", "edit", "undo_edit", "write", "append", "replace"}
FILE_NAMES_WITHOUT_SUFFIX = {"Makefile", "Dockerfile", "README", "LICENSE", "Gemfile", "Rakefile"}
SHELL_TOOLS = {"execute_bash", "bash", "terminal", "shell", "run", "run_command", "exec_command"}
EDITOR_TOOLS = {"str_replace_editor", "file_editor", "edit_file", "str_replace_based_edit_tool"}
THINK_TOOLS = {"think", "thought", "plan", "task_tracker", "todo_write", "update_plan"}
FINISH_TOOLS = {"finish", "submit", "attempt_completion", "task_complete"}


def categorize_editor(subcommand: str, path: str, *, is_dir: bool | None = None) -> ToolCategory:
    """Classify a `str_replace_editor`-style call: view / create / str_replace / insert / undo_edit.

    `is_dir` settles whether `view` listed a directory; without it a path with no suffix (and not
    a well-known file name such as `Makefile`) or ending in `/` is taken as a directory.
    """
    sub = subcommand.strip().lower()
    if sub == "view":
        directory = is_dir if is_dir is not None else _looks_like_dir(path)
        return ToolCategory.LIST_DIR if directory else ToolCategory.READ_FILE
    if sub == "create":
        return ToolCategory.CREATE_FILE
    if sub in EDITOR_EDITS:
        return ToolCategory.EDIT
    return ToolCategory.OTHER


def categorize_tool(name: str, arguments: dict[str, Any] | None = None) -> ToolCategory:
    """Classify a tool call by common tool names shared by several agents, looking at its arguments."""
    args = arguments or {}
    key = name.strip().lower()
    if key in SHELL_TOOLS:
        command = args.get("command") or args.get("cmd")
        return categorize_command(command) if isinstance(command, str) else ToolCategory.RUN_COMMAND
    if key in EDITOR_TOOLS:
        return categorize_editor(str(args.get("command") or ""), str(args.get("path") or ""))
    if key in THINK_TOOLS:
        return ToolCategory.THINK
    if key in FINISH_TOOLS:
        return ToolCategory.FINISH
    return ToolCategory.OTHER


def _looks_like_dir(path: str) -> bool:
    if path.endswith("/"):
        return True
    last = path.rsplit("/", 1)[-1]
    return "." not in last and last not in FILE_NAMES_WITHOUT_SUFFIX
