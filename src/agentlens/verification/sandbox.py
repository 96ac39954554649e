"""Run a command in a scratch copy of a repository, with a timeout and a clean environment.

The copy keeps verifier commands (test runs, builds, linters) from touching the repository under
review or each other. The environment is rebuilt from a short allow-list so secrets in the
caller's environment (API keys, tokens) never reach commands that the agent's code controls."""

from __future__ import annotations

import contextlib
import errno
import math
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from agentlens.list_text import counted
from agentlens.redaction import CUT_MARGIN, masked_tail
from agentlens.verification import disk_guard, isolation
from agentlens.verification.disk_guard import DiskFloor
from agentlens.verification.inside import read_text_inside
from agentlens.verification.memory_group import MemoryGroup, memory_group
from agentlens.verification.stop_rule import crossed_limit, stop_note
from agentlens.verification.tree_copy import (
    MAX_DEPTH,
    CopyOutOfTimeError,
    CopyTooDeepError,
    copy_tree,
    remove_tree,
)

# Only what toolchains need to be found and to behave deterministically.
ENV_ALLOW = (
    "PATH",
    "LANG",
    "LC_ALL",
    "JAVA_HOME",
    "GOROOT",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "VIRTUAL_ENV",
)
IGNORED_NAMES = ("__pycache__", ".pytest_cache", ".mypy_cache")
COPY_IGNORE = shutil.ignore_patterns(*IGNORED_NAMES)
# Installed dependencies are linked, not copied: node_modules holds tens of thousands of files.
LINKED_DIRS = ("node_modules",)
# a file is copied this much at a time, the clock read between: a 10 GB one would hold the copy
COPY_CHUNK_BYTES = 64 * 1024 * 1024


class CommandScope:
    """The commands one caller (a scenario fold) starts, in any of its threads, so that
    stopping it kills those that run and starts no more; other callers are not affected."""

    def __init__(self) -> None:
        self.stopped = False
        self.running: set[int] = set()
        self._lock = threading.Lock()

    def stop(self) -> None:
        with self._lock:
            self.stopped = True
            running = list(self.running)
        for pid in running:
            kill_group(pid)

    def admit(self, pid: int) -> bool:
        """Track a started command; False (and killed) if the scope stopped meanwhile."""
        with self._lock:
            if not self.stopped:
                self.running.add(pid)
                return True
        kill_group(pid)
        return False

    def release(self, pid: int) -> None:
        with self._lock:
            self.running.discard(pid)


_SCOPE: ContextVar[CommandScope | None] = ContextVar("agentlens_command_scope", default=None)


@contextmanager
def command_scope() -> Iterator[CommandScope]:
    """Commands started in this context (threads of `asyncio.to_thread` included) belong to
    the scope yielded; `scope.stop()` ends them."""
    scope = CommandScope()
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


@dataclass
class CommandResult:
    command: list[str]
    returncode: int | None
    output: str
    duration_s: float
    timed_out: bool
    # AgentLens's own notes on how the command ran (no sandbox, no memory group): kept out of
    # `output`, which verifiers' patterns and parsers read
    notes: str = ""
    # AgentLens's line when it ended the command itself or never let it start ("stopped: memory
    # limit …", "stopped: under N MB left free …", "not started: …"), "" otherwise: kept out
    # of `output` as `notes` are, and shown by each consumer as its own words
    stopped: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.stopped


# Toolchain homes under the real home (rustup toolchains, Go, npm and Maven caches): commands
# get a scratch HOME, so these are pointed at explicitly; they hold tools and caches, not secrets.
TOOL_HOMES = {
    "CARGO_HOME": ".cargo",
    "RUSTUP_HOME": ".rustup",
    "GOPATH": "go",
    "npm_config_cache": ".npm",
}


def toolchain_env() -> dict[str, str]:
    """The allow-listed variables and toolchain homes: all a command on agent code gets from
    the caller's environment."""
    env = {k: os.environ[k] for k in ENV_ALLOW if k in os.environ}
    real_home = Path.home()
    for key, rel in TOOL_HOMES.items():
        if key not in env and (real_home / rel).is_dir():
            env[key] = str(real_home / rel)
    env.setdefault("LANG", "C.UTF-8")
    return env


def clean_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = toolchain_env()
    env.update(HOME=str(home), TMPDIR=str(home), PYTHONDONTWRITEBYTECODE="1", NO_COLOR="1", CI="1")
    env.update(extra or {})
    return env


