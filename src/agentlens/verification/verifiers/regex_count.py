"""Regex count checks over files or folders (optionally ignoring comments), over the chat, and
over the chat plus tool-call arguments. `strict_count` demands exactly `num_expected` matches;
otherwise at least `num_expected`."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import orjson

from agentlens.list_text import counted, cut_name
from agentlens.verification.inside import read_text_inside
from agentlens.verification.verifiers.base import (
    VerifierResult,
    VerifierSetupError,
    VerifyContext,
)

C_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
HASH_COMMENTS = re.compile(r"#[^\n]*")
SKIPPED_DIRS = {".git", "node_modules", "target", "build", "__pycache__", ".venv"}
# A folder is searched in every file but these, as the released verifiers do (Java skips class
# files, Python files without an extension); build output and VCS folders are skipped too.
IGNORED_SUFFIXES = {"java": {".class"}, "python": {""}}


class _Clock:
    """A count's timeout (the verifiers'): it had none, whatever the repository held."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.deadline = time.monotonic() + timeout_s

    def check(self) -> None:
        if time.monotonic() > self.deadline:
            raise VerifierSetupError(f"counting took over the {self.timeout_s:g} s timeout")


def _files_below(root: Path, clock: _Clock) -> Iterator[Path]:
    """The files below `root` but in `SKIPPED_DIRS`, through no link, walked on a stack:
    `Path.rglob` nests a call per folder, and a repository nesting 1,500 folders made the
    check an error saying only `RecursionError: maximum recursion depth exceeded`."""
    folders = [root]
    while folders:
        clock.check()
        folder = folders.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as exc:
            why = exc.strerror or exc
            raise VerifierSetupError(f"cannot list {cut_name(str(folder))}: {why}") from None
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_DIRS:
                    folders.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                yield Path(entry.path)


def _verdict(type_name: str, count: int, expected: int, strict: bool, where: str) -> VerifierResult:
    ok = count == expected if strict else count >= expected
    rule = f"exactly {expected}" if strict else f"at least {expected}"
    return VerifierResult(
        type_name,
        "pass" if ok else "fail",
        f"{counted(count, 'match')} in {where}; expected {rule}",
        {"count": count},
    )


@dataclass
class FileRegExpCountVerifier:
    """Count matches in a file or every file below a folder (`search_in`); `uncommented_only`
    strips the language's comments (`//` and `/* */` for Java, `#` for Python)."""

    type_name: ClassVar[str] = "FileRegExpCountVerifier"
    search_in: str = "."
    reg_exp_pattern: str = ""
    strict_count: bool = False
    num_expected: int = 1
    uncommented_only: bool = False
    language: str = "java"

    def verify(self, ctx: VerifyContext) -> VerifierResult:
        root = ctx.repo / self.search_in
        if not root.exists():
            raise VerifierSetupError(
                f"search_in '{self.search_in}' does not exist in the repository"
            )
        pattern = re.compile(self.reg_exp_pattern, re.MULTILINE)
        clock = _Clock(ctx.timeout_s)  # the repository's files, and their number, are the agent's
        files = [root] if root.is_file() else self._sources(root, clock)
        count = read = 0
        for file in files:  # one text at a time: the repository's files may weigh gigabytes
            clock.check()
            text = self._text(ctx.repo, file)
            if text is not None:
                count += sum(1 for _ in pattern.finditer(text))
                read += 1
        return _verdict(
            self.type_name,
            count,
            self.num_expected,
            self.strict_count,
            f"{counted(read, 'file')} searched",
        )

    def _sources(self, root: Path, clock: _Clock) -> Iterable[Path]:
        ignored = IGNORED_SUFFIXES.get(self.language, set())
        return (path for path in _files_below(root, clock) if path.suffix not in ignored)

    def _text(self, repo: Path, path: Path) -> str | None:
        """The file's text; None for one that links out of the repository (or is gone)."""
        text = read_text_inside(repo, path)
        if text is None or not self.uncommented_only:
            return text
        comments = HASH_COMMENTS if self.language == "python" else C_COMMENTS
        return comments.sub("", text)


@dataclass
class JavaFileRegExpCountVerifier(FileRegExpCountVerifier):
    type_name: ClassVar[str] = "JavaFileRegExpCountVerifier"
    language: str = "java"


@dataclass
class PythonFileRegExpCountVerifier(FileRegExpCountVerifier):
    type_name: ClassVar[str] = "PythonFileRegExpCountVerifier"
    language: str = "python"


@dataclass
class ChatRegExpCountVerifier:
    """Count matches in what the agent wrote: its messages and the text of its tool-calling
    steps, as the released verifier counts assistant messages only (the user's or simulator's
    words must not satisfy a check on the agent). `ChatOrToolRegExpCountVerifier` adds the tool
    calls' arguments and results."""

    type_name: ClassVar[str] = "ChatRegExpCountVerifier"
    reg_exp_pattern: str = ""
    strict_count: bool = False
    num_expected: int = 1
    include_tool_arguments: bool = False

    def verify(self, ctx: VerifyContext) -> VerifierResult:
        if ctx.trajectory is None:
            raise VerifierSetupError(f"{self.type_name} needs a trajectory (pass --trajectory)")
        pattern = re.compile(self.reg_exp_pattern, re.MULTILINE)
        count = 0
        for step in ctx.trajectory.steps:
            if step.kind not in ("agent", "tool"):
                continue
            count += len(pattern.findall(step.text or ""))
            if self.include_tool_arguments and step.kind == "tool":
                if step.arguments:
                    count += len(pattern.findall(orjson.dumps(step.arguments).decode()))
                count += len(pattern.findall(step.observation or ""))
        where = "agent messages"
        if self.include_tool_arguments:
            where += ", tool arguments and results"
        return _verdict(self.type_name, count, self.num_expected, self.strict_count, where)


@dataclass
class ChatOrToolRegExpCountVerifier(ChatRegExpCountVerifier):
    type_name: ClassVar[str] = "ChatOrToolRegExpCountVerifier"
    include_tool_arguments: bool = True
