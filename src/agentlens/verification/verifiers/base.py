"""The verifier seam: a verifier looks at the final repository (and the trajectory) and returns
pass / fail / error with a human-readable reason and metrics. Errors and timeouts count as failures
for the scenario verdict (spec §3). `skipped`: the check's tool is not installed (`tools`), so it
was not run; it is neither a pass nor a fail, and leaves its scenario unscored unless another
check failed."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from agentlens.redaction import masked_tail
from agentlens.trajectory import Trajectory
from agentlens.verification import repo_git
from agentlens.verification.repo_git import run_git

if TYPE_CHECKING:
    from agentlens.verification.sandbox import CommandResult

Status = Literal["pass", "fail", "error", "skipped"]


@dataclass
class VerifierResult:
    """One verifier's verdict. `metrics` holds counts (tests, matches, …) for reports."""

    type: str
    status: Status
    reason: str
    metrics: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0
    name: str | None = None

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def skipped(self) -> bool:
        return self.status == "skipped"

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "name": self.name,
            "status": self.status,
            "reason": self.reason,
            "metrics": self.metrics,
            "duration_s": round(self.duration_s, 3),
        }


@dataclass
class VerifyContext:
    """What a verifier may look at: the repository after the agent's run, the git revision it
    started from, (optionally) the trajectory for chat checks, and the scenario's folder (where
    the released scenarios keep expected files)."""

    repo: Path
    base_ref: str = "HEAD"
    trajectory: Trajectory | None = None
    timeout_s: float = 300.0
    scenario_dir: Path | None = None

    def __post_init__(self) -> None:
        # absolute once: files found below it are read from a descriptor of it (`read_inside`),
        # which takes a relative path as relative to the repository, not to the working folder
        self.repo = self.repo.absolute()

    def changed_files(self) -> set[str]:
        """Paths (relative, posix) modified, added or deleted since `base_ref`, untracked included."""
        with _BaseIndex.of(self.repo, self.base_ref) as base:
            return base.names("diff", "--name-only") | base.untracked()

    def new_files(self) -> set[str]:
        """Paths added since `base_ref` (committed or not), untracked included."""
        with _BaseIndex.of(self.repo, self.base_ref) as base:
            return base.untracked()


