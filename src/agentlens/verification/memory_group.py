"""A cap on the sum of a sandboxed command's memory: a memory cgroup made for the command.

`Limits.memory_mb` reaches each process as RLIMIT_DATA, so four 900 MB processes ran under
`memory_mb: 1024`. A memory cgroup bounds them together (tmpfs pages in `/tmp` and `/dev/shm`
included). The group is made inside AgentLens's own cgroup, where the host lets it: a cgroup v2
subtree whose parent hands the memory controller down (`memory.max`, no swap, the whole group
killed together), else cgroup v1 (`memory.limit_in_bytes`, and `memory.memsw.limit_in_bytes`
where swap is accounted). The command's launcher writes its own pid into the group and then
execs, so nothing it forks is ever outside; the group is removed when the command ends.

Where no group can be made, the per-process limits stay and `per_process_note` says so;
`ungrouped_notes` gathers those notes for a result covering many commands."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from pathlib import Path

MB = 1024 * 1024
GROUP_PREFIX = "agentlens-"
REMOVE_WAIT_S = 5.0
# run by /bin/sh before the command: `$0` is the group's cgroup.procs; exit 125 says "not started"
NOT_ENTERED = 125
ENTER = f'echo $$ > "$0" || exit {NOT_ENTERED}; exec "$@"'
_numbers = itertools.count(1)
# the notes of the commands that got no group, for results that cover many commands (a
# scenario's verifiers, agent shell, MCP servers): a list shared by the context's threads and tasks
_UNGROUPED: ContextVar[list[str] | None] = ContextVar("agentlens_ungrouped", default=None)


@dataclass(frozen=True)
class MemoryGroup:
    """The group a command runs in (`path`), or why there is none (`why_not`)."""

    memory_mb: int
    path: Path | None = None
    version: int = 0  # 1 or 2: which cgroup interface `path` belongs to
    why_not: str = ""

    def launcher(self) -> list[str]:
        """What to put before the command so that it starts inside the group."""
        if self.path is None:
            return []
        return [shutil.which("sh") or "/bin/sh", "-c", ENTER, str(self.path / "cgroup.procs")]

    def oom_killed(self) -> bool:
        """Whether the kernel has killed a process of the group for its memory."""
        return self.path is not None and _oom_kills(self.path, self.version) > 0

    def not_started_note(self, returncode: int | None) -> str:
        """What a command's result says instead of its exit code when the launcher could not
        enter the group, so the command never ran: "" otherwise. A command may exit 125 itself
        (`git bisect run`'s skip, `env` and `timeout` failing): then the group took page faults,
        which no process ever in it can avoid. Asked before the group is removed."""
        if returncode != NOT_ENTERED or self.path is None or _page_faults(self.path) != 0:
            return ""
        return f"not started: cannot enter memory group {self.path} (sandbox memory_mb)"

    def stop_note(self) -> str:
        """AgentLens's line on a command stopped for its memory (`CommandResult.stopped`)."""
        return f"stopped: memory limit {self.memory_mb} MB (sandbox memory_mb, all its processes)"

    def per_process_note(self) -> str:
        """What a result says when there is no group: "" when there is one."""
        if self.path is not None:
            return ""
        return (
            f"note: sandbox memory_mb ({self.memory_mb} MB) bounds each process, not their sum: "
            f"{self.why_not}"
        )

    def remove(self) -> None:
        """Kill what is left in the group, then remove it; gone already is fine."""
        if self.path is not None:
            _remove(self.path, self.version)


@contextmanager
def memory_group(memory_mb: int) -> Iterator[MemoryGroup]:
    """A group capped at `memory_mb` for one command, removed afterwards (also when the
    command times out or the caller is interrupted)."""
    group = make(memory_mb)
    try:
        yield group
    finally:
        group.remove()


def make(memory_mb: int) -> MemoryGroup:
    """A new group capped at `memory_mb`, or one saying why none could be made; the caller
    removes it (`MemoryGroup.remove`)."""
    whys: list[str] = []
    for version, parent in _parents():
        _sweep(parent)
        path = parent / f"{GROUP_PREFIX}{os.getpid()}-{next(_numbers)}"
        try:
            path.mkdir()
        except OSError as exc:
            whys.append(f"cannot make a cgroup in {parent}: {exc.strerror}")
            continue
        try:
            _cap(path, version, memory_mb * MB)
        except OSError as exc:
            _remove(path, version)
            whys.append(f"cannot cap a cgroup in {parent}: {exc.strerror}")
            continue
        return MemoryGroup(memory_mb, path, version)
    group = MemoryGroup(memory_mb, why_not="; ".join(whys) or _no_parent_why())
    noted = _UNGROUPED.get()
    if noted is not None:
        noted.append(group.per_process_note())
    return group


@contextmanager
def ungrouped_notes() -> Iterator[list[str]]:
    """The notes of the commands started in this context (its threads and tasks included) that
    got no group; an enclosing context gets them too when this one ends."""
    outer = _UNGROUPED.get()
    notes: list[str] = []
    token = _UNGROUPED.set(notes)
    try:
        yield notes
    finally:
        _UNGROUPED.reset(token)
        if outer is not None:
            outer.extend(notes)


def joined_notes(notes: list[str]) -> str:
    """One line per distinct note (notes joined before included), in the order first seen."""
    return "\n".join(dict.fromkeys(line for note in notes for line in note.splitlines()))


def _cap(path: Path, version: int, limit: int) -> None:
    if version == 2:
        (path / "memory.max").write_text(str(limit))
        _write_if_there(path / "memory.swap.max", "0")
        _write_if_there(path / "memory.oom.group", "1")
    else:  # the memory limit first: memsw may never be below it
        (path / "memory.limit_in_bytes").write_text(str(limit))
        _write_if_there(path / "memory.memsw.limit_in_bytes", str(limit))


def _write_if_there(path: Path, value: str) -> None:
    if path.exists():
        path.write_text(value)


def _oom_kills(path: Path, version: int) -> int:
    """How many processes of the group the kernel killed for its memory."""
    counts = "memory.events" if version == 2 else "memory.oom_control"
    try:
        text = (path / counts).read_text()
    except OSError:
        return 0
    found = re.search(r"^oom_kill (\d+)$", text, re.MULTILINE)
    return int(found.group(1)) if found else 0


def _page_faults(path: Path) -> int | None:
    """The page faults of the group's processes (both cgroup versions count them); None when
    unknown, which is not zero."""
    try:
        text = (path / "memory.stat").read_text()
    except OSError:
        return None
    found = re.search(r"^pgfault (\d+)$", text, re.MULTILINE)
    return int(found.group(1)) if found else None


def _remove(path: Path, version: int) -> None:
    """A group holding processes cannot be removed: they are killed, then it is, as soon as
    they are gone (a few milliseconds); one still busy after `REMOVE_WAIT_S` is left to the
    next `_sweep`."""
    deadline = time.monotonic() + REMOVE_WAIT_S
    while True:
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() >= deadline:
                return
        _kill_members(path, version)
        time.sleep(0.01)


def _kill_members(path: Path, version: int) -> None:
    if version == 2 and (path / "cgroup.kill").exists():
        with contextlib.suppress(OSError):
            (path / "cgroup.kill").write_text("1")
        return
    try:
        pids = (path / "cgroup.procs").read_text().split()
    except OSError:
        return
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(int(pid), signal.SIGKILL)


def _sweep(parent: Path) -> None:
    """Groups left by an AgentLens process that no longer exists (killed with SIGKILL before
    it could remove them) are removed once empty; their commands died with it (bubblewrap's
    `--die-with-parent`), and what is not ours to know is never killed."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            owner = re.fullmatch(GROUP_PREFIX + r"(\d+)-\d+", entry.name)
            if owner and not _alive(int(owner.group(1))):
                with contextlib.suppress(OSError):
                    entry.rmdir()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@cache
def _parents() -> tuple[tuple[int, Path], ...]:
    """Where this process may make memory groups: its own cgroup in the v2 hierarchy when that
    hands the memory controller down, and its own v1 memory cgroup."""
    own = _own_cgroups()
    mounts = _cgroup_mounts()
    found: list[tuple[int, Path]] = []
    if "" in own and "cgroup2" in mounts:
        folder = _join(mounts["cgroup2"], own[""])
        if "memory" in _read_words(folder / "cgroup.subtree_control"):
            found.append((2, folder))
    if "memory" in own and "memory" in mounts:
        found.append((1, _join(mounts["memory"], own["memory"])))
    return tuple(found)


def _no_parent_why() -> str:
    if not Path("/proc/self/cgroup").exists():
        return "no cgroups on this system"
    return "no memory cgroup of AgentLens's own that hands the memory controller down"


def _own_cgroups() -> dict[str, str]:
    """Controller ("" for cgroup v2) → this process's cgroup path, from /proc/self/cgroup."""
    own: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                own[controller] = path
    return own


def _cgroup_mounts() -> dict[str, tuple[str, str]]:
    """`cgroup2` and each v1 controller → (mount point, the cgroup path mounted there)."""
    mounts: dict[str, tuple[str, str]] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            fields, _, tail = line.partition(" - ")
            parts, rest = fields.split(), tail.split()
            if len(parts) < 5 or len(rest) < 3:
                continue
            root, point = parts[3], parts[4].replace("\\040", " ")
            if rest[0] == "cgroup2":
                mounts.setdefault("cgroup2", (point, root))
            elif rest[0] == "cgroup":
                for option in rest[2].split(","):
                    mounts.setdefault(option, (point, root))
    return mounts


def _join(mount: tuple[str, str], cgroup: str) -> Path:
    """The folder of `cgroup` under a mount of the hierarchy's `root` path at `point`."""
    point, root = mount
    if root != "/" and (cgroup == root or cgroup.startswith(root + "/")):
        cgroup = cgroup[len(root) :]
    return Path(point) / cgroup.lstrip("/")


def _read_words(path: Path) -> list[str]:
    try:
        return path.read_text().split()
    except OSError:
        return []
