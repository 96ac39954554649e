"""What a shell line *does*, for the `paper` labeler: writes (with targets), runs, reviews, reads.

Best effort on hostile text: the line is tokenised and pattern-matched, never executed. Unlike the
released classifiers (labeler_sdk), a redirect of a running program's output (`2>&1`,
`> out.log`) is not a write, a keyword inside an argument (`grep pytest setup.cfg`) is not a test
run, and cleanup commands are recognised with their arguments (`mkdir -p d`, `git restore f`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from agentlens.shell.heredocs import cut_heredocs, fed_body
from agentlens.shell.programs import LISTERS, PREFIXES, READERS, SEARCHERS
from agentlens.shell.tokens import posix_words, split_outside_quotes

CACHED_LENGTH = 4096
Action = Literal["write", "run", "review", "inspect", "task", "prepare", "cleanup", "setup", "nav"]


@dataclass(frozen=True)
class CommandAction:
    """One simple command's effect. `paths` are write targets (write), named files (inspect), the
    files made executable (prepare) or the folders made (cleanup by `mkdir`). `renamed`: a write
    that moves or copies an existing file (`mv a.py b.py`), not a new one; `restored`: a write
    that puts a backup back (`mv x.py.bak x.py`). `task`: reading the task's own tracker record
    (`bd show`, `gh issue view`)."""

    action: Action
    paths: tuple[str, ...] = ()
    renamed: bool = False
    restored: bool = False
    listing: bool = False  # an inspect that lists folders (`ls`, `tree`)


REDIRECT = re.compile(r"^1?>>?(.*)$")
PY_WRITE = re.compile(
    r"open\(\s*[rbuf]?['\"]([^'\"\s]+)['\"]\s*,\s*[rbuf]?['\"][wax]"
    r"|Path\(\s*[rbuf]?['\"]([^'\"\s]+)['\"]\s*\)\s*\.write_(?:text|bytes)"
)
# Python run only to read code or metadata (`inspect.getsource(f)`, `print(m.__file__)`).
LOOKUP = re.compile(
    r"getsource|getsourcefile|getfile|\bhelp\(|__doc__|print\([\w.]*\.__(?:file|version)__\)"
)
PYTHON = re.compile(r"^(?:python|pypy)[\d.]*$")
WRAPPERS = PREFIXES | {"stdbuf"}
NAV = {"cd", "pushd", "popd", "true", "false", "clear", "sleep", "wait", "C-c", "C-d", "C-z", ":"}
NAV |= {"echo", "printf"}  # printing a message; with a redirect they write a file (handled first)
SETUP = {"export", "source", ".", "set", "unset", "alias", "ulimit", "chmod", "chown", "ln"}
SETUP |= {"apt", "apt-get", "yum", "brew", "conda", "mamba", "poetry", "uv", "virtualenv"}
CLEANUP = {"rm", "rmdir", "mkdir", "unlink", "kill", "pkill"}
# SWE-agent's `view` is its own file viewer (AGENT_VIEW), and `dir` is rare enough to leave out
INSPECT = SEARCHERS | (READERS - {"view"}) | (LISTERS - {"dir"}) | {"find", "ll", "wc", "file"}
INSPECT |= {"df", "diff", "cmp", "awk", "jq", "realpath", "readlink", "which", "whereis", "type"}
INSPECT |= {"printenv", "whoami", "uname", "date", "basename", "dirname", "sort", "uniq", "cut"}
INSPECT |= {"tr", "hexdump", "md5sum", "sha256sum", "column"}
# SWE-agent's shell-level file viewer/editor commands.
AGENT_VIEW = {"open", "goto", "scroll_up", "scroll_down", "search_file", "search_dir", "find_file"}
# SWE-agent ends a run with `submit`, or with an exit marker when a budget or the format failed.
AGENT_SUBMIT = {"submit", "exit_forfeit", "exit_cost", "exit_context", "exit_format"}
AGENT_SUBMIT |= {"exit_api", "exit_error"}
GIT_REVIEW = {"diff", "status"}
GIT_CLEANUP = {
    "stash",
    "checkout",
    "restore",
    "clean",
    "reset",
    "revert",
    "add",
    "commit",
    "config",
}
GIT_CLEANUP |= {"init", "switch", "rm", "mv"}
GIT_HISTORY = {"log", "show", "blame", "branch", "tag", "describe", "rev-parse", "reflog"}
GIT_WRITE = {"apply", "am", "cherry-pick", "merge"}
# publishing or fetching commits: bookkeeping around the change, not the change or its check
GIT_SYNC = {"push", "pull", "fetch", "clone"}
# issue trackers and code-hosting CLIs: reading a record gathers the task; anything else
# (status updates, comments, closing, pull requests) is bookkeeping. Creating or linking the
# records a non-coding task asks for is read before this (labeler_paper_tools.TRACKER_CREATE).
TRACKERS = {"bd", "beads", "gh", "glab", "jira"}
TRACKER_READS = {"show", "view", "list", "ready", "status", "search", "blocked", "stats", "diff"}
TRACKER_CHECKS = {"checks", "run"}  # CI results of the change (`gh pr checks`, `gh run watch`)
BACKUP = re.compile(r"\.(?:bak|orig|backup|old|save)\d*$|~$", re.IGNORECASE)
# `apply_patch` (Codex and its models): the files a patch adds, updates or deletes
PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$", re.MULTILINE)
PIP_SETUP = {"install", "uninstall", "download", "wheel"}
SOURCE_NAME = re.compile(
    r"\.(?:py|pyi|js|jsx|ts|tsx|java|c|h|cpp|go|rs|rb|cfg|toml|ini|rst|txt|md)$"
)


def analyse(command: str) -> tuple[CommandAction, ...]:
    """Every simple command's action, in order; a heredoc body feeding a program is scanned.
    Lines up to CACHED_LENGTH are cached: runs repeat commands, and scoring labels a run more
    than once (labels, references, scores)."""
    if len(command) <= CACHED_LENGTH:
        return _analyse_cached(command)
    return _analyse(command)


@lru_cache(maxsize=16384)
def _analyse_cached(command: str) -> tuple[CommandAction, ...]:
    return _analyse(command)


def _analyse(command: str, fed: tuple[str, ...] = ()) -> tuple[CommandAction, ...]:
    """`analyse`; `fed` are the heredoc bodies of the line this one is nested in (`bash -c '…'`):
    its markers name them."""
    text, own = cut_heredocs(command, first=len(fed))
    bodies = (*fed, *own)
    actions: list[CommandAction] = []
    fresh = _FreshFolders()
    for pipeline in split_outside_quotes(text, ("&&", "||", ";", "&", "\n")):
        stages = split_outside_quotes(pipeline, ("|",))
        if stages:
            actions.append(fresh.see(stages[0], _simple(stages[0], bodies)))
            actions.extend(_filter(stage) for stage in stages[1:])
    return tuple(actions) or (CommandAction("nav"),)


class _FreshFolders:
    """Folders the line itself made (`mkdir -p d && cd d && ls -la`): listing one shows nothing
    of the project, so it is part of the bookkeeping of making it, not a look at the code."""

    def __init__(self) -> None:
        self.made: set[str] = set()
        self.inside = False

    def see(self, text: str, action: CommandAction) -> CommandAction:
        words = _words(text)
        program = words[0].rsplit("/", 1)[-1] if words else ""
        args = _plain_args(words[1:])
        if program == "mkdir":
            self.made.update(a.rstrip("/") for a in args)
        elif program == "cd":
            self.inside = bool(args) and args[0].rstrip("/") in self.made
        elif program in LISTERS and self.made:
            looked = {a.rstrip("/") for a in args} or ({"."} if self.inside else {""})
            if looked <= self.made | ({"."} if self.inside else set()):
                return CommandAction("cleanup")
        return action


def python_writes(code: str) -> tuple[str, ...]:
    """Files a piece of Python code opens for writing (`open(p, "w")`, `Path(p).write_text`)."""
    return tuple(a or b for a, b in PY_WRITE.findall(code))


def _words(text: str) -> list[str]:
    words = posix_words(text)
    while words and (re.match(r"^\w+=", words[0]) or words[0] in WRAPPERS):
        words = words[1:]
    if words and words[0] == "timeout" and len(words) > 1:
        words = words[2:]
    return words


def _simple(text: str, bodies: tuple[str, ...]) -> CommandAction:
    words = _words(text)
    if not words or words[0].startswith("#"):
        return CommandAction("nav")
    program = words[0].rsplit("/", 1)[-1]
    args = _plain_args(words[1:])
    targets = _redirect_targets(words)
    if program in {"cat", "echo", "printf"} and targets:
        return CommandAction("write", targets)
    if PYTHON.match(program) or program.endswith(".py"):
        return _python(words, fed_body(text, bodies))
    if program == "apply_patch":  # the patch is fed (heredoc) or given as one argument
        patch = fed_body(text, bodies) or " ".join(words[1:])
        return CommandAction("write", tuple(PATCH_FILE.findall(patch)) or ("<patch>",))
    if program in {"bash", "sh", "zsh"} and "-c" in words:
        inner = words[words.index("-c") + 1 : words.index("-c") + 2]
        return _strongest(_nested(inner[0], bodies)) if inner else CommandAction("run")
    return _by_program(program, words, args)


def _nested(command: str, bodies: tuple[str, ...]) -> tuple[CommandAction, ...]:
    """`analyse` of the string a `bash -c` runs; the line's heredocs cut out of it are its own."""
    return _analyse(command, bodies) if bodies else analyse(command)


