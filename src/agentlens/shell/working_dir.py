"""Where a file a step names is: its name joined to the directory it was named in.

An agent that `cd`s below the repository root names `NodeCursor.java` where its editor says
`/repo/src/main/java/.../NodeCursor.java`; `./x.py` and `a/../x.py` are `x.py`. A step starts
in `Step.cwd` (when its reader knows it) and each `cd DIR` its command runs before naming a file
moves it; a `cd` the line cannot follow (`cd -`, `cd $D`, `cd ~`) leaves later names as written.
`repo_files` then drops the container's checkout root, so a file has one name (step value's
candidates use it, and process states under `ProfileConfig.repo_relative_paths`).

A folder a trace records is untrusted text: `working_folder` keeps only an absolute POSIX path
of printable characters no longer than PATH_MAX, and readers leave `Step.cwd` unset otherwise.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from typing import Any

from agentlens.shell.heredocs import cut_heredocs
from agentlens.shell.tokens import SEPARATORS, words_and_operators
from agentlens.trajectory import Step

UNFOLLOWED = ("-", "~", "$")  # `cd -`, `cd ~/x`, `cd $DIR`: a directory the line does not say
# Checkout roots agents work in; a path under one is repository-relative after it.
WORKSPACE_ROOTS = ("testbed/", "agent/workspace/local/", "workspace/")
# SWE-agent mounts the checkout at `/<owner>__<repo>/` and its shell commands name files relative
# to it: `/fasterxml__jackson-core/src/A.java` and `src/A.java` are one file.
SWE_AGENT_ROOT = re.compile(r"^/[A-Za-z0-9][\w.-]*?__[\w.-]+(?:/|$)")
PATH_MAX = 4096  # Linux's limit: a longer "folder" is no directory an agent ran in
DIRECTORY_STACK = ("pushd", "popd")  # moves a shell this module does not follow


def working_folder(value: Any) -> str | None:
    """The folder a trace says a step ran in, `.` and `..` collapsed; None when the value is not
    an absolute POSIX path of printable text (relative, `C:\\x`, a NUL, a number, too long)."""
    if type(value) is not str or not value.startswith("/") or len(value) > PATH_MAX:
        return None
    if not value.isprintable():
        return None
    return "/" + posixpath.normpath(value).lstrip("/")


def moves_shell(command: str, start: str) -> bool:
    """Whether `command`, run in a shell that stays open from `start`, leaves it elsewhere: a
    `cd` that ends in another folder or one the line does not say, or `pushd`/`popd`."""
    if "cd" not in command and not any(word in command for word in DIRECTORY_STACK):
        return False
    found, end = _walk(command, start)
    moved = end is None or posixpath.normpath(end) != posixpath.normpath(start)
    return moved or any(words[0] in DIRECTORY_STACK for words, _ in found)


def repo_files(step: Step) -> list[str]:
    """The step's files by their repository-relative names, each resolved against the directory
    it was named in: `NodeCursor.java` after `cd src/.../node` is `src/.../NodeCursor.java`."""
    return [norm_path(path) for path in step_paths(step)]


def norm_path(path: str) -> str:
    """Repository-relative spelling: no leading `/`, no container checkout root; the root
    itself (`/testbed`, `.` resolved in it) is ""."""
    path = SWE_AGENT_ROOT.sub("", path.strip(), count=1).lstrip("/")
    while root := next((r for r in WORKSPACE_ROOTS if path.startswith(r)), None):
        path = path.removeprefix(root)
    return "" if path + "/" in WORKSPACE_ROOTS else path


def step_paths(step: Step) -> list[str]:
    """The step's files, each joined to the directory it was named in and collapsed."""
    dirs = named_in(step.command or "", step.files, step.cwd)
    return [resolve(path, where) for path, where in zip(step.files, dirs, strict=True)]


def resolve(path: str, where: str | None) -> str:
    """`path` named in directory `where` (None: unknown), `.` and `..` steps collapsed."""
    path = path.strip()
    if where is not None and path and not path.startswith(("/", *UNFOLLOWED)):
        path = where.rstrip("/") + "/" + path
    if path.startswith(".") or "/." in path or "//" in path:
        path = posixpath.normpath(path)
    return "" if path == "." else path


def named_in(command: str, files: Sequence[str], start: str | None) -> list[str | None]:
    """For each of `files`, the directory the command was in where it first names it: `start`,
    moved by each `cd` before that simple command (and put back after a `( … )` subshell)."""
    if "cd" not in command:
        return [start] * len(files)
    first_seen: dict[str, str | None] = {}
    for words, where in _simple_commands(command, start):
        for word in words:
            first_seen.setdefault(word, where)
    return [first_seen.get(f, start) for f in files]


def _simple_commands(command: str, start: str | None) -> list[tuple[list[str], str | None]]:
    """The command's simple commands (heredoc bodies cut out), each with the directory it ran in;
    a `cd` moves the directory of the ones after it."""
    return _walk(command, start)[0]


def _walk(command: str, start: str | None) -> tuple[list[tuple[list[str], str | None]], str | None]:
    """`_simple_commands`, and the directory the line ends in."""
    text, _ = cut_heredocs(command)
    words, _ = words_and_operators(text)
    found: list[tuple[list[str], str | None]] = []
    where, current = start, []
    outer: list[str | None] = []
    for word in [*words, "\n"]:
        if word not in SEPARATORS:
            current.append(word)
            continue
        if current and current[0] == "cd":
            where = _moved(where, current[1:])
        elif current:
            found.append((current, where))
        current = []
        if word == "(":
            outer.append(where)
        elif word == ")" and outer:
            where = outer.pop()
    return found, where


def _moved(where: str | None, args: list[str]) -> str | None:
    """The directory after `cd ARGS` run in `where` (None when the line does not say)."""
    target = next((a for a in args if not a.startswith("-") or a == "-"), "~")
    if target.startswith(UNFOLLOWED) or (where is None and not target.startswith("/")):
        return None
    return resolve(target, where)
