"""The folder an agent works in during a scenario run: a copy of the project, committed as the
base revision so the verifiers and the simulator see exactly what the agent changed.

A copy rather than the project itself, so a run can never damage the user's checkout, and each
scenario × persona starts from the same state. The copy is kept in the run's output folder:
`agentlens verify` and `agentlens review --repo` can be run on it afterwards."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentlens.errors import ConfigError
from agentlens.redaction import masked_tail
from agentlens.verification.base_index import NO_USER_EXCLUDES, BaseIndex, BaseIndexError
from agentlens.verification.repo_git import PLAIN_DIFF, GitResult, GitView, run_git
from agentlens.verification.sandbox import IGNORED_NAMES, run_command
from agentlens.verification.verifiers.build import BUILD_TOOLS

GIT_IDENTITY = ("-c", "user.name=AgentLens", "-c", "user.email=scenario@agentlens")
LISTING_TIMEOUT_S = 30.0
"""For all the git calls of one listing of the changes (the simulator's diff after a turn, the
final diff a review reads): each call had 60 s, or 600 s, and a FIFO the agent left as
`.git/info/exclude` held every turn for 60 s. The whole diff of a usual turn takes 1-2 s."""


@dataclass
class Workspace:
    path: Path
    base: str
    """The commit the agent starts from."""


def prepare(project: Path, target: Path, *, leave_out: Path | None = None) -> Workspace:
    """Copy `project` (work tree, without its .git) to `target` and commit it as the base.
    `leave_out` is not copied: the run's output folder, when it lies inside the project (else
    each run would copy the earlier ones, and the copy would recurse into itself)."""
    if not project.is_dir():
        raise ConfigError(f"{project}: project folder not found")
    if target.exists():
        shutil.rmtree(target)
    by_name = shutil.ignore_patterns(".git", *IGNORED_NAMES)
    skipped = {target.resolve(), *([leave_out.resolve()] if leave_out else [])}
    holders = {path.parent for path in skipped}

    def ignore(folder: str, names: list[str]) -> set[str]:
        left_out = set(by_name(folder, names))
        here = Path(folder).resolve()
        if here in holders:  # one resolve per folder, not per file
            left_out |= {name for name in names if here / name in skipped}
        return left_out

    shutil.copytree(project, target, symlinks=True, ignore=ignore)
    _git(target, "init", "-q", "-b", "main")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "--allow-empty", "-m", "scenario base")
    return Workspace(target, _git(target, "rev-parse", "HEAD").strip())


def run_preprocessors(workspace: Workspace, preprocessors: list[dict[str, Any]]) -> None:
    """Build steps the released runner does before the agent starts (e.g. `mvn install`).
    A preprocessor is `{"command": [...] | "..."}` (or the released `tasks` list), run in the
    workspace; what it leaves is committed on top, so it is not counted as the agent's change."""
    for spec in preprocessors:
        argv = _preprocessor_command(spec)
        result = run_command(argv, workspace.path, timeout_s=float(spec.get("timeout_s", 600)))
        if not result.ok:
            said = result.stopped or masked_tail(result.output, 500)
            raise ConfigError(f"preprocessor {argv} failed: {said}")
    if preprocessors:
        _git(workspace.path, "add", "-A")
        _git(workspace.path, "commit", "-q", "--allow-empty", "-m", "scenario preprocessors")
        workspace.base = _git(workspace.path, "rev-parse", "HEAD").strip()


def _preprocessor_command(spec: dict[str, Any]) -> list[str] | str:
    """`command` as given, or the released `RunBuildSystemTaskPreprocessor` shape:
    `build_system_name` (maven, gradle, npm) and its `tasks`, run as the build verifier runs them."""
    command = spec.get("command")
    if isinstance(command, str) and command.strip():
        return command
    if isinstance(command, list) and command:
        return [str(part) for part in command]
    tasks, tool = spec.get("tasks"), spec.get("build_system_name")
    if isinstance(tasks, list) and tasks and tool in BUILD_TOOLS:
        return [*BUILD_TOOLS[str(tool)], *map(str, tasks)]
    if isinstance(tasks, list) and tasks and tool is None:
        return [str(part) for part in tasks]
    raise ConfigError(f"preprocessor {spec!r} has no 'command' (nor 'tasks' of a known build tool)")


class WorkspaceGitError(ConfigError):
    """A git call on the workspace failed. `call` and `stopped` (AgentLens's stop line) are
    AgentLens's words; the message may also hold git's, which the agent's repository can write."""

    def __init__(self, call: str, repo: Path, why: str, *, stopped: str) -> None:
        super().__init__(f"{call} in {repo} failed: {why}")
        self.call, self.stopped = call, stopped