def _redirect_targets(words: list[str]) -> tuple[str, ...]:
    """Files that stdout is redirected to (`> f`, `>>f`, `1> f`); quoted `>` stay inside words."""
    targets = []
    for i, word in enumerate(words):
        match = REDIRECT.match(word)
        if match is None:
            continue
        target = match[1] or (words[i + 1] if i + 1 < len(words) else "")
        if target and not target.startswith(("/dev/", "&")):
            targets.append(target)
    return tuple(targets)


def _plain_args(words: list[str]) -> list[str]:
    """Operands: no flags, no redirections (`> f`, `2>&1`) and no heredoc markers."""
    plain: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in {">", ">>", "<", "2>", "&>"}:
            skip = True
        elif not word.startswith("-") and not re.search(r"[<>]|__HEREDOC", word):
            plain.append(word)
    return plain


def _by_program(program: str, words: list[str], args: list[str]) -> CommandAction:
    if program in NAV or program in AGENT_SUBMIT:
        return CommandAction("nav")
    if program in AGENT_VIEW:
        return CommandAction("inspect", tuple(args[:1]))
    if program == "create":
        return CommandAction("write", tuple(args[:1]))
    if program == "git":
        return _git(args)
    if program in TRACKERS:
        return _tracker(args)
    if program in {"sed", "perl"} and any(_in_place(w) for w in words[1:]):
        return CommandAction("write", tuple(args[1:]))
    if program in {"tee", "touch"}:
        return CommandAction("write", tuple(args))
    if program in {"cp", "mv"}:
        return _copy(args)
    if program == "patch":
        return CommandAction("write", ("<patch>",))
    if program == "chmod":
        return CommandAction("prepare", tuple(args[1:]))
    if program in {"pip", "pip3", "npm", "yarn", "pnpm"} and args[:1] and args[0] in PIP_SETUP:
        return CommandAction("setup")
    if program in {"pip", "pip3"}:
        return CommandAction("inspect")
    if program in SETUP:
        return CommandAction("setup")
    if program in CLEANUP:
        return CommandAction("cleanup")
    if program in INSPECT:
        return CommandAction("inspect", tuple(args), listing=program in LISTERS)
    return CommandAction("run")


