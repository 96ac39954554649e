"""What the simulator is shown (spec §4.2 limits) and the workspace's base and diff."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agentlens.demo.tiny_repo import apply_fix
from agentlens.scenarios.agent_view import (
    DIFF_FILE_CHARS,
    DIFF_TOTAL_CHARS,
    TOOL_ARGUMENT_CHARS,
    TOOL_RESULT_CHARS,
    cut_diff,
    turn_view,
)
from agentlens.scenarios.turns import AgentTurn
from agentlens.scenarios.workspace import diff_since_base, prepare, run_preprocessors
from agentlens.trajectory import Step


def test_tool_arguments_and_results_are_cut_at_the_spec_limits() -> None:
    step = Step(index=0, kind="tool", tool_name="bash", command="x" * 7000, observation="y" * 12000)
    view = turn_view(AgentTurn([step], reply="done"), diff="")
    assert "x" * TOOL_ARGUMENT_CHARS + "\n[... 2000 more characters cut]" in view
    assert "y" * TOOL_RESULT_CHARS + "\n[... 2000 more characters cut]" in view
    assert "x" * (TOOL_ARGUMENT_CHARS + 1) not in view
    assert view.count("<agent_message>") == 1 and "(no changes yet)" in view


def test_diffs_are_cut_per_file_and_in_total() -> None:
    files = [f"diff --git a/f{i} b/f{i}\n+" + "z" * 70_000 for i in range(4)]
    shown = cut_diff("\n".join(files))
    assert shown.count("diff --git") == 2  # 2 x (60k + note) fit in 150k, a third does not
    assert "[... 2 more changed files cut]" in shown
    assert len(shown) < DIFF_TOTAL_CHARS + 200
    first_file = shown.split("\n[... ")[0]
    assert len(first_file) == DIFF_FILE_CHARS and first_file.startswith("diff --git a/f0")


def test_workspace_is_a_committed_copy_and_its_diff_includes_new_files(
    calc_project: Path, tmp_path: Path
) -> None:
    ws = prepare(calc_project, tmp_path / "ws")
    apply_fix(ws.path)
    (ws.path / "NOTES.md").write_text("new file\n")
    status_before = _git(ws.path, "status", "--porcelain")
    diff = diff_since_base(ws)
    assert "+    return a - b" in diff and "+new file" in diff and "b/NOTES.md" in diff
    assert _git(ws.path, "status", "--porcelain") == status_before  # the real index untouched
    assert "?? NOTES.md" in status_before
    assert _git(calc_project, "status", "--porcelain") == ""  # the project itself untouched


def test_preprocessor_output_becomes_part_of_the_base(calc_project: Path, tmp_path: Path) -> None:
    ws = prepare(calc_project, tmp_path / "ws")
    first_base = ws.base
    run_preprocessors(ws, [{"command": "mkdir -p build && echo ok > build/stamp"}])
    assert ws.base != first_base and diff_since_base(ws) == ""


def _git(repo: Path, *args: str) -> str:
    # as root the workspace belongs to the sandbox's user from the start (its git runs there)
    argv = ["git", "-c", "safe.directory=*", "-C", str(repo), *args]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout
