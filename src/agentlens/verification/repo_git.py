"""AgentLens's own git calls on an agent's repository: diffs, changed files, workspace commits.

The repository's `.git/config` and `.gitattributes` are the agent's, and git runs the programs
they name (clean and smudge filters, textconv, external diffs, fsmonitor hooks) while it diffs
or adds. So git runs in the sandbox like every other command on the repository: it sees the
repository (read-only unless `writable` says otherwise) and the system, nothing else, and those
programs run there. `GIT_HARDENING` still switches off what it can by name, and neither the
system's nor the user's git config is read."""

from __future__ import annotations

import contextlib
import locale
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from agentlens.bounded_read import read_regular
from agentlens.verification import isolation
from agentlens.verification.inside import read_inside
from agentlens.verification.isolation import GIT_HARDENING
from agentlens.verification.memory_group import memory_group

# replace refs are the agent's to write: `git replace BASE ITS_COMMIT` made the base its commit
GIT_ISOLATION = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_NO_REPLACE_OBJECTS": "1",
}
# git's result when a program it ran (a filter, textconv) was killed for the memory of its group
# and git itself exited 0: 128 + SIGKILL, as a shell reports a killed command
STOPPED_EXIT = 137
# After `diff`: the patch as git makes it, not what the agent's external diff or textconv
# driver prints instead (they run sandboxed, but what they print was the diff a review showed)
PLAIN_DIFF = ("--no-ext-diff", "--no-textconv")
GIT_TIMEOUT_S = 60.0
# a call's exit code when AgentLens stopped it for its timeout, as `timeout(1)` exits
TIMED_OUT_EXIT = 124


class GitResult(subprocess.CompletedProcess[str]):
    """git's result, and `stopped`: AgentLens's line when it stopped the call (timed out, its
    memory group, never started), "" otherwise; the exit code is then never 0."""

    stopped: str = ""

    def failure(self) -> str:
        """Why the call failed, in one line; "" when it did not. AgentLens's stop line first:
        what git printed before the stop is partial, whatever its exit code."""
        if self.stopped:
            return f"{self.stopped} (its result would be incomplete)"
        return git_says(self.stderr) if self.returncode != 0 else ""


def git_says(stderr: str) -> str:
    """git's message in one line: outside a repository `git diff` follows its warning with its
    whole usage text (about 150 lines), which is no reason."""
    if "not a git repository" in stderr.lower():
        return "not a git repository (--repo must be the agent's git work tree)"
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[0] if lines else "no message"


def run_git(
    repo: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    writable: Sequence[Path] = (),
    timeout_s: float = GIT_TIMEOUT_S,
    stdin: str = "",
    view: GitView | None = None,
) -> GitResult:
    """`git -C repo ARGS`, isolated, `stdin` its input; stdout and stderr as text (undecodable
    bytes replaced).
    A timeout is exit code 124, its reason in `stopped` and on stderr. A process killed for the
    memory of its group (the agent's filter, say) leaves git's output partial even when git
    exits 0: the call fails then (`STOPPED_EXIT` when git said 0), `stopped` saying why; git's
    own stderr stays git's.

    What git sees of the work tree is the files of `repo` as they are: `view`, else
    `plain_view(repo)` made for this call."""
    repo = repo.resolve()  # the sandbox binds and enters real paths
    view = view or plain_view(repo, timeout_s)
    if view.failure is not None:
        return view.failure
    environment = {**view.env, **(env or {})}
    return _run_git(repo, [*view.options, *args], environment, writable, timeout_s, stdin)


@dataclass(frozen=True)
class GitView:
    """git options and environment (`plain_view`)."""

    options: list[str]
    env: dict[str, str]
    failure: GitResult | None = None


