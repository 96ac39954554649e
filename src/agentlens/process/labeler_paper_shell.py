"""What a shell line *does*, for the `paper` labeler: writes (with targets), runs, reviews, reads.

Best effort on hostile text: the line is tokenised and pattern-matched, never executed. Unlike the
released classifiers (labeler_sdk), a redirect of a running program's output (`2>&1`,
`> out.log`) is not a write, a keyword inside an argument (`grep pytest setup.cfg`) is not a test
run, and cleanup commands are recognised with their arguments (`mkdir -p d`, `git restore f`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

CACHED_LENGTH = 4096
Action = Literal["write", "run", "review", "inspect", "cleanup", "setup", "nav"]


@dataclass(frozen=True)
class CommandAction:
    """One simple command's effect. `paths` are write targets (write) or named files (inspect)."""

    action: Action
    paths: tuple[str, ...] = ()


HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][\w.-]*)\1")
MARKER = re.compile(r"__HEREDOC(\d+)__")
REDIRECT = re.compile(r"^1?>>?(.*)$")
# A quoted run (to its closing quote, or the end) or a character that can start an operator.
# What makes shlex differ from `str.split`: quotes, backslashes, and whitespace that `str.split`
# splits on but shlex keeps inside a word (\v, \f, \x1c-\x1f, \x85, Unicode spaces).
SHLEX_SPECIAL = re.compile(r"['\"\\]|[^\S \t\r\n]")
QUOTED_OR_OPERATOR = re.compile(r"'[^']*'?|\"[^\"]*\"?|[&|;\n]")
PY_WRITE = re.compile(
    r"open\(\s*[rbuf]?['\"]([^'\"\s]+)['\"]\s*,\s*[rbuf]?['\"][wax]"
    r"|Path\(\s*[rbuf]?['\"]([^'\"\s]+)['\"]\s*\)\s*\.write_(?:text|bytes)"
)
# Python run only to read code or metadata (`inspect.getsource(f)`, `print(m.__file__)`).
LOOKUP = re.compile(
    r"getsource|getsourcefile|getfile|\bhelp\(|__doc__|print\([\w.]*\.__(?:file|version)__\)"
)
PYTHON = re.compile(r"^(?:python|pypy)[\d.]*$")
WRAPPERS = {"sudo", "time", "nice", "nohup", "command", "builtin", "exec", "env", "stdbuf"}
NAV = {"cd", "pushd", "popd", "true", "false", "clear", "sleep", "wait", "C-c", "C-d", "C-z", ":"}
NAV |= {"echo", "printf"}  # printing a message; with a redirect they write a file (handled first)
SETUP = {"export", "source", ".", "set", "unset", "alias", "ulimit", "chmod", "chown", "ln"}
SETUP |= {"apt", "apt-get", "yum", "brew", "conda", "mamba", "poetry", "uv", "virtualenv"}
CLEANUP = {"rm", "rmdir", "mkdir", "unlink", "kill", "pkill"}
TEST_RUNNERS = {"pytest", "py.test", "tox", "nox", "nosetests", "nose2", "jest", "mocha", "vitest"}
INSPECT = {"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "locate", "ls", "ll", "tree"}
INSPECT |= {"cat", "head", "tail", "less", "more", "nl", "bat", "wc", "file", "stat", "du", "df"}
INSPECT |= {"diff", "cmp", "awk", "jq", "realpath", "readlink", "which", "whereis", "type", "pwd"}
INSPECT |= {"printenv", "whoami", "uname", "date", "basename", "dirname", "sort", "uniq", "cut"}
INSPECT |= {"tr", "xxd", "od", "hexdump", "strings", "md5sum", "sha256sum", "column"}
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
PIP_SETUP = {"install", "uninstall", "download", "wheel"}


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


def _analyse(command: str) -> tuple[CommandAction, ...]:
    text, bodies = _split_heredocs(command)
    actions: list[CommandAction] = []
    for pipeline in _split(text, ("&&", "||", ";", "&", "\n")):
        stages = _split(pipeline, ("|",))
        if stages:
            marker = MARKER.search(stages[0])
            actions.append(_simple(stages[0], bodies[int(marker[1])] if marker else ""))
            actions.extend(_filter(stage) for stage in stages[1:])
    return tuple(actions) or (CommandAction("nav"),)


def python_writes(code: str) -> tuple[str, ...]:
    """Files a piece of Python code opens for writing (`open(p, "w")`, `Path(p).write_text`)."""
    return tuple(a or b for a, b in PY_WRITE.findall(code))


def _split_heredocs(command: str) -> tuple[str, list[str]]:
    """Cut heredoc bodies out of the line, leaving a numbered marker where each was fed."""
    kept: list[str] = []
    bodies: list[str] = []
    lines = command.split("\n")
    i = 0
    while i < len(lines):
        header = lines[i]
        i += 1
        for match in HEREDOC.finditer(header):
            body: list[str] = []
            while i < len(lines) and lines[i].strip() != match[2]:
                body.append(lines[i])
                i += 1
            i += 1
            bodies.append("\n".join(body))
        if len(bodies) and HEREDOC.search(header):
            header = HEREDOC.sub(f" __HEREDOC{len(bodies) - 1}__ ", header, count=1)
        kept.append(header)
    return "\n".join(kept), bodies


def _split(text: str, operators: tuple[str, ...]) -> list[str]:
    """Split on shell operators outside quotes (`||` is not a pipe). Only quoted runs and operator
    characters are visited (one regex), not every character."""
    parts: list[str] = []
    start = resume = 0
    for match in QUOTED_OR_OPERATOR.finditer(text):
        i = match.start()
        if i < resume or match[0][0] in "'\"":  # inside an operator just cut, or quoted
            continue
        op = next((o for o in operators if text.startswith(o, i)), None)
        if op and not (op == "|" and text.startswith("||", i)) and not _is_redirect_amp(text, i):
            parts.append(text[start:i])
            start = resume = i + len(op)
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _is_redirect_amp(text: str, i: int) -> bool:
    return text[i] == "&" and (text[i - 1 : i] == ">" or text[i + 1 : i + 2] == ">")


def _words(text: str) -> list[str]:
    words = _shell_split(text)
    while words and (re.match(r"^\w+=", words[0]) or words[0] in WRAPPERS):
        words = words[1:]
    if words and words[0] == "timeout" and len(words) > 1:
        words = words[2:]
    return words


def _shell_split(text: str) -> list[str]:
    """`shlex.split` (POSIX, no comments), unbalanced quotes falling back to whitespace. Without
    quotes or backslashes, and with no whitespace but shlex's own, that is `str.split`: ~20x
    faster than shlex's per-character loop, and most lines take this path."""
    if not SHLEX_SPECIAL.search(text):
        return text.split()
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError:
        return text.split()


def _simple(text: str, heredoc: str) -> CommandAction:
    words = _words(text)
    if not words or words[0].startswith("#"):
        return CommandAction("nav")
    program = words[0].rsplit("/", 1)[-1]
    args = _plain_args(words[1:])
    targets = _redirect_targets(words)
    if program in {"cat", "echo", "printf"} and targets:
        return CommandAction("write", targets)
    if PYTHON.match(program) or program.endswith(".py"):
        return _python(words, heredoc)
    return _by_program(program, words, args)


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
    if program in {"sed", "perl"} and any(w.startswith(("-i", "--in-place")) for w in words):
        return CommandAction("write", tuple(args[1:]))
    if program in {"tee", "touch"}:
        return CommandAction("write", tuple(args))
    if program in {"cp", "mv"}:
        return _copy(args)
    if program == "patch":
        return CommandAction("write", ("<patch>",))
    if program in {"pip", "pip3", "npm", "yarn", "pnpm"} and args[:1] and args[0] in PIP_SETUP:
        return CommandAction("setup")
    if program in {"pip", "pip3"}:
        return CommandAction("inspect")
    if program in SETUP:
        return CommandAction("setup")
    if program in CLEANUP:
        return CommandAction("cleanup")
    if program in {"bash", "sh", "zsh"} and "-c" in words:
        inner = words[words.index("-c") + 1 : words.index("-c") + 2]
        return _strongest(analyse(inner[0])) if inner else CommandAction("run")
    if program in INSPECT:
        return CommandAction("inspect", tuple(args))
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
    return CommandAction("inspect", tuple(args[1:]))


def _copy(args: list[str]) -> CommandAction:
    target = args[-1] if len(args) >= 2 else ""
    if re.search(r"\.(?:py|pyi|js|ts|java|c|h|cpp|go|rs|rb|cfg|toml|ini|rst|txt|md)$", target):
        return CommandAction("write", (target,))
    return CommandAction("cleanup")


def _filter(text: str) -> CommandAction:
    """A program fed by a pipe only reshapes output, unless it writes (`| tee f.py`) or runs code."""
    words = _words(text)
    program = words[0].rsplit("/", 1)[-1] if words else ""
    if program == "tee":
        return CommandAction("write", tuple(w for w in words[1:] if not w.startswith("-")))
    if PYTHON.match(program) or program in {"bash", "sh", "node"}:
        return CommandAction("run")
    return CommandAction("nav")


STRENGTH: tuple[Action, ...] = ("write", "run", "review", "inspect", "cleanup", "setup", "nav")


def _strongest(actions: Sequence[CommandAction]) -> CommandAction:
    return min(actions, key=lambda a: STRENGTH.index(a.action))
