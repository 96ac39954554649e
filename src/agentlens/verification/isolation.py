"""Isolation for commands that run agent-written code: bubblewrap namespaces plus resource limits.

Every command AgentLens starts on an agent's repository (test runs, builds, linters, a scenario
agent's shell, MCP servers) is wrapped by `isolate`. Inside, the command sees the system read-only,
its scratch copy as the only writable place, a private `/tmp`, no home directories, no network
unless granted, and a PID namespace: when the outer `bwrap` process is killed, the kernel kills
everything inside, `setsid` children included.

When AgentLens runs as root (CI containers), the command also drops to the unprivileged
`nobody` user before it starts: a user namespace alone keeps root's file ownership, so root-owned
secrets (`/etc/shadow`) would stay readable, and the kernel exempts root from the process limit.

Where bubblewrap cannot run, `isolate` refuses with one line saying how to install it, unless
isolation was switched off (`--no-sandbox`), which results then carry as a warning."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

from agentlens.errors import AgentLensError
from agentlens.verification.memory_group import MemoryGroup

NOBODY = 65534
MAX_ARG_BYTES = 131_072  # MAX_ARG_STRLEN: 32 pages of 4 KiB
NO_SANDBOX_WARNING = "warning: --no-sandbox: agent-written code ran without isolation"
# said once when the option is read, before anything has run (the results carry the one above)
NO_SANDBOX_NOTICE = "warning: --no-sandbox: agent-written code will run without isolation"
INSTALL_HINT = (
    "cannot isolate agent-written code: bubblewrap is not usable here ({why}); install it "
    "(Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) or pass "
    "--no-sandbox to run it uncontained"
)
# Read-only system folders the command may use; home directories, /work-style project roots,
# /mnt and /var are left out on purpose.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
# Files under /etc that a tool never needs and that hold secrets when readable.
MASKED_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh")
# Credentials kept inside the toolchain folders of the home directory that are shown read-only
# (a crates.io token, Maven's master password); builds and tests never need them.
MASKED_HOME_FILES = (".cargo/credentials", ".cargo/credentials.toml", ".m2/settings-security.xml")


# AgentLens's own git calls on an agent's repository (diffs, changed files) run outside the
# sandbox: the repository may belong to the sandbox user, and its .git/config is the agent's,
# so ownership checks are waived and the config keys that run programs are switched off.
GIT_HARDENING = (
    "-c", "safe.directory=*",
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.pager=cat",
)  # fmt: skip


class SandboxUnavailableError(AgentLensError):
    """bubblewrap is missing or cannot create namespaces on this machine."""


@dataclass(frozen=True)
class Limits:
    """Per-process resource limits; `processes` bounds how many there are at once, and
    `memory_mb` also their sum where a memory cgroup can be made (`memory_group`)."""

    memory_mb: int = 4096  # RLIMIT_DATA: heap and private mappings (JVM/Go reservations are not)
    cpu_s: int = 900
    processes: int = 512
    file_size_mb: int = 2048
    output_bytes: int = 1_000_000  # the tail of the output that is kept
    # the command is stopped when the disk of its writable folder has less free: file_size_mb
    # bounds each file, not how many there are
    disk_free_mb: int = 1024


@dataclass(frozen=True)
class Isolation:
    """How a command is contained; `enabled=False` is `--no-sandbox`."""

    enabled: bool = True
    network: bool = False
    limits: Limits = field(default_factory=Limits)

    def with_overrides(self, settings: dict[str, object]) -> Isolation:
        """A scenario's `sandbox:` block: `network`, and any `Limits` field by name."""
        known = set(Limits.__dataclass_fields__)
        unknown = set(settings) - known - {"network"}
        if unknown:
            noun = "setting" if len(unknown) == 1 else "settings"
            raise AgentLensError(
                f"unknown sandbox {noun} {', '.join(sorted(unknown))}; "
                f"known: network, {', '.join(sorted(known))}"
            )
        limits = replace(self.limits, **{k: int(v) for k, v in settings.items() if k in known})  # type: ignore[call-overload]
        return replace(self, network=bool(settings.get("network", self.network)), limits=limits)


_POLICY: ContextVar[Isolation | None] = ContextVar("agentlens_isolation", default=None)
_default = Isolation()


def current() -> Isolation:
    """The policy of this context, else the process-wide one."""
    return _POLICY.get() or _default


@contextmanager
def policy(isolation: Isolation) -> Iterator[Isolation]:
    """Commands started in this context (threads of `asyncio.to_thread` included) use `isolation`."""
    token = _POLICY.set(isolation)
    try:
        yield isolation
    finally:
        _POLICY.reset(token)