def _python(words: list[str], heredoc: str) -> CommandAction:
    code = heredoc
    if "-c" in words:
        code = " ".join(words[words.index("-c") + 1 :])
    written = python_writes(code)
    if written:
        return CommandAction("write", written)
    if any(w in {"--version", "-V"} for w in words[1:2]) or LOOKUP.search(code):
        return CommandAction("inspect")
    if words[1:3] == ["-m", "pip"] and words[3:4] and words[3] in PIP_SETUP:
        return CommandAction("setup")
    if words[1:3] in (["-m", "venv"], ["-m", "virtualenv"]):
        return CommandAction("setup")
    if len(words) > 2 and words[1].endswith("setup.py") and words[2] in {"develop", "install"}:
        return CommandAction("setup")
    return CommandAction("run")


def _git(args: list[str]) -> CommandAction:
    sub = args[0] if args else ""
    if sub in GIT_REVIEW:
        return CommandAction("review")
    if sub in GIT_CLEANUP:
        return CommandAction("cleanup")
    if sub in GIT_WRITE:
        return CommandAction("write", ("<patch>",))
    if sub in GIT_HISTORY:
        return CommandAction("inspect")
    if sub in GIT_SYNC:
        return CommandAction("setup")
    return CommandAction("inspect", tuple(args[1:]))


def _copy(args: list[str]) -> CommandAction:
    """`cp`/`mv` onto a source-like name writes it (a rename or copy of an existing file, not a
    new scratch file); from a backup (`x.py.bak`) it restores the file; anything else (a backup
    made, a folder) is bookkeeping."""
    target = args[-1] if len(args) >= 2 else ""
    if SOURCE_NAME.search(target):
        restored = all(BACKUP.search(a) for a in args[:-1])
        return CommandAction("write", (target,), renamed=True, restored=restored)
    return CommandAction("cleanup")


def _in_place(word: str) -> bool:
    """`-i`, `-i.bak`, `--in-place`, or `i` among combined short flags (`perl -pi -e`)."""
    if word.startswith("--"):
        return word.startswith("--in-place")
    return word.startswith("-") and "i" in word[1:].split(".", 1)[0]


def _tracker(args: list[str]) -> CommandAction:
    """An issue tracker's or code host's CLI: `bd show x`, `gh issue view 3` read the task's
    record; `gh pr checks` reads the change's CI; the rest (`bd update --status`, `gh pr
    create`, `bd close`) is bookkeeping."""
    words = set(args[:2])
    if words & TRACKER_READS:
        return CommandAction("task")
    if words & TRACKER_CHECKS:
        return CommandAction("review")
    return CommandAction("setup")


def _filter(text: str) -> CommandAction:
    """A program fed by a pipe only reshapes output, unless it writes (`| tee f.py`) or runs code."""
    words = _words(text)
    program = words[0].rsplit("/", 1)[-1] if words else ""
    if program == "tee":
        return CommandAction("write", tuple(w for w in words[1:] if not w.startswith("-")))
    if PYTHON.match(program) or program in {"bash", "sh", "node"}:
        return CommandAction("run")
    return CommandAction("nav")


STRENGTH: tuple[Action, ...] = (
    "write",
    "run",
    "review",
    "inspect",
    "task",
    "prepare",
    "cleanup",
    "setup",
    "nav",
)


def _strongest(actions: Sequence[CommandAction]) -> CommandAction:
    return min(actions, key=lambda a: STRENGTH.index(a.action))
