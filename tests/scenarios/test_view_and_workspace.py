"""What the simulator is shown (spec §4.2 limits) and the workspace's base and diff."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentlens.cli import review_cmd
from agentlens.demo.tiny_repo import apply_fix
from agentlens.errors import ConfigError
from agentlens.formats import read_path
from agentlens.scenarios.agent_view import (
    DIFF_FILE_CHARS,
    DIFF_TOTAL_CHARS,
    TOOL_ARGUMENT_CHARS,
    TOOL_RESULT_CHARS,
    cut,
    cut_diff,
    turn_view,
)
from agentlens.scenarios.turns import AgentTurn
from agentlens.scenarios.workspace import (
    WorkspaceGitError,
    changes_since_base,
    diff_since_base,
    prepare,
    run_preprocessors,
)
from agentlens.trajectory import Step
from agentlens.verification import repo_git
from tests.conftest import DATA

RUN = "astropy__astropy-12907"
LONG_OUTPUT = DATA / "mini-swe-agent-swebv" / "trajs" / RUN / f"{RUN}.traj.json"
MARK = "[REDACTED:openai-key]"


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


def _read_with_a_key_at(offset: int, tmp_path: Path) -> Step:
    """The real run's 10,613-character listing (message 3) with an OpenAI key planted at
    `offset`, read as any trace is (its key masked): the tool step whose result it is."""
    doc = json.loads(LONG_OUTPUT.read_text())
    listing = doc["messages"][3]["content"]
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2
    doc["messages"][3]["content"] = f"{listing[:offset]} {key} {listing[offset:]}"
    planted = tmp_path / LONG_OUTPUT.name
    planted.write_text(json.dumps(doc))
    (run,) = read_path(planted)
    return next(step for step in run.steps if MARK in (step.observation or ""))


def test_a_cut_keeps_a_redaction_mark_whole(tmp_path: Path) -> None:
    """The result cut at 10,000 characters fell inside `[REDACTED:openai-key]`, and the
    simulator's prompt showed `[REDACTED:openai-k`; the cut now ends after the mark."""
    step = _read_with_a_key_at(TOOL_RESULT_CHARS - 10, tmp_path)
    result = step.observation or ""
    at = result.index(MARK)
    assert at < TOOL_RESULT_CHARS < at + len(MARK)
    view = turn_view(AgentTurn([step]), diff="")
    left = len(result) - at - len(MARK)
    assert f"{result[: at + len(MARK)]}\n[... {left} more characters cut]" in view
    for limit in range(at, at + len(MARK) + 1):
        shown = cut(result, limit)
        assert shown.count("[REDACTED") == shown.count(MARK) == (limit > at), limit
        head, _, note = shown.rpartition("\n[... ")
        assert note == f"{len(result) - len(head)} more characters cut]", limit


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


def test_a_new_file_only_the_agents_ignore_rules_hide_is_in_the_diff(
    calc_project: Path, tmp_path: Path
) -> None:
    """`add -A` reads the workspace's `.git/info/exclude`, which the agent writes: a conftest
    it named there was missing from the diff the simulator and the judge read. What the
    project's own `.gitignore` ignores stays out."""
    (calc_project / ".gitignore").write_text("*.log\n")
    ws = prepare(calc_project, tmp_path / "ws")
    (ws.path / "conftest.py").write_text("import pytest\n")
    (ws.path / ".git" / "info" / "exclude").write_text("conftest.py\n")
    (ws.path / "run.log").write_text("ran\n")
    diff, changed = changes_since_base(ws)
    assert changed == ["conftest.py"] and "+import pytest" in diff


def test_a_workspace_diff_reads_the_base_once_and_adds_new_files_by_name_only_when_hidden(
    calc_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The diff read the base into an index twice (its own, then a listing's for the hidden
    files), looked at the config before each of its 14 git calls, and added every new file
    again by name: git matches each name against each one given, so 20,000 new files took
    25 s in that one call (100,000: minutes)."""
    ws = prepare(calc_project, tmp_path / "ws")
    (ws.path / "conftest.py").write_text("import pytest\n")
    (ws.path / ".git" / "info" / "exclude").write_text("conftest.py\n")
    (ws.path / "new.py").write_text("x = 1\n")
    calls: list[tuple[str, str]] = []
    run = repo_git._run_git

    def counted(repo: Path, args: list[str], *rest: Any) -> repo_git.GitResult:
        after = zip(args, ["", *args[:-1]], strict=True)
        command = next(a for a, before in after if before != "-c" and a[0] != "-")
        calls.append((command, rest[-1]))  # and what it read on stdin
        return run(repo, args, *rest)

    monkeypatch.setattr(repo_git, "_run_git", counted)
    diff, changed = changes_since_base(ws)
    assert sorted(changed) == ["conftest.py", "new.py"] and "+import pytest" in diff
    commands = [command for command, _ in calls]
    assert (commands.count("read-tree"), commands.count("config")) == (1, 1), commands
    added_by_name = [stdin for command, stdin in calls if command == "add" and stdin]
    assert added_by_name == ["conftest.py\0"]


def test_a_failed_listing_of_new_files_is_a_workspace_error(
    calc_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Failure injection: a listing git could not make (timed out at its 60 s, say) raised the
    verifiers' `VerifierSetupError`, no `AgentLensError`: it passed the simulator's view,
    which then never said "the changes cannot be shown"."""
    ws = prepare(calc_project, tmp_path / "ws")
    run = repo_git._run_git

    def failing(repo: Path, args: list[str], *rest: Any) -> repo_git.GitResult:
        if "ls-files" in args:
            return repo_git._result(
                list(args), 124, "", "timed out", stopped="timed out after 60 s"
            )
        return run(repo, args, *rest)

    monkeypatch.setattr(repo_git, "_run_git", failing)
    late = "timed out: listing the changes took over the 30 s timeout"  # the listing's clock
    with pytest.raises(WorkspaceGitError, match=rf"ls-files .* failed: {late}") as raised:
        changes_since_base(ws)
    assert isinstance(raised.value, ConfigError) and raised.value.stopped == late


def test_a_diff_larger_than_git_may_print_is_no_diff(calc_project: Path, tmp_path: Path) -> None:
    """git's output was read whole: a new 300 MB text file took the simulator's diff to a peak
    of 920 MB, and a few such files (2 GB each under `file_size_mb`) the host's memory. The
    call now stops past `MAX_OUTPUT_BYTES`, in one line, as a call stopped for memory does."""
    ws = prepare(calc_project, tmp_path / "ws")
    with (ws.path / "data.txt").open("w") as data:
        data.write(("x" * 99 + "\n") * (64 * 1024 * 1024 // 100 + 1000))  # 64 MB and more
    with pytest.raises(WorkspaceGitError) as raised:
        changes_since_base(ws)
    assert raised.value.stopped == "stopped: its output passed 64 MB"
    with pytest.raises(ConfigError, match=r"git diff HEAD failed: stopped: its output passed 64"):
        review_cmd._diff(str(ws.path), "HEAD")


def test_preprocessor_output_becomes_part_of_the_base(calc_project: Path, tmp_path: Path) -> None:
    ws = prepare(calc_project, tmp_path / "ws")
    first_base = ws.base
    run_preprocessors(ws, [{"command": "mkdir -p build && echo ok > build/stamp"}])
    assert ws.base != first_base and diff_since_base(ws) == ""


def _git(repo: Path, *args: str) -> str:
    # as root the workspace belongs to the sandbox's user from the start (its git runs there)
    argv = ["git", "-c", "safe.directory=*", "-C", str(repo), *args]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout
