"""git on an agent's repository through an index of AgentLens's own, read from the base
revision: what changed since the base, and the diff of it, as the repository's files are, not as
the agent's index, config or ignore rules would show them. Used by the verifiers (`changed_files`),
the scenario workspace (its new files) and `review --repo` (the judge's diff)."""

from __future__ import annotations

import math
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from agentlens.verification import repo_git
from agentlens.verification.repo_git import (
    GIT_TIMEOUT_S,
    PLAIN_DIFF,
    TIMED_OUT_EXIT,
    GitResult,
    run_git,
)


class BaseIndexError(Exception):
    """A git call of the listing failed or was stopped; `why` is git's or the sandbox's line,
    `stopped` the sandbox's alone ("" when git itself failed)."""

    def __init__(self, call: str, repo: Path, why: str, stopped: str = "") -> None:
        super().__init__(f"{call} failed in {repo}: {why}")
        self.call, self.why, self.stopped = call, why, stopped


class BaseIndex:
    """git on the repository with an index of AgentLens's own, read from the base revision, so
    that a path is tracked iff it is in the base. The agent's index is its to write: a file it
    marked skip-worktree or assume-unchanged (`git update-index`) was no change, whatever it
    held."""

    def __init__(
        self, repo: Path, base_ref: str, folder: Path, timeout_s: float | None = None
    ) -> None:
        self.repo, self.base_ref = repo, base_ref
        self.env = {"GIT_INDEX_FILE": str(folder / "index")}
        self.folder = folder
        self.clock = _Clock(timeout_s, repo)
        # one look at the repository's config
        self.view = repo_git.plain_view(
            repo.resolve(), self.clock.left("git config"), freeze_in=folder
        )

    @classmethod
    @contextmanager
    def of(cls, repo: Path, base_ref: str, timeout_s: float | None = None) -> Iterator[BaseIndex]:
        """`timeout_s`: for all its git calls together (a verifier's), else 60 s for each."""
        with tempfile.TemporaryDirectory(prefix="agentlens-index-") as tmp:
            made = cls(repo, base_ref, Path(tmp), timeout_s)
            made.run("read-tree", base_ref)
            yield made

    def run(self, *args: str, stdin: str = "", fine: tuple[int, ...] = (0,)) -> str:
        """git's output; BaseIndexError when it exits otherwise than `fine` or was stopped."""
        call = f"git {' '.join(args)}"
        proc = run_git(
            self.repo, *args, env=self.env, writable=[self.folder], stdin=stdin, view=self.view,
            timeout_s=self.clock.left(call),
        )  # fmt: skip
        if proc.returncode not in fine or proc.stopped:
            raise BaseIndexError(call, self.repo, *self.clock.failure(proc))
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

    def diff(self) -> str:
        """Everything changed since the base as one diff, each new file with its content (also
        one only the agent's ignore rules hide: `untracked`). The agent's index marked an edit
        skip-worktree and the diff had none; new files were never in it. `add -N` writes the
        empty blob: into a folder of AgentLens's own, the repository's objects read beside it."""
        objects = Path(self.run("rev-parse", "--git-path", "objects").strip())
        private = self.folder / "objects"
        private.mkdir()
        self.env |= {
            "GIT_OBJECT_DIRECTORY": str(private),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.repo.resolve() / objects),
        }
        # by name only those the agent's own rules hide: git matches each name given against
        # each path, so 40,000 new files named took 38 s; `add -A` walks them once
        # `--ignore-errors`: a nested repository without commits (`git init sub`) failed the
        # whole diff; it is left out, every other file goes in
        if hidden := self.hidden():
            listing = "".join(name + "\0" for name in sorted(hidden))
            self.run("--literal-pathspecs", "add", "-N", "-f", "--ignore-errors",
                     "--pathspec-from-file=-", "--pathspec-file-nul",
                     stdin=listing, fine=(0, 1))  # fmt: skip
        self.run(*NO_USER_EXCLUDES, "add", "-N", "-A", "--ignore-errors", fine=(0, 1))
        return self.run("diff", *PLAIN_DIFF, self.base_ref)

    def untracked(self) -> set[str]:
        """Paths not in the base, but for those a rule of the base revision's own `.gitignore`
        files ignores. Every other rule is the agent's to write: `.git/info/exclude` and
        `core.excludesFile` hid a planted `conftest.py` from `forbidden_globs`, and so would a
        line it added to a `.gitignore`, or a `.gitignore` it added (naming itself too)."""
        return self.shown() | self.hidden()

    def shown(self) -> set[str]:
        """Paths not in the base that no ignore rule hides (the agent's `core.excludesFile` is
        not read): what `add -A` adds under `NO_USER_EXCLUDES`."""
        return self.names(*NO_USER_EXCLUDES, "ls-files", "--others", "--exclude-standard")

    def hidden(self) -> set[str]:
        """Paths not in the base that only rules the base revision does not hold ignore."""
        # a whole ignored folder is one name (a `node_modules/` of 60,000 files is one rule)
        ignored = self._hidden(self._ignored("--directory"))
        folders = sorted(name for name in ignored if name.endswith("/"))
        if folders:  # hidden by no rule of the base: each file in it is judged
            inside = self._ignored("--", *(f":(literal){name}" for name in folders))
            ignored = (ignored - set(folders)) | self._hidden(inside)
        return ignored

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
        call = f"git show {self.base_ref}:{source}"
        proc = run_git(self.repo, "show", f"{self.base_ref}:{source}", view=self.view,
                       writable=[self.folder], timeout_s=self.clock.left(call))  # fmt: skip
        if proc.stopped:
            raise BaseIndexError(call, self.repo, *self.clock.failure(proc))
        if proc.returncode != 0:  # not in the base revision
            return set()
        return {line.rstrip() for line in proc.stdout.splitlines()}


class _Clock:
    """What is left of a listing's `timeout_s` for its next git call; with none, each call
    has git's 60 s. A verifier's listing had 60 s a call, and its failure was not kept: a FIFO
    the agent left as `.git/info/exclude` made two checks with a 5 s timeout take 120 s."""

    def __init__(self, timeout_s: float | None, repo: Path) -> None:
        self.timeout_s, self.repo = timeout_s, repo
        self.deadline = math.inf if timeout_s is None else time.monotonic() + timeout_s

    def left(self, call: str) -> float:
        """Seconds for `call`; BaseIndexError when none are left."""
        if self.timeout_s is None:
            return GIT_TIMEOUT_S
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise BaseIndexError(call, self.repo, self._late(), self._late())
        return left

    def failure(self, proc: GitResult) -> tuple[str, str]:
        """Why `proc` failed, and AgentLens's stop line: its timeout as this listing's."""
        if proc.stopped and proc.returncode == TIMED_OUT_EXIT and self.timeout_s is not None:
            return f"{self._late()} (its result would be incomplete)", self._late()
        return proc.failure() or f"exit code {proc.returncode}", proc.stopped

    def _late(self) -> str:
        return f"timed out: listing the changes took over the {self.timeout_s:g} s timeout"


# the repository's config is the agent's: the ignore file it names is not read (its
# `.git/info/exclude` is always read, so each rule's file is judged instead)
NO_USER_EXCLUDES = ("-c", f"core.excludesFile={os.devnull}")