def set_default(isolation: Isolation) -> None:
    """The process-wide policy, set once by the CLI from `--no-sandbox`."""
    global _default
    _default = isolation


@dataclass(frozen=True)
class Wrapped:
    """What to start instead of the bare command."""

    argv: list[str]
    warning: str = ""


def isolate(
    argv: Sequence[str],
    *,
    workdir: Path,
    writable: Sequence[Path],
    isolation: Isolation,
    memory: MemoryGroup,
    home: Path | None = None,
    readable: Sequence[Path] = (),
) -> Wrapped:
    """`argv` wrapped in bubblewrap, run in `workdir`; only `writable` folders can be written,
    and besides the system only `readable` ones (and toolchains) can be read. It starts inside
    the `memory` group (`memory_group.memory_group(limits.memory_mb)`), when there is one.

    `home` becomes the home directory of the user the command runs as (JVM tools read it from
    the password database, not from $HOME)."""
    limiter = [*memory.launcher(), *_limit_argv(isolation.limits)]
    if not isolation.enabled:
        return Wrapped([*limiter, *argv], NO_SANDBOX_WARNING)
    bwrap = bubblewrap()
    for folder in writable:
        _check_writable(folder)
    as_root = os.geteuid() == 0
    if as_root:
        for folder in writable:
            _hand_to_nobody(folder)
    mounts = _mounts(writable, readable, isolation.limits)
    prefix = [*limiter, bwrap, *_namespaces(isolation, as_root), *mounts]
    if as_root and home is not None:
        prefix += ["--ro-bind", str(_passwd_for_nobody(home)), "/etc/passwd"]
    prefix += ["--chdir", os.path.realpath(workdir)]  # as bound: a relative path fails inside
    if as_root:
        prefix += ["--cap-add", "CAP_SETUID,CAP_SETGID", "--", *_drop_to_nobody()]
    else:
        prefix.append("--")
    return Wrapped([*prefix, *argv])


def not_started(exc: OSError, argv: Sequence[str]) -> str:
    """AgentLens's line for a command the system refused to start (no launcher ran, so there is
    no output and no exit code). Its own words name the launcher (`/usr/bin/sh`), not the
    command; a model writing a file in one command meets the size limit, so it is spelt out."""
    if exc.errno == errno.E2BIG:
        longest = max((len(os.fsencode(arg)) for arg in argv), default=0)
        return (
            f"not started: the system refused its arguments as too long (the longest is "
            f"{longest:,} bytes; Linux takes {MAX_ARG_BYTES:,} per argument)"
        )
    return f"not started: {exc.strerror or exc}"


def require() -> None:
    """Refuse now, with one line, when the current policy isolates and bubblewrap cannot run."""
    if current().enabled:
        bubblewrap()


@cache
def bubblewrap() -> str:
    """The bwrap binary, checked once to really create namespaces here."""
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxUnavailableError(INSTALL_HINT.format(why="no 'bwrap' on PATH"))
    probe = [path, "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--", "true"]
    if os.geteuid() != 0:
        probe.insert(1, "--unshare-user")
    done = subprocess.run(probe, capture_output=True, timeout=30, check=False)
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip().splitlines()
        raise SandboxUnavailableError(INSTALL_HINT.format(why=why[-1] if why else "it failed"))
    return path


def _namespaces(isolation: Isolation, as_root: bool) -> list[str]:
    flags = ["--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc"]
    flags += ["--unshare-uts", "--unshare-cgroup-try"]
    if not as_root:  # as root the command drops to `nobody` instead; see the module docstring
        flags.append("--unshare-user")
    if not isolation.network:
        flags.append("--unshare-net")
    return flags


def _mounts(writable: Sequence[Path], readable: Sequence[Path], limits: Limits) -> list[str]:
    mounts = ["--proc", "/proc", *_memory_folders(limits.memory_mb)]
    for folder in SYSTEM_DIRS:
        if os.path.islink(folder):
            mounts += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            mounts += ["--ro-bind", folder, folder]
    for path in MASKED_FILES:
        if os.path.isdir(path):
            mounts += ["--tmpfs", path]
        elif os.path.exists(path):
            mounts += ["--ro-bind", "/dev/null", path]
    tools = _toolchain_dirs([str(p) for p in readable])
    files = [f for f in map(os.path.realpath, readable) if os.path.isfile(f)]
    places = [*tools, *files, *(os.path.realpath(w) for w in writable)]
    for parent in _parents(places):  # bwrap would create them 0700: unreadable to `nobody`
        mounts += ["--perms", "0755", "--dir", parent]
    for folder in tools:
        mounts += ["--ro-bind", folder, folder]
    for file in files:
        mounts += ["--ro-bind", file, file]
    for secret in (os.path.realpath(Path.home() / rel) for rel in MASKED_HOME_FILES):
        if os.path.isfile(secret) and any(secret.startswith(t + "/") for t in tools):
            mounts += ["--ro-bind", "/dev/null", secret]
    for scratch in writable:
        mounts += ["--bind", os.path.realpath(scratch), os.path.realpath(scratch)]
    return mounts