class CopyWouldFillDiskError(Exception):
    """Copying the repository would cross the disk floor; `note` is the result's `stopped`
    line. Not an OSError: the copy would gather it and go on copying."""

    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note


@dataclass
class ScratchCopy:
    """A scratch copy (`path`, beside its scratch home), the stamps of the report files the
    repository brought (`REPORT_NAMES`), taken as they were copied (globbing the copy for them
    walked all of it six times more), and how many `files` it holds."""

    path: Path
    brought: dict[Path, Stamp]
    files: int = 0


@contextmanager
def scratch_copy(repo: Path, deadline: float = math.inf) -> Iterator[ScratchCopy]:
    """A temporary copy of `repo` (with its .git, so git-aware tools behave), removed afterwards.
    CopyWouldFillDiskError, nothing copied past it, when a file would cross the disk floor of
    the copy (`disk_guard`): the repository is the agent's, and so is what it weighs.
    CopyOutOfTimeError once `time.monotonic()` passes `deadline` (the caller's timeout): so is
    its number of files; CopyTooDeepError past `tree_copy.MAX_DEPTH` folders."""
    with tempfile.TemporaryDirectory(prefix="agentlens-verify-") as tmp:
        try:
            yield _copied(repo, Path(tmp), deadline)
        finally:
            if os.path.lexists(Path(tmp) / "repo"):  # deeper than `TemporaryDirectory` removes
                remove_tree(Path(tmp) / "repo")


def _copied(repo: Path, tmp: Path, deadline: float) -> ScratchCopy:
    target = tmp / "repo"
    floor = DiskFloor.at_start(tmp, isolation.current().limits)
    linked = [d for d in LINKED_DIRS if (repo / d).is_dir()]
    scratch = tmp.resolve()  # inside `repo` when TMPDIR is (`--repo /tmp`): not copied
    brought: dict[Path, Stamp] = {}

    def skip(path: str, names: list[str]) -> set[str]:
        top = set(linked).intersection(names) if Path(path) == repo else set()
        if scratch.name in names and Path(path).resolve() == scratch.parent:
            top.add(scratch.name)
        return top | set(COPY_IGNORE(path, names))

    def copy(source: str, destination: str) -> None:
        _copy_plain(source, destination, floor, deadline)
        if destination.endswith(REPORT_NAMES):
            brought[Path(destination)] = _stamp(Path(destination))

    files = copy_tree(repo, target, skip=skip, copy_file=copy, deadline=deadline)
    for name in linked:
        (target / name).symlink_to(repo.resolve() / name, target_is_directory=True)
    (tmp / "home").mkdir()
    return ScratchCopy(target, brought, files)


def _copy_plain(source: str, target: str, floor: DiskFloor, deadline: float) -> None:
    """Regular files only, holes kept: a FIFO or socket the agent left (`mkfifo`) cannot be
    copied, and `copytree` then failed the whole copy, making every verifier an error. A
    sparse file (`truncate -s 1T`) weighs nothing, but a plain copy writes its holes out: each
    verifier's copy of a 180 KB repository took 2 GB of the host's disk, before any guard."""
    if not stat.S_ISREG(os.lstat(source).st_mode):  # a socket cannot even be opened
        return
    descriptor = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        found = os.fstat(descriptor)
        if not stat.S_ISREG(found.st_mode):
            return
        if not floor.has_room_for(found.st_blocks * 512):
            raise CopyWouldFillDiskError(floor.copy_note("the repository"))
        with open(target, "wb") as copy:
            for start, end in _data_extents(descriptor, found.st_size):
                _copy_range(descriptor, copy.fileno(), start, end, deadline)
            copy.truncate(found.st_size)
    finally:
        os.close(descriptor)
    shutil.copystat(source, target)


