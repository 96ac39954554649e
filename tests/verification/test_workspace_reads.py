"""Files of an agent's workspace that AgentLens reads on the host (regex counts, exact file
matches, IDE errors, test reports, a worktree's `.git` file), maybe as root, while a stdio MCP
server of the agent's session can still write there. Failure injection: at the moment the host
opens the file, the file (or a folder above it) becomes a link to a host file, here a real
Claude Code session from the shared data standing in for `/etc/shadow` or `~/.ssh/id_rsa`. The old
reads checked the path, then opened it by path, and read the host file."""

from __future__ import annotations

import io
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentlens.demo.tiny_repo import create_repo
from agentlens.scenarios.ide_errors import ide_errors
from agentlens.verification import repo_git, sandbox
from agentlens.verification.inside import NotInsideError, TooLargeError, read_inside
from agentlens.verification.verifiers import run_verifier
from agentlens.verification.verifiers.base import VerifyContext
from tests.conftest import FORMATS

HOST_FILE = FORMATS / "claude-code" / "daaain-claude-code-log" / "session_b.jsonl"
HOST_WORD = "multi-session"  # in the host file, nowhere in the workspace


@pytest.fixture
def calc(tmp_path: Path) -> Path:
    return create_repo(tmp_path / "calc")


def swap_when_opened(
    monkeypatch: pytest.MonkeyPatch, opened: Path, swapped: Path, host: Path
) -> list[Path]:
    """When the host first opens `opened` or `swapped` (by path, or by name in a folder
    descriptor), `swapped` becomes a link to `host`; what a server of the agent could do at that
    moment. Returns the list of swaps made, to check the race was really run."""
    real_os_open, real_io_open, real_run = os.open, io.open, subprocess.run
    swaps: list[Path] = []

    def swap(path: Any, dir_fd: int | None = None) -> None:
        if swaps or not isinstance(path, str | os.PathLike):
            return
        folder = os.readlink(f"/proc/self/fd/{dir_fd}") if dir_fd is not None else ""
        if Path(folder, os.fspath(path)) in (opened, swapped):
            swapped.rename(swapped.with_name(swapped.name + ".moved"))
            swapped.symlink_to(host)
            swaps.append(swapped)

    def os_open(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        swap(path, dir_fd)
        return real_os_open(path, flags, mode, dir_fd=dir_fd)

    def io_open(file: Any, *args: Any, **kw: Any) -> Any:
        swap(file)
        return real_io_open(file, *args, **kw)

    def run(argv: Any, *args: Any, cwd: Any = None, **kw: Any) -> Any:
        for part in argv if isinstance(argv, list) else []:
            swap(Path(cwd or ".", part))  # a tool the host starts (ruff) opens it next
        return real_run(argv, *args, cwd=cwd, **kw)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(io, "open", io_open)
    monkeypatch.setattr(subprocess, "run", run)
    return swaps


def test_a_regex_count_does_not_read_a_file_swapped_for_a_link(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = calc / "calc" / "ops.py"
    swaps = swap_when_opened(monkeypatch, target, target, HOST_FILE)
    spec = {"type": "PythonFileRegExpCountVerifier", "search_in": "calc/ops.py"}
    result = run_verifier({**spec, "reg_exp_pattern": HOST_WORD}, VerifyContext(repo=calc))
    assert swaps and result.status == "fail", result.reason
    assert result.reason.startswith("0 matches in 0 files")


def test_a_repository_named_relative_to_the_working_folder_is_read(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`verify --repo calc` or `run --out runs/new`: the files found below a relative repository
    path are read from it, not from the repository joined with that path again."""
    monkeypatch.chdir(calc.parent)
    spec = {"type": "PythonFileRegExpCountVerifier", "search_in": "calc", "reg_exp_pattern": "def"}
    result = run_verifier(spec, VerifyContext(repo=Path(calc.name)))
    assert result.status == "pass" and result.reason.startswith("2 matches in 2 files"), (
        result.reason
    )


def test_a_regex_count_does_not_read_through_a_folder_swapped_for_a_link(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder above the file is swapped: a check of the file's own name cannot see it."""
    host = calc.parent / "host"
    host.mkdir()
    (host / "ops.py").write_bytes(HOST_FILE.read_bytes())
    swaps = swap_when_opened(monkeypatch, calc / "calc" / "ops.py", calc / "calc", host)
    spec = {"type": "PythonFileRegExpCountVerifier", "search_in": "calc"}
    result = run_verifier({**spec, "reg_exp_pattern": HOST_WORD}, VerifyContext(repo=calc))
    assert swaps and result.status == "fail", result.reason


def test_an_exact_match_does_not_compare_a_file_swapped_for_a_link(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The expected text is the host file's: read through the link, the agent's file matched."""
    (calc / "expected.txt").write_bytes(HOST_FILE.read_bytes())
    target = calc / "calc" / "ops.py"
    swaps = swap_when_opened(monkeypatch, target, target, HOST_FILE)
    pair = {"actual_file_path": "calc/ops.py", "expected_file_path": "expected.txt"}
    spec = {"type": "ExactFileMatchVerifier", "file_matches": [pair]}
    result = run_verifier({**spec, "check_other_files_unchanged": False}, VerifyContext(repo=calc))
    assert swaps and result.status == "fail", result.reason


@pytest.mark.parametrize(
    ("name", "source"),
    [("calc/ops.py", "x = 1\n"), ("src/Clean.java", "class Clean { int f() { return 1; } }\n")],
)
def test_ide_errors_do_not_analyse_a_file_swapped_for_a_link(
    calc: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str
) -> None:
    """ruff and the syntax check showed the host file's errors (with its text, for Java) to the
    simulated user and the judge."""
    target = calc / name
    target.parent.mkdir(exist_ok=True)
    target.write_text(source)
    swaps = swap_when_opened(monkeypatch, target, target, HOST_FILE)
    report = ide_errors(calc, [name], "auto")
    assert swaps and report is not None and not any(report.errors.values()), report.render()


def test_a_test_report_swapped_for_a_link_is_not_collected(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = calc / "coverage.json"
    report.write_text("{}\n")
    swaps = swap_when_opened(monkeypatch, report, report, HOST_FILE)
    found = sandbox._collect_reports(calc, brought={})
    assert swaps and found == {}, found


def test_a_worktree_git_file_swapped_for_a_link_does_not_bind_the_host_folder(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `.git` file names folders that the sandboxed git is shown: a link to a host file
    naming a host git folder showed that folder."""
    host_git = calc / ".git"
    agent = calc.parent / "agent-copy"
    agent.mkdir()
    (agent / ".git").write_text("gitdir: nowhere\n")
    (calc.parent / "host-git-file").write_text(f"gitdir: {host_git}\n")
    swaps = swap_when_opened(
        monkeypatch, agent / ".git", agent / ".git", calc.parent / "host-git-file"
    )
    assert repo_git._linked_git_dirs(agent) == [] and swaps


def place(tmp_path: Path, make: Callable[[Path], None]) -> Path:
    root = tmp_path / "work"
    (root / "src").mkdir(parents=True)
    make(root)
    return root


def test_a_link_anywhere_on_the_way_is_refused(tmp_path: Path) -> None:
    """Links made before the read: to a host file, through a linked folder, or to a file of
    the workspace itself (refused too: only the file's own name is read)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.py").write_bytes(HOST_FILE.read_bytes())
    root = place(tmp_path, lambda r: (r / "src" / "real.py").write_text("x = 1\n"))
    (root / "linked").symlink_to(outside)
    (root / "src" / "host.py").symlink_to(HOST_FILE)
    (root / "src" / "alias.py").symlink_to(root / "src" / "real.py")
    for name in ("linked/a.py", "src/host.py", "src/alias.py", "../outside/a.py", "/etc/passwd"):
        with pytest.raises(NotInsideError):
            read_inside(root, name, 1000)
    assert read_inside(root, "src/real.py", 1000) == b"x = 1\n"
    assert read_inside(root, root / "src" / "real.py", 1000) == b"x = 1\n"


def test_only_regular_files_within_the_bound_are_read(tmp_path: Path) -> None:
    root = place(tmp_path, lambda r: (r / "big.txt").write_bytes(b"x" * 101))
    os.mkfifo(root / "fifo")  # opening it for reading would wait for a writer for ever
    with pytest.raises(NotInsideError):
        read_inside(root, "fifo", 100)
    with pytest.raises(NotInsideError):
        read_inside(root, "src", 100)
    with pytest.raises(TooLargeError):
        read_inside(root, "big.txt", 100)
    with pytest.raises(FileNotFoundError):
        read_inside(root, "gone.txt", 100)
    assert len(read_inside(root, "big.txt", 101)) == 101