def _memory_folders(memory_mb: int) -> list[str]:
    """/tmp and /dev/shm, capped at `memory_mb` each; /dev and /run read-only. They are tmpfs:
    what a command writes there is memory that no per-process limit counts, and uncapped each
    could take half the host's RAM (without root, /dev and /run were writable too). bubblewrap
    before 0.7 cannot size a tmpfs: there /tmp stays uncapped and /dev/shm is not writable."""
    size = ["--size", str(memory_mb * 1024 * 1024)] if _sizes_tmpfs() else []
    shm = ["--perms", "1777", *size, "--tmpfs", "/dev/shm"] if size else []
    mounts = ["--dev", "/dev", *shm, "--remount-ro", "/dev"]
    mounts += ["--perms", "1777", *size, "--tmpfs", "/tmp"]
    return [*mounts, "--tmpfs", "/run", "--remount-ro", "/run"]


@cache
def _sizes_tmpfs() -> bool:
    """Whether this bubblewrap knows `--size` (0.7.0, 2022; Ubuntu 22.04 has 0.6.1)."""
    done = subprocess.run([bubblewrap(), "--help"], capture_output=True, timeout=30, check=False)
    return b"--size" in done.stdout + done.stderr


def _toolchain_dirs(extra: Sequence[str] = ()) -> list[str]:
    """Interpreters and toolchains outside the system folders (pyenv, a venv, rustup, Go), and
    `extra`: bound read-only so commands find them; they hold tools, not secrets."""
    home = Path.home()
    found = [sys.prefix, sys.base_prefix, *os.environ.get("PATH", "").split(os.pathsep)]
    # a relative PATH entry (`.`: wherever AgentLens was started) or one holding the home
    # directory (`~` on PATH) would show all of the user's files, `~/.ssh` included
    candidates = [f for f in found if os.path.isabs(f) and not _holds(f, str(home))]
    candidates += extra
    candidates += [str(home / rel) for rel in (".pyenv", ".cargo", ".rustup", "go", ".m2", ".npm")]
    chosen: list[str] = []
    for raw in candidates:
        folder = os.path.realpath(raw) if raw else ""
        if not folder or not os.path.isdir(folder) or folder == "/":
            continue
        if _under_system_dir(folder):
            continue
        if not any(folder == c or folder.startswith(c + "/") for c in chosen):
            chosen = [c for c in chosen if not c.startswith(folder + "/")] + [folder]
    return sorted(chosen)


def named_files(argv: Sequence[str]) -> list[Path]:
    """What to show of the files a command line names by absolute path (a script, a config):
    each one's folder, or the file alone when that folder holds the home directory (`python
    ~/agent.py` showed `~/.ssh`)."""
    named = [Path(part) for part in argv if part.startswith("/") and Path(part).is_file()]
    return [p if _holds(str(p.parent), str(Path.home())) else p.parent for p in named]


def _holds(folder: str, path: str) -> bool:
    real, inside = os.path.realpath(folder), os.path.realpath(path)
    return inside == real or inside.startswith(real.rstrip("/") + "/")


def _parents(folders: Sequence[str]) -> list[str]:
    parents = {str(p) for f in folders for p in Path(f).parents if str(p) != "/"}
    return sorted(parents - {f for f in parents if _under_system_dir(f)}, key=len)


def _under_system_dir(folder: str) -> bool:
    return any(folder == d or folder.startswith(d + "/") for d in SYSTEM_DIRS)


def _passwd_for_nobody(home: Path) -> Path:
    """The system's password file with `nobody`'s home pointed at the scratch home."""
    lines = Path("/etc/passwd").read_text().splitlines()
    fields = [line.split(":") for line in lines]
    rows = [[*f[:5], str(home), *f[6:]] if f[2:3] == [str(NOBODY)] else f for f in fields]
    path = reclaim(home.parent / ".passwd")
    path.write_text("".join(":".join(row) + "\n" for row in rows))
    return path