def _data_extents(descriptor: int, size: int) -> Iterator[tuple[int, int]]:
    """The (start, end) offsets holding data, holes skipped; the whole file where the file
    system does not tell holes apart."""
    offset = 0
    while offset < size:
        try:
            start = os.lseek(descriptor, offset, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # only a hole is left
                return
            raise
        end = min(os.lseek(descriptor, start, os.SEEK_HOLE), size)
        yield start, end
        offset = end


def _copy_range(source: int, target: int, start: int, end: int, deadline: float) -> None:
    os.lseek(target, start, os.SEEK_SET)
    while start < end:
        if time.monotonic() > deadline:
            raise CopyOutOfTimeError
        sent = os.sendfile(target, source, start, min(end - start, COPY_CHUNK_BYTES))
        if sent == 0:  # cut short while copied
            return
        start += sent


def run_command(
    command: Sequence[str] | str,
    cwd: Path,
    *,
    timeout_s: float,
    env: Mapping[str, str] | None = None,
    root: Path | None = None,
) -> CommandResult:
    """Run `command` (argv list, or a string given to `sh -c`) isolated, and capture stdout+stderr.

    `root` is the scratch folder holding the copy and its home (default: `cwd`'s parent); it is
    the only place the command can write. Only the tail of the output is kept (`Limits`), with
    the size of what was cut. When the command ends or times out, the sandbox's PID namespace is
    torn down, so test runners' children, daemons and `setsid` escapees die too. Its processes
    share one memory cap (`memory_group`); `notes` says when there is none, `stopped` when it
    was killed for the disk or its memory (or never started), never `output`."""
    argv = ["sh", "-c", command] if isinstance(command, str) else list(command)
    scope = _SCOPE.get()
    if scope is not None and scope.stopped:
        return CommandResult(argv, None, "", 0.0, False, stopped="not started: the run is stopping")
    root = root or cwd.parent
    with memory_group(isolation.current().limits.memory_mb) as group:
        return _run_grouped(argv, cwd, root, timeout_s, env, group)


def _run_grouped(
    argv: list[str],
    cwd: Path,
    root: Path,
    timeout_s: float,
    env: Mapping[str, str] | None,
    group: MemoryGroup,
) -> CommandResult:
    scope = _SCOPE.get()
    home = _scratch_home(root)
    policy = isolation.current()
    wrapped = isolation.isolate(
        argv, workdir=cwd, writable=[root], isolation=policy, memory=group, home=home
    )
    floor = DiskFloor.at_start(root, policy.limits)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            wrapped.argv,
            cwd=cwd,
            env=clean_env(home, env),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        return CommandResult(argv, None, "", 0.0, False, stopped=isolation.not_started(exc, argv))
    if scope is not None and not scope.admit(proc.pid):
        proc.wait()
        return CommandResult(argv, None, "", 0.0, False, stopped="stopped: the run is stopping")
    tail = OutputTail(proc.stdout, policy.limits.output_bytes)  # type: ignore[arg-type]
    stopped: str | None = ""
    try:
        stopped = _wait(proc, timeout_s, floor, group)
    finally:
        kill_group(proc.pid)
        proc.wait()
        if scope is not None:
            scope.release(proc.pid)
    text = tail.finish()
    took = time.monotonic() - start
    not_started = group.not_started_note(proc.returncode)
    if not_started:
        return CommandResult(argv, None, "", took, False, stopped=not_started)
    timed_out = stopped is None
    notes = "\n".join(note for note in (wrapped.warning, group.per_process_note()) if note)
    code = None if timed_out else proc.returncode
    why = stop_note(stopped or "", group, timed_out=timed_out)
    return CommandResult(argv, code, text, took, timed_out, notes, stopped=why)


def _wait(
    proc: subprocess.Popen[bytes], timeout_s: float, floor: DiskFloor, group: MemoryGroup
) -> str | None:
    """Until the command ends (""), times out (None) or crosses the disk `floor` or the memory
    of its `group` (the note of `stop_rule.crossed_limit`); the caller kills it then."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            proc.wait(timeout=max(0.0, min(disk_guard.POLL_S, deadline - time.monotonic())))
            return ""
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                return None
            if crossed := crossed_limit([floor], group):
                return crossed


class OutputTail:
    """Reads a pipe to its end in a thread, keeping only the last `keep` bytes in memory, and
    `CUT_MARGIN` more: the tail is masked before it is cut (`redaction.masked_tail`)."""

    def __init__(self, pipe: IO[bytes], keep: int) -> None:
        self.keep = keep
        self.total = 0
        self._buffer = bytearray()
        self._pipe = pipe
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := self._pipe.read1(1 << 16):  # type: ignore[attr-defined]
                self.total += len(chunk)
                self._buffer += chunk
                if len(self._buffer) > 2 * self.keep + CUT_MARGIN:
                    del self._buffer[: len(self._buffer) - self.keep - CUT_MARGIN]

    def finish(self) -> str:
        """The kept tail as text; a writer that escaped the sandbox cannot hold us past 5 s."""
        self._thread.join(timeout=5)
        self._pipe.close()
        data = bytes(self._buffer)
        if self.total <= self.keep:
            return _text(data)
        return kept_tail(data, self.keep, self.total, _text)


def kept_tail(data: bytes, keep: int, total: int, decode: Callable[[bytes], str]) -> str:
    """The last `keep` of a command's `total` bytes of output, of which `data` is the end (with
    `CUT_MARGIN` more, when there is more), masked before the cut (`redaction.masked_tail`: a
    key whose start the cut took would pass as any word), after a note of what was not kept."""
    kept = len(decode(data[-keep:])) if keep else 0  # in characters
    text = masked_tail(decode(data), kept)
    return f"[... first {total - keep} of {total} bytes of output not kept]\n{text}"


def _text(output: bytes) -> str:
    """Universal newlines, as text-mode pipes gave: verifier patterns like `SUCCESS$` match."""
    return output.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def _scratch_home(root: Path) -> Path:
    """The command's home: empty but for a link to the Maven repository (JVM tools find their
    home in the password database, which the sandbox points here)."""
    home = root / "home"
    home.mkdir(exist_ok=True)
    maven = Path.home() / ".m2"
    if maven.is_dir() and not (home / ".m2").exists():
        (home / ".m2").symlink_to(maven, target_is_directory=True)
    return home


def kill_group(pid: int) -> None:
    """SIGKILL a process group started with `start_new_session`; gone already is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def run_in_scratch(
    repo: Path,
    command: Sequence[str] | str,
    *,
    timeout_s: float,
    workdir: str = ".",
    env: Mapping[str, str] | None = None,
    reports: bool = False,
) -> tuple[CommandResult, dict[str, str]]:
    """Run `command` in a fresh copy of `repo`; with `reports`, also return the text of the
    report files the command left behind (JUnit XML, coverage reports), keyed by relative path.
    `timeout_s` covers the copy too: the command gets what the copy left of it. Looking for
    the reports ends `OVERTIME_S` past it at most; the result is then `stopped`, as it is when
    they weigh over `REPORTS_MAX_BYTES`: a verdict from some of them is none."""
    argv = ["sh", "-c", command] if isinstance(command, str) else list(command)
    start = time.monotonic()
    deadline = start + timeout_s
    try:
        with scratch_copy(repo, deadline) as copy:
            took = time.monotonic() - start
            if took >= timeout_s:
                raise CopyOutOfTimeError(copy.files)
            result = _run_in_copy(repo, copy, command, timeout_s - took, workdir, env)
            result = _with_copy_time(result, took, timeout_s)
            if not reports or result.timed_out or result.stopped:  # no verdict to read
                return result, {}
            return _with_reports(result, copy, deadline + OVERTIME_S)
    except CopyWouldFillDiskError as short:
        return CommandResult(argv, None, "", 0.0, False, stopped=short.note), {}
    except CopyOutOfTimeError as late:
        took = time.monotonic() - start
        return CommandResult(argv, None, "", took, True, stopped=_late_note(timeout_s, late)), {}
    except CopyTooDeepError:
        deep = f"not started: the repository nests folders over {MAX_DEPTH} deep"
        return CommandResult(argv, None, "", time.monotonic() - start, False, stopped=deep), {}


