"""AgentLens's own git calls on an agent's repository: diffs, changed files, workspace commits.

The repository's `.git/config` and `.gitattributes` are the agent's, and git runs the programs
they name (clean and smudge filters, textconv, external diffs, fsmonitor hooks) while it diffs
or adds. So git runs in the sandbox like every other command on the repository: it sees the
repository (read-only unless `writable` says otherwise) and the system, nothing else, and those
programs run there. `GIT_HARDENING` still switches off what it can by name, and neither the
system's nor the user's git config is read."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from agentlens.verification import isolation
from agentlens.verification.inside import read_inside
from agentlens.verification.isolation import GIT_HARDENING
from agentlens.verification.memory_group import memory_group

GIT_ISOLATION = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
# After `diff`: the patch as git makes it, not what the agent's external diff or textconv
# driver prints instead (they run sandboxed, but what they print was the diff a review showed)
PLAIN_DIFF = ("--no-ext-diff", "--no-textconv")


def run_git(
    repo: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    writable: Sequence[Path] = (),
    timeout_s: float = 60.0,
) -> subprocess.CompletedProcess[str]:
    """`git -C repo ARGS`, isolated; stdout and stderr as text (undecodable bytes replaced).
    A timeout is exit code 124 with the reason on stderr; a process killed for the memory of
    its group ends stderr with the group's stop note, as every sandboxed command's output does."""
    repo = repo.resolve()  # the sandbox binds and enters real paths
    argv = ["git", "-C", str(repo), *GIT_HARDENING, *args]
    base = {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8", **GIT_ISOLATION}
    policy = isolation.current()
    with memory_group(policy.limits.memory_mb) as memory:
        wrapped = isolation.isolate(
            argv,
            workdir=repo,
            writable=writable,
            isolation=policy,
            memory=memory,
            readable=[repo, *_linked_git_dirs(repo)],
        )
        try:
            done = subprocess.run(
                wrapped.argv,
                capture_output=True,
                text=True,
                errors="replace",
                env={**base, **(env or {})},
                stdin=subprocess.DEVNULL,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:  # the sandbox died with its first process
            return subprocess.CompletedProcess(argv, 124, "", f"timed out after {timeout_s:g} s")
        if not_started := memory.not_started_note(done.returncode):
            done.stderr = not_started
        elif memory.oom_killed():  # a filter or textconv program of the agent's, say
            done.stderr = f"{done.stderr.rstrip()}\n{memory.stop_note()}".lstrip("\n")
        return done


def _linked_git_dirs(repo: Path) -> list[Path]:
    """Where a linked worktree's `.git` file points (its git folder and the common one): bound
    read-only, so git finds them; their config is the host repository's, not the agent's."""
    try:
        first = read_inside(repo, ".git", 4096).decode(errors="replace").partition("\n")[0]
    except OSError:  # a folder (a plain repository), a link, or nothing
        return []
    if not first.startswith("gitdir:"):
        return []
    git_dir = (repo / first.removeprefix("gitdir:").strip()).resolve()
    if not _names_back(git_dir, repo):
        return []
    # git lays a worktree's folder out as <common>/worktrees/<name>; its `commondir` file says
    # so too, but that file may be the agent's (a git folder made inside the repository)
    found = [git_dir, git_dir.parent.parent] if git_dir.parent.name == "worktrees" else [git_dir]
    return [p for p in found if (p / "HEAD").is_file()]  # git folders, not any folder named


def _names_back(git_dir: Path, repo: Path) -> bool:
    """git's own link of a worktree: its git folder's `gitdir` file names the `.git` file back.
    A hostile repository's `.git` file can name any git folder on the host, whose committed
    files would then be diffed against the work tree and shown to the review; the host folder's
    back-link is not the agent's to write."""
    try:
        back = (git_dir / "gitdir").read_text(errors="replace").strip()
    except OSError:
        return False
    return bool(back) and (git_dir / back).resolve() == (repo / ".git").resolve()
