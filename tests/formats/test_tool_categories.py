"""Editor calls and tool names shared by every reader (`formats/_categories.py`)."""

from __future__ import annotations

import pytest

from agentlens.formats._categories import categorize_editor, categorize_tool
from agentlens.trajectory import ToolCategory as C


@pytest.mark.parametrize(
    ("sub", "path", "is_dir", "category"),
    [
        ("view", "/repo/src", None, C.LIST_DIR),
        ("view", "/repo/a.py", None, C.READ_FILE),
        ("view", "/repo/Makefile", None, C.READ_FILE),
        ("view", "/repo/noext", False, C.READ_FILE),
        ("create", "/repo/a.py", None, C.CREATE_FILE),
        ("str_replace", "/repo/a.py", None, C.EDIT),
        ("insert", "/repo/a.py", None, C.EDIT),
        ("bogus", "/repo/a.py", None, C.OTHER),
    ],
)
def test_categorize_editor(sub: str, path: str, is_dir: bool | None, category: C) -> None:
    assert categorize_editor(sub, path, is_dir=is_dir) is category


def test_categorize_tool_uses_arguments() -> None:
    assert categorize_tool("execute_bash", {"command": "ls"}) is C.LIST_DIR
    assert (
        categorize_tool("str_replace_editor", {"command": "create", "path": "a"}) is C.CREATE_FILE
    )
    assert categorize_tool("think", {}) is C.THINK
    assert categorize_tool("finish") is C.FINISH
    assert categorize_tool("browser") is C.OTHER
