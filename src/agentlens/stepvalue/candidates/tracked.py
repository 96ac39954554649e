"""Which files belong to the task's repository, so fault-localisation candidates are never the
agent's scratch or report files (`/FIX_SUMMARY.md`, `reproduce_issue.py`).

With a checkout (`--repo`) the answer is `git ls-files`. Without one it is the evidence the runs
give: a file some run reads or edits and no run creates. Agents start from the same clean
checkout, so a file any run had to create is not in the repository.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentlens.errors import ConfigError
from agentlens.shell.working_dir import named_in, norm_path, repo_files, resolve, step_paths
from agentlens.trajectory import Step, ToolCategory, Trajectory
from agentlens.verification.isolation import GIT_HARDENING

SEEN_EXISTING = (ToolCategory.READ_FILE, ToolCategory.EDIT)
# Shell commands that write a file: `> f`, `>> f`, `tee [-a] f`, `touch f`, `cp|mv src f`.
SHELL_WRITE = re.compile(
    r"(?:>>?|\btee\s+(?:-a\s+)?|\btouch\s+|\b(?:cp|mv)\s+\S+\s+)[\s'\"]*([\w./-]+\.\w+)"
)
MISSING_FILE = re.compile(r"does not exist|no such file|not found", re.IGNORECASE)
# SWE-agent's `create` on a file the checkout has: "Error: File 'f' already exists."
ALREADY_THERE = re.compile(r"already exists", re.IGNORECASE)


def _saw_existing(step: Step) -> bool:
    """A read or edit that did not fail on a missing file (a typo'd path is no evidence)."""
    if step.category not in SEEN_EXISTING:
        return False
    return not (step.is_error or MISSING_FILE.search((step.observation or "")[:300]))


@dataclass(frozen=True)
class TrackedFiles:
    """Normalised repository paths and where the list came from (shown in the problem notes)."""

    paths: frozenset[str]
    source: str

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and norm_path(path) in self.paths


def created_files(runs: Iterable[Trajectory]) -> set[str]:
    """Normalised files any run creates: create-file steps and shell redirections (`cat > f`)."""
    created: set[str] = set()
    for run in runs:
        made = [f for s in run.steps for f in _made_by(s)]
        created.update(norm_path(f) for f in made)
        created.update(_spelt_in_full(run, [f for f in made if not f.startswith("/")]))
    return created


def _made_by(step: Step) -> list[str]:
    """Files the step makes, each resolved against the directory it was named in."""
    if step.category == ToolCategory.CREATE_FILE:
        refused = ALREADY_THERE.search((step.observation or "")[:300])
        return [] if refused else step_paths(step)
    if step.category == ToolCategory.RUN_COMMAND and step.command:
        written = SHELL_WRITE.findall(step.command)
        dirs = named_in(step.command, written, step.cwd)
        return [resolve(f, where) for f, where in zip(written, dirs, strict=True)]
    return []


def _spelt_in_full(run: Trajectory, relative: list[str]) -> set[str]:
    """The run's own spellings of files it made by a relative name in a directory its reader does
    not know: SWE-agent's `create f.py` names the file in the working directory, its edits by
    the open file's absolute path."""
    tails = tuple("/" + name for f in relative if (name := norm_path(f)))
    if not tails:
        return set()
    named = {f for s in run.steps for f in repo_files(s)}
    return {f for f in named if ("/" + f).endswith(tails)}


def tracked_from_runs(runs: Sequence[Trajectory], gold_files: Iterable[str] = ()) -> TrackedFiles:
    """Files the runs read or edit, plus the gold patch's files, minus every file a run creates."""
    seen = {f for run in runs for s in run.steps if _saw_existing(s) for f in repo_files(s)}
    seen |= {norm_path(f) for f in gold_files}
    paths = frozenset(seen - created_files(runs) - {""})
    return TrackedFiles(paths, f"read or edited by {len(runs)} runs, created by none")


def tracked_from_repo(repo: str | Path) -> TrackedFiles:
    """`git ls-files` of a checkout of the task's repository."""
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), *GIT_HARDENING, "ls-files", "-z"],  # no fsmonitor hook
            check=True,
            capture_output=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise ConfigError(f"{repo}: cannot list the repository's tracked files ({exc})") from exc
    paths = frozenset(p for p in out.decode("utf-8", "replace").split("\0") if p)
    if not paths:
        raise ConfigError(f"{repo}: git tracks no files there")
    return TrackedFiles(paths, f"git ls-files of {repo} ({len(paths)} files)")