def plain_view(
    repo: Path, timeout_s: float = GIT_TIMEOUT_S, freeze_in: Path | None = None
) -> GitView:
    """The git options and environment under which the repository's config cannot change what
    git sees of its work tree. It runs no program on the host, but in the sandbox a clean filter
    printed a file's base text, so git saw no edit in it; `core.worktree` named a pristine copy
    inside `.git`. So the work tree is `repo`, and each filter driver its config names does
    nothing (a Git LFS file is then its content, not its pointer). When the config cannot be
    read (a timeout), `failure` says so, and the call is not made.

    `freeze_in`, a private folder, for a view that serves several calls (a listing): the config
    is read once, into a git folder there (`frozen_git_dir`), so that each call reads the config
    that look read. A process of the agent's (its MCP server) could name a new filter driver
    between the look and a later call, and git ran that one."""
    options = [f"--work-tree={repo}"] if os.path.lexists(repo / ".git") else []
    options += ["-c", f"core.attributesFile={os.devnull}"]
    frozen = freeze_in is not None and stat.S_ISDIR(_lstat_mode(repo / ".git"))
    if frozen and not os.path.lexists(repo / ".git" / "config"):
        listed = _result([], 0, "", "", stopped="")  # git reads none: nor will it, frozen
    else:
        look = ["config", "--local", "--includes", "-z", "--list"] if frozen else [
            "config", "-z", "--name-only", "--get-regexp", r"^filter\."]  # fmt: skip
        listed = _run_git(repo, [*options, *look], {}, (), timeout_s, "")
    if listed.stopped or listed.returncode not in (0, 1):  # 1: no filter named
        return GitView(options, {}, failure=listed)
    entries = [entry for entry in listed.stdout.split("\0") if entry]
    names = [entry.partition("\n")[0] for entry in entries]
    drivers = sorted(
        {name[len("filter.") : name.rindex(".")] for name in names if name.startswith("filter.")}
    )
    keys = [(f"filter.{d}.{key}", "") for d in drivers for key in ("clean", "smudge", "process")]
    keys += [(f"filter.{d}.required", "false") for d in drivers]
    # in the environment, not `-c`: a driver's name may hold an `=`
    overrides = {"GIT_CONFIG_COUNT": str(len(keys))}
    for number, (key, value) in enumerate(keys):
        overrides |= {f"GIT_CONFIG_KEY_{number}": key, f"GIT_CONFIG_VALUE_{number}": value}
    if frozen and freeze_in is not None:
        try:
            git_dir = frozen_git_dir(repo, freeze_in, entries)
        except OSError as exc:
            why = f"cannot freeze its git folder: {exc.strerror or exc}"
            return GitView(options, {}, failure=_result(listed.args, 128, "", why, stopped=""))
        overrides["GIT_DIR"] = str(git_dir)
    return GitView(options, overrides)


def _lstat_mode(path: Path) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


# What a listing reads of a repository's git folder, linked from the frozen one
LINKED_GIT_ENTRIES = ("objects", "refs", "packed-refs", "info", "shallow")


def frozen_git_dir(repo: Path, folder: Path, entries: list[str]) -> Path:
    """A git folder in `folder` whose `config` holds `entries` (`git config --list -z`, includes
    already read, so they are left out) and whose `HEAD` is a copy of the repository's, both as
    they were looked at; what else a listing reads (`LINKED_GIT_ENTRIES`) is linked to the
    repository's `.git`. git reads its repository config from its git folder, and no option or
    variable names another."""
    git_dir = folder / "git"
    git_dir.mkdir()
    (git_dir / "config").write_text(_config_text(entries), encoding="utf-8")
    (git_dir / "HEAD").write_bytes(read_inside(repo, ".git/HEAD", 4096))
    for name in LINKED_GIT_ENTRIES:
        (git_dir / name).symlink_to(repo / ".git" / name)
    return git_dir


def _config_text(entries: list[str]) -> str:
    """git config text holding each `key\\nvalue` entry (a bare `key`: true) in order."""
    lines: list[str] = []
    section = None
    for entry in entries:
        key, has_value, value = entry.partition("\n")
        head, _, name = key.rpartition(".")
        if head.split(".")[0] in ("include", "includeif"):
            continue
        if head != section:
            section = head
            base, dot, sub = head.partition(".")
            quoted = sub.replace("\\", "\\\\").replace('"', '\\"')
            lines.append(f'[{base} "{quoted}"]' if dot else f"[{base}]")
        lines.append(f"\t{name} = {_quoted(value)}" if has_value else f"\t{name}")
    return "".join(line + "\n" for line in lines)