class _BaseIndex:
    """git on the repository with an index of AgentLens's own, read from the base revision, so
    that a path is tracked iff it is in the base. The agent's index is its to write: a file it
    marked skip-worktree or assume-unchanged (`git update-index`) was no change, whatever it
    held."""

    def __init__(self, repo: Path, base_ref: str, folder: Path) -> None:
        self.repo, self.base_ref = repo, base_ref
        self.env = {"GIT_INDEX_FILE": str(folder / "index")}
        self.folder = folder
        self.view = repo_git.plain_view(repo.resolve())  # one look at the repository's config

    @classmethod
    @contextmanager
    def of(cls, repo: Path, base_ref: str) -> Iterator[_BaseIndex]:
        with tempfile.TemporaryDirectory(prefix="agentlens-index-") as tmp:
            made = cls(repo, base_ref, Path(tmp))
            made.run("read-tree", base_ref)
            yield made

    def run(self, *args: str, stdin: str = "", fine: tuple[int, ...] = (0,)) -> str:
        """git's output; VerifierSetupError when it exits otherwise than `fine` or was stopped."""
        proc = run_git(
            self.repo, *args, env=self.env, writable=[self.folder], stdin=stdin, view=self.view
        )
        if proc.returncode not in fine or proc.stopped:
            why = proc.failure() or f"exit code {proc.returncode}"
            raise VerifierSetupError(f"git {' '.join(args)} failed in {self.repo}: {why}")
        return proc.stdout

    def names(self, *args: str) -> set[str]:
        """The paths a git listing names, as they are: one per NUL (`-z`, right after the
        command, which `-c key=value` pairs may precede). Per line, git quotes a name with a byte
        outside ASCII or a control (`"src/caf\\303\\251.py"`), which then matched no glob or
        target, and a name holding a newline would be two."""
        command = 0
        while args[command] == "-c":
            command += 2
        named = self.run(*args[: command + 1], "-z", *args[command + 1 :])
        return {name for name in named.split("\0") if name}

    def untracked(self) -> set[str]:
        """Paths not in the base, but for those a rule of the base revision's own `.gitignore`
        files ignores. Every other rule is the agent's to write: `.git/info/exclude` and
        `core.excludesFile` hid a planted `conftest.py` from `forbidden_globs`, and so would a
        line it added to a `.gitignore`, or a `.gitignore` it added (naming itself too)."""
        shown = self.names(*NO_USER_EXCLUDES, "ls-files", "--others", "--exclude-standard")
        # a whole ignored folder is one name (a `node_modules/` of 60,000 files is one rule)
        ignored = self._hidden(self._ignored("--directory"))
        folders = sorted(name for name in ignored if name.endswith("/"))
        if folders:  # hidden by no rule of the base: each file in it is judged
            inside = self._ignored("--", *(f":(literal){name}" for name in folders))
            ignored = (ignored - set(folders)) | self._hidden(inside)
        return shown | ignored

    def _ignored(self, *args: str) -> set[str]:
        return self.names(
            *NO_USER_EXCLUDES, "ls-files", "--others", "--ignored", "--exclude-standard", *args
        )

    def _hidden(self, paths: set[str]) -> set[str]:
        """The ignored `paths` that no line of the base revision's own `.gitignore` ignores."""
        if not paths:
            return set()
        rules = self._ignoring_rules(paths)
        base = {source: self._base_lines(source) for source in {s for s, _ in rules.values()}}
        return {
            path
            for path in paths
            if path not in rules or rules[path][1] not in base[rules[path][0]]
        }

    def _ignoring_rules(self, paths: set[str]) -> dict[str, tuple[str, str]]:
        """Each ignored path's rule: the file holding it and its line (`git check-ignore -v`)."""
        listing = "".join(path + "\0" for path in sorted(paths))
        said = self.run(
            *NO_USER_EXCLUDES, "check-ignore", "-v", "-n", "-z", "--no-index", "--stdin",
            stdin=listing, fine=(0, 1),  # 1: none of them ignored
        )  # fmt: skip
        fields = said.split("\0")
        rules = {fields[i + 3]: (fields[i], fields[i + 2]) for i in range(0, len(fields) - 3, 4)}
        return {path: rule for path, rule in rules.items() if rule[0]}

    def _base_lines(self, source: str) -> set[str]:
        """The lines of `source` in the base revision when it is a `.gitignore` there."""
        if PurePosixPath(source).name != ".gitignore" or source.startswith("/"):
            return set()
        proc = run_git(self.repo, "show", f"{self.base_ref}:{source}", view=self.view)
        if proc.returncode != 0:  # not in the base revision
            return set()
        return {line.rstrip() for line in proc.stdout.splitlines()}


# the repository's config is the agent's: the ignore file it names is not read (its
# `.git/info/exclude` is always read, so each rule's file is judged instead)
NO_USER_EXCLUDES = ("-c", f"core.excludesFile={os.devnull}")


@runtime_checkable
class Verifier(Protocol):
    """Declared per scenario as `{"type": ..., fields}`; `verify` never raises for bad outcomes."""

    type_name: str

    def verify(self, ctx: VerifyContext) -> VerifierResult: ...


OUTPUT_TAIL_CHARS = 2000


def output_tail(output: str, chars: int = OUTPUT_TAIL_CHARS) -> str:
    """The end of a command's output that a result keeps (its `output_tail`, a reason's quote):
    masked before it is cut, since a key whose start the cut took is no key to any detector and
    a result is stored, reported and read by the judge."""
    return masked_tail(output, chars)


def run_metrics(run: CommandResult) -> dict[str, Any]:
    """A command's exit code and output tail, and the sandbox's notes on how it ran and its
    line on why it stopped the command apart (`sandbox_notes`, `stopped`): they are AgentLens's
    words, which no pattern of the user's may match."""
    metrics: dict[str, Any] = {"exit_code": run.returncode, "output_tail": output_tail(run.output)}
    if run.notes:
        metrics["sandbox_notes"] = run.notes
    if run.stopped:
        metrics["stopped"] = run.stopped
    return metrics


def stopped_result(type_name: str, what: str, run: CommandResult) -> VerifierResult | None:
    """An error saying why AgentLens stopped `what` (the disk floor, its memory, never started),
    None if it did not: like a timeout, what a stopped command printed is no verdict."""
    if not run.stopped:
        return None
    return VerifierResult(type_name, "error", f"{what} {run.stopped}", run_metrics(run))


class VerifierSetupError(Exception):
    """The verifier could not run (not a git repo, bad base ref…); becomes status `error`."""
