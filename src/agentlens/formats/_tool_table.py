"""Tool names of the Gemini CLI and of OpenAI-style tool lists, mapped onto `ToolCategory`.

Shell and editor tools go through the shared rules in `_categories` and `agentlens.shell` so that `cat x` counts as a
read whichever agent ran it; this table only adds the names those rules do not know.
"""

from __future__ import annotations

from typing import Any

from agentlens.formats._categories import categorize_tool
from agentlens.shell.categories import files_in_command
from agentlens.trajectory import ToolCategory

NAMED: dict[str, ToolCategory] = {
    "read_file": ToolCategory.READ_FILE,
    "read_many_files": ToolCategory.READ_FILE,
    "list_directory": ToolCategory.LIST_DIR,
    "list_dir": ToolCategory.LIST_DIR,
    "glob": ToolCategory.SEARCH,
    "search_file_content": ToolCategory.SEARCH,
    "grep": ToolCategory.SEARCH,
    "google_web_search": ToolCategory.SEARCH,
    "web_fetch": ToolCategory.READ_FILE,
    "write_file": ToolCategory.CREATE_FILE,
    "create_file": ToolCategory.CREATE_FILE,
    "replace": ToolCategory.EDIT,
    "edit": ToolCategory.EDIT,
    "write_todos": ToolCategory.THINK,
    "save_memory": ToolCategory.THINK,
    "update_topic": ToolCategory.THINK,  # the 2026 CLI's status line: a plan note, no effect
}
SHELL_NAMES = {"run_shell_command", "execute_bash", "bash", "terminal", "shell", "exec_command"}
PATH_KEYS = ("file_path", "absolute_path", "path", "dir_path")


def tool_category(name: str, args: dict[str, Any]) -> tuple[ToolCategory, str | None, list[str]]:
    """Return (category, shell command text or None, files named by the call)."""
    key = name.strip().lower()
    command = args.get("command") if key in SHELL_NAMES else None
    if isinstance(command, str):
        shell_args = {"command": command}
        return categorize_tool("bash", shell_args), command, files_in_command(command)
    files = [str(args[k]) for k in PATH_KEYS if isinstance(args.get(k), str)]
    if key in NAMED:
        return NAMED[key], None, files
    return categorize_tool(name, args), None, files