def _with_reports(
    result: CommandResult, copy: ScratchCopy, deadline: float
) -> tuple[CommandResult, dict[str, str]]:
    """`result` and the reports its command left, or `result` stopped when they could not all
    be read: a verdict from some of them is none."""
    try:
        return result, _collect_reports(copy.path, copy.brought, deadline)
    except ReportsUnreadError as unread:
        return replace(result, stopped=unread.note), {}


def _late_note(timeout_s: float, late: CopyOutOfTimeError) -> str:
    return (
        f"not started: copying the repository took the whole {timeout_s:g} s timeout "
        f"({counted(late.copied, 'file')} copied by then)"
    )


def _with_copy_time(result: CommandResult, took: float, timeout_s: float) -> CommandResult:
    """`result`, its time and notes counting the copy when it took a second or more."""
    if took < 1:
        return result
    said = f"note: copying the repository took {took:.1f} s of the {timeout_s:g} s timeout"
    notes = "\n".join(note for note in (result.notes, said) if note)
    return replace(result, duration_s=result.duration_s + took, notes=notes)


def _run_in_copy(
    repo: Path,
    copy: ScratchCopy,
    command: Sequence[str] | str,
    timeout_s: float,
    workdir: str,
    env: Mapping[str, str] | None,
) -> CommandResult:
    # the sandbox shows only the copy: paths into the repository (a venv on PATH) follow it
    original = str(repo.resolve())
    moved = {k: v.replace(original, str(copy.path)) for k, v in (env or {}).items()}
    return run_command(
        command, copy.path / workdir, timeout_s=timeout_s, env=moved, root=copy.path.parent
    )