def replaced(workspace: Workspace) -> str:
    """Why the workspace folder is no longer the agent's to read, or "". The agent may write in
    the session folder that holds it, so it can rename it and leave a link in its place:
    copying or diffing it, as root, would read the link's target (a host folder; `/proc`, where
    a read blocks for ever) as the agent's work."""
    if workspace.path.is_symlink() or not workspace.path.is_dir():
        return f"the workspace {workspace.path} was replaced by a link or removed; it is not read"
    return ""


def diff_since_base(workspace: Workspace, timeout_s: float | None = None) -> str:
    """Everything the agent changed, new files included, without touching the workspace's index
    (a scratch index takes the `git add`)."""
    return changes_since_base(workspace, timeout_s)[0]


def changes_since_base(
    workspace: Workspace, timeout_s: float | None = None
) -> tuple[str, list[str]]:
    """The diff since the base, and the files that changed and still exist (for IDE errors);
    `timeout_s` (else `LISTING_TIMEOUT_S`) for all its git calls together."""
    if why := replaced(workspace):
        raise ConfigError(why)
    try:
        with BaseIndex.of(workspace.path, workspace.base, timeout_s or LISTING_TIMEOUT_S) as base:
            return _changes(workspace, base)
    except BaseIndexError as exc:
        raise WorkspaceGitError(exc.call, workspace.path, exc.why, stopped=exc.stopped) from None


def _changes(workspace: Workspace, base: BaseIndex) -> tuple[str, list[str]]:
    """Every change staged into `base`'s index (its one look at the config for every call:
    none of them writes it), then diffed. New files that only the agent's own ignore rules
    hide from `add -A` (its `.git/info/exclude`, a line it added to a `.gitignore`) are its
    change too: a planted `conftest.py` was missing from the diff the simulator and the judge
    read. They are listed before `add -A`, which makes every new file tracked."""
    hidden = base.hidden()

    def git(*args: str, check: bool = True, stdin: str = "") -> str:
        call = _call_name(args)
        proc = _run(workspace.path, *args, index=base.folder, view=base.view, stdin=stdin,
                    timeout_s=base.clock.left(call))  # fmt: skip
        # `check=False` lets git's own failure pass, never AgentLens's stop of it (a filter
        # killed for memory leaves its result partial)
        if (check or proc.stopped) and proc.failure():
            why, stopped = base.clock.failure(proc)
            raise WorkspaceGitError(call, workspace.path, why, stopped=stopped)
        return proc.stdout

    # a nested repository without commits makes `add` fail for that folder only: go on
    git(*NO_USER_EXCLUDES, "add", "-A", "--ignore-errors", check=False)
    if hidden:  # by name: git matches each name against each given (`add -f` of 20,000: 25 s)
        listing = "".join(name + "\0" for name in sorted(hidden))
        git("add", "-f", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul",
            check=False, stdin=listing)  # fmt: skip
    diff = git("diff", *PLAIN_DIFF, "--cached", "--no-color", workspace.base)
    names = git("diff", "--cached", "--name-only", "-z", "--diff-filter=d", workspace.base)
    return diff, [name for name in names.split("\0") if name]


def _git(repo: Path, *args: str) -> str:
    """Sandboxed (`repo_git`): after a preprocessor, `.git/config` is its own."""
    proc = _run(repo, *args, index=None, view=None, stdin="", timeout_s=600)
    if why := proc.failure():
        raise WorkspaceGitError(_call_name(args), repo, why, stopped=proc.stopped)
    return proc.stdout


def _run(
    repo: Path, *args: str, index: Path | None, view: GitView | None, stdin: str, timeout_s: float
) -> GitResult:
    """`index`: a scratch folder for the index file, instead of the workspace's own; `view`: the
    listing's look at the config (else one for this call)."""
    env = {"GIT_INDEX_FILE": str(index / "index")} if index else {}
    writable = [repo.parent, *([index] if index else [])]
    return run_git(
        repo, *GIT_IDENTITY, *args, env=env, writable=writable, timeout_s=timeout_s, stdin=stdin,
        view=view,
    )  # fmt: skip


def _call_name(args: tuple[str, ...]) -> str:
    """`git add -A` for `-c key=value add -A ...`: the command, not the settings before it."""
    command = 0
    while args[command : command + 1] == ("-c",):
        command += 2
    return f"git {' '.join(args[command : command + 2])}"