def planted(path: Path) -> bool:
    """Whether `path`, in a folder a sandboxed command could write, is anything but a plain
    file of that folder: a link (to a host file, say), a folder, a FIFO, a second name."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return False
    return not stat.S_ISREG(found.st_mode) or found.st_nlink > 1


def reclaim(path: Path) -> Path:
    """`path` cleared of what a sandboxed command planted there, so that AgentLens (maybe root)
    writes a new file of its own instead of writing through a link to a host file."""
    if planted(path):
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path)
        else:
            path.unlink()
    return path


def _drop_to_nobody() -> list[str]:
    setpriv = shutil.which("setpriv") or "setpriv"
    # group 0 as a supplementary group: root-only toolchain caches (~/.m2 is 0750) stay readable;
    # only folders bound into the sandbox are visible at all
    ids = [f"--reuid={NOBODY}", f"--regid={NOBODY}", "--groups=0"]
    return [setpriv, *ids, "--inh-caps=-all", "--bounding-set=-all"]


def share_with_sandbox(*paths: Path) -> None:
    """Private files a sandboxed command must read (an agent's MCP config, mode 0600 in a 0700
    folder) become the sandbox user's; without root the command keeps this user's id anyway."""
    if os.geteuid() == 0:
        for path in paths:
            os.chown(path, NOBODY, NOBODY)


def _check_writable(folder: Path) -> None:
    """Only a folder of its own may be handed to the sandbox: making `/`, a system folder, the
    temporary root or the home directory (or a parent of one) writable would hand them over."""
    resolved = Path(os.path.realpath(folder))
    protected = [Path("/"), Path(tempfile.gettempdir()), Path.home(), Path(sys.prefix), Path.cwd()]
    protected += [Path(d) for d in SYSTEM_DIRS]
    if not resolved.is_dir() or any(p == resolved or resolved in p.parents for p in protected):
        raise AgentLensError(f"refusing to make {resolved} writable to a sandboxed command")


def _hand_to_nobody(folder: Path) -> None:
    """The scratch copy becomes writable by the unprivileged user the command runs as.

    By folder descriptor, not by path: a sandboxed process already running there (an MCP
    server, while the agent's next command starts) can swap a folder for a link to `/etc`
    between listing it and changing its files, and a path would then follow the link. Folders
    wait on a stack as names, each opened again from `folder`, one `O_NOFOLLOW` step at a time:
    `os.fwalk` nests a call per folder, and a workspace the agent nested 1,100 deep made each of
    its later commands an agent error (`RecursionError`), a failed run left out of the pass
    rate."""
    os.chown(folder, NOBODY, NOBODY)
    try:
        top = os.open(folder, _FOLDER_FLAGS)
    except OSError:  # a link: its target is not walked (`os.fwalk` did not walk it either)
        return
    try:
        device = os.fstat(top).st_dev
        waiting: list[tuple[str, ...]] = [()]
        while waiting:
            parts = waiting.pop()
            descriptor = _open_below(top, parts, device)
            if descriptor is not None:
                waiting += [(*parts, name) for name in _hand_entries(descriptor, device)]
    finally:
        os.close(top)


_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_below(top: int, parts: tuple[str, ...], device: int) -> int | None:
    """The folder `parts` below `top`, opened through no link and on `device`; None if it is
    no longer such a folder."""
    descriptor = os.dup(top)
    try:
        for name in parts:
            parent, descriptor = descriptor, -1
            try:
                descriptor = os.open(name, _FOLDER_FLAGS, dir_fd=parent)
            finally:
                os.close(parent)
        if os.fstat(descriptor).st_dev == device:
            found, descriptor = descriptor, -1
            return found
        return None
    except OSError:  # gone, or a link or a file now
        return None
    finally:
        if descriptor >= 0:
            os.close(descriptor)


def _hand_entries(descriptor: int, device: int) -> list[str]:
    """Each entry of the open folder handed over (links themselves, not their targets; not a
    folder of another device); the names of its folders. The descriptor is closed."""
    try:
        folders = []
        with os.scandir(descriptor) as listing:
            for entry in listing:
                if entry.is_dir(follow_symlinks=False):
                    if entry.stat(follow_symlinks=False).st_dev != device:
                        continue
                    folders.append(entry.name)
                os.chown(entry.name, NOBODY, NOBODY, dir_fd=descriptor, follow_symlinks=False)
        return folders
    finally:
        os.close(descriptor)


def _limit_argv(limits: Limits) -> list[str]:
    """`prlimit` in front of the command: no Python runs in the child between fork and exec."""
    # RLIMIT_NPROC counts every process of the user: a non-root user's own count comes on top
    processes = limits.processes + (0 if os.geteuid() == 0 else _processes_of(os.getuid()))
    mib = 1024 * 1024
    prlimit = shutil.which("prlimit") or "prlimit"
    return [
        prlimit,
        f"--data={limits.memory_mb * mib}",
        f"--cpu={limits.cpu_s}",
        f"--nproc={processes}",
        f"--fsize={limits.file_size_mb * mib}",
        "--core=0",
        "--",
    ]


def _processes_of(uid: int) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                continue
    return count