# How long past a verifier's timeout its host-side work after the command may take: looking
# for its reports here, and the missing-tool probe (`verifiers.tools`). Removing its copies
# comes on top: it costs less than making what the command made in its time.
OVERTIME_S = 5.0
REPORT_MAX_BYTES = 20_000_000
REPORT_GLOBS = (
    "**/surefire-reports/TEST-*.xml",
    "**/test-results/**/TEST-*.xml",
    "coverage.json",
    "coverage.xml",
    "**/jacoco*.xml",
    "**/jacoco/**/*.xml",
)
# what every name a report glob matches ends with: the copy stamps these files as it makes them
REPORT_NAMES = (".xml", ".json")


Stamp = tuple[int, int, int] | None


# what the reports of one run may weigh in all: they are read into memory on the host, and a
# test may write as many 20 MB ones as the disk holds (50 took the host to 968 MB)
REPORTS_MAX_BYTES = 128 * 1024 * 1024


class ReportsUnreadError(Exception):
    """The reports could not all be read in time or in memory; `note` is the result's
    `stopped` line."""

    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note


def _collect_reports(
    root: Path, brought: dict[Path, Stamp], deadline: float = math.inf
) -> dict[str, str]:
    """The reports the command wrote or rewrote: one the repository brought and the run left
    alone (a passing JUnit report planted beside a build that ran no test) is not its result.
    Read on the host, maybe as root: a report linking out of the copy is not ours to read.
    ReportsUnreadError past `deadline` or `REPORTS_MAX_BYTES`."""
    found: dict[str, str] = {}
    weight = 0
    for name in _report_names(root, deadline):
        path = root / name
        if brought.get(path) == _stamp(path):
            continue
        text = read_text_inside(root, path, REPORT_MAX_BYTES)
        if text is None:  # not gone, too large, or linking out of the copy
            continue
        weight += len(text)
        if weight > REPORTS_MAX_BYTES:
            raise ReportsUnreadError(
                f"stopped: its reports weigh over {REPORTS_MAX_BYTES // (1024 * 1024)} MB "
                "(they were not read)"
            )
        found[name] = text
    return found


def _report_names(root: Path, deadline: float) -> Iterator[str]:
    """The paths below `root` that a report glob matches, as `Path.glob` finds them, but
    walked on a stack, through no link, no deeper than `tree_copy.MAX_DEPTH`, and against
    `deadline`: `Path.glob` nests a call per folder, so a test nesting 1,500 folders in its
    copy ended its verifier with `RecursionError`. ReportsUnreadError past `deadline`."""
    folders = [("", 0)]
    while folders:
        folder, depth = folders.pop()
        try:
            with os.scandir(root / folder) as listing:
                entries = list(listing)
        except OSError:  # gone, unreadable, or past PATH_MAX: no report of ours
            continue
        for entry in entries:
            if time.monotonic() > deadline:
                raise ReportsUnreadError(
                    f"stopped: looking for its reports took over {OVERTIME_S:g} s past its timeout"
                )
            name = f"{folder}/{entry.name}" if folder else entry.name
            if entry.is_dir(follow_symlinks=False):
                if depth < MAX_DEPTH:
                    folders.append((name, depth + 1))
            elif any(pattern.fullmatch(name) for pattern in REPORT_PATTERNS):
                yield name


def _glob_pattern(glob: str) -> re.Pattern[str]:
    """`glob` as `Path.glob` reads it: `**/` any number of folders, `*` within a name."""
    parts = [
        "(?:[^/]+/)*" if part == "**" else re.escape(part).replace(r"\*", "[^/]*") + "/"
        for part in glob.split("/")
    ]
    return re.compile("".join(parts).removesuffix("/"))


REPORT_PATTERNS = tuple(_glob_pattern(glob) for glob in REPORT_GLOBS)


def _stamp(path: Path) -> Stamp:
    try:
        found = os.lstat(path)
    except OSError:
        return None
    return (found.st_ino, found.st_mtime_ns, found.st_size)