def _quoted(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\t", "\\t").replace("\b", "\\b") + '"'


def _run_git(
    repo: Path,
    args: Sequence[str],
    env: Mapping[str, str],
    writable: Sequence[Path],
    timeout_s: float,
    stdin: str,
) -> GitResult:
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
            code, stdout, stderr = _bounded_run(
                wrapped.argv, {**base, **(env or {})}, stdin, timeout_s
            )
        except subprocess.TimeoutExpired:  # the sandbox died with its first process
            why = f"timed out after {timeout_s:g} s"
            return _result(argv, TIMED_OUT_EXIT, "", why, stopped=why)
        except OutputTooLargeError:
            why = f"stopped: its output passed {MAX_OUTPUT_BYTES // (1024 * 1024)} MB"
            return _result(argv, STOPPED_EXIT, "", why, stopped=why)
        stopped = memory.not_started_note(code)
        if not stopped and memory.oom_killed():  # a filter or textconv program of the agent's
            stopped = memory.stop_note()
        code = code or (STOPPED_EXIT if stopped else 0)
        return _result(argv, code, stdout, stderr, stopped=stopped)


# What one git call may print: a diff holds each new file whole, and the agent's files may weigh
# gigabytes (a diff of one 300 MB text file took the process to 920 MB). Also `--no-sandbox`'s.
MAX_OUTPUT_BYTES = 64 * 1024 * 1024


# text mode's (`subprocess._text_encoding`)
_ENCODING = "utf-8" if sys.flags.utf8_mode else locale.getencoding()


class OutputTooLargeError(Exception):
    """git printed more than MAX_OUTPUT_BYTES; it was killed."""


def _bounded_run(
    argv: list[str], env: Mapping[str, str], stdin: str, timeout_s: float
) -> tuple[int, str, str]:
    """`subprocess.run(argv, capture_output=True, text=True, errors="replace", input=stdin,
    timeout=timeout_s)`'s exit code, stdout and stderr, but each read up to MAX_OUTPUT_BYTES:
    past it the process is killed and OutputTooLargeError raised."""
    with subprocess.Popen(
        argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as proc:
        data = stdin.encode(_ENCODING, errors="replace")
        feeding = threading.Thread(target=_feed, args=(proc.stdin, data), daemon=True)
        feeding.start()
        out, err = _Capped(proc, proc.stdout), _Capped(proc, proc.stderr)  # type: ignore[arg-type]
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        finally:
            proc.wait()
        if out.over or err.over:
            raise OutputTooLargeError
        return code, _text(out.finish()), _text(err.finish())


def _feed(pipe: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(OSError):  # git read none of it, or not all (a closed pipe)
        pipe.write(data)
    with contextlib.suppress(OSError):
        pipe.close()


class _Capped:
    """Reads a pipe to its end in a thread, keeping up to MAX_OUTPUT_BYTES; past them, kills
    the process (`over`)."""

    def __init__(self, proc: subprocess.Popen[bytes], pipe: IO[bytes]) -> None:
        self.proc, self.pipe, self.over = proc, pipe, False
        self.chunks: list[bytes] = []
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        kept = 0
        with contextlib.suppress(OSError, ValueError):
            while chunk := self.pipe.read1(1 << 16):  # type: ignore[attr-defined]
                kept += len(chunk)
                if kept > MAX_OUTPUT_BYTES:
                    self.over = True
                    self.proc.kill()
                    return
                self.chunks.append(chunk)

    def finish(self) -> bytes:
        """What was read; a process of the agent's that escaped with the pipe (`--no-sandbox`)
        cannot hold the call past 5 s."""
        self._thread.join(timeout=5)
        return b"".join(self.chunks)


def _text(output: bytes) -> str:
    """As text mode read it: undecodable bytes replaced, universal newlines."""
    decoded = output.decode(_ENCODING, errors="replace")
    return decoded.replace("\r\n", "\n").replace("\r", "\n")


def _result(argv: list[str], code: int, stdout: str, stderr: str, *, stopped: str) -> GitResult:
    result = GitResult(argv, code, stdout, stderr)
    result.stopped = stopped
    return result


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
    try:  # a regular file only: the folder may be the agent's, its `gitdir` a FIFO (a hang)
        back = read_regular(git_dir / "gitdir", 4096, "too large").decode(errors="replace").strip()
    except OSError:
        return False
    return bool(back) and (git_dir / back).resolve() == (repo / ".git").resolve()
