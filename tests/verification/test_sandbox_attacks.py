"""Attacks on the sandbox itself, with real bubblewrap on the demo's real calc repository: what
an agent's code writes or plants must stay within the limits and not stop verification.
What verifiers read from a run is attacked in `test_verifier_lies.py`."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import tempfile
import time
from pathlib import Path

import pytest

from agentlens.demo.tiny_repo import create_repo
from agentlens.errors import AgentLensError
from agentlens.scenarios.agents._shell import run_shell
from agentlens.verification import isolation, memory_group, sandbox
from agentlens.verification.disk_guard import DiskFloor
from agentlens.verification.memory_group import MemoryGroup
from agentlens.verification.sandbox import run_in_scratch
from agentlens.verification.tree_copy import remove_tree
from agentlens.verification.verifiers import run_verifier
from agentlens.verification.verifiers.base import VerifyContext


@pytest.fixture(autouse=True)
def _needs_bubblewrap() -> None:
    isolation.bubblewrap()  # the CI installs it; without it these tests must fail, not skip


@pytest.fixture
def calc(tmp_path: Path) -> Path:
    return create_repo(tmp_path / "calc")


def test_memory_folders_are_capped_and_the_rest_read_only(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/tmp and /dev/shm are tmpfs, i.e. memory no per-process limit counts: each took up to
    half the host's RAM (12 GB here) under a 64 MB limit. Without root, /dev and /run were
    writable tmpfs too. Their sizes are the bound where no memory group can be made (here
    there is one, and it would stop the command first: their pages count toward it)."""
    monkeypatch.setattr(memory_group, "_parents", lambda: ())
    script = (
        "for d in /tmp /dev/shm; do dd if=/dev/zero of=$d/fill bs=1M count=100 2>/dev/null;"
        " echo $d $(($(stat -c %s $d/fill) / 1048576)) MB; done;"
        " for d in /dev /run; do touch $d/planted 2>/dev/null && echo $d writable; done; true"
    )
    with isolation.policy(isolation.Isolation(limits=isolation.Limits(memory_mb=64))):
        run, _ = run_in_scratch(calc, script, timeout_s=60)
    assert run.output.split("\n") == ["/tmp 64 MB", "/dev/shm 64 MB", ""], run.output


def test_the_command_has_no_capabilities_its_own_namespaces_and_its_limits(calc: Path) -> None:
    """What the command itself sees: no capability (as root it drops to `nobody` with an empty
    bounding set), an IPC and host-name namespace of its own, and the CPU and file-size limits
    of the policy."""
    script = (
        "grep -E '^Cap(Eff|Bnd):' /proc/self/status; readlink /proc/self/ns/ipc /proc/self/ns/uts;"
        " grep -E '^Max (cpu time|file size)' /proc/self/limits"
    )
    limits = isolation.Limits(cpu_s=77, file_size_mb=3)
    with isolation.policy(isolation.Isolation(limits=limits)):
        run, _ = run_in_scratch(calc, script, timeout_s=60)
    lines = run.output.splitlines()
    assert lines[:2] == ["CapEff:\t0000000000000000", "CapBnd:\t0000000000000000"], run.output
    host = {os.readlink(f"/proc/self/ns/{name}") for name in ("ipc", "uts")}
    assert len(lines[2:4]) == 2 and not host & set(lines[2:4]), run.output
    shown = [re.split(r"\s{2,}", line)[:3] for line in lines[4:]]
    assert shown == [["Max cpu time", "77", "77"], ["Max file size", "3145728", "3145728"]]


def test_the_hosts_credential_files_show_nothing_inside(calc: Path) -> None:
    """`MASKED_FILES` inside: a folder (/etc/ssh) is empty, a file (/etc/shadow) gives no byte
    (bound to /dev/null, which a `nodev` mount may also refuse to open)."""
    present = [path for path in isolation.MASKED_FILES if os.path.exists(path)]
    assert "/etc/shadow" in present
    count = {p: f"ls -A {p}" if os.path.isdir(p) else f"cat {p} 2>/dev/null" for p in present}
    script = "; ".join(f"echo {path}:$({shown} | wc -c)" for path, shown in count.items())
    run, _ = run_in_scratch(calc, script, timeout_s=60)
    assert run.output.splitlines() == [f"{path}:0" for path in present], run.output


def test_a_folder_that_holds_the_home_is_never_made_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Handing the sandbox a folder above the home directory would hand it the home too."""
    home = tmp_path / "users" / "me"
    (home / "scratch").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for folder in (home.parent, home):
        with pytest.raises(AgentLensError, match=f"refusing to make {folder} writable"):
            isolation._check_writable(folder)
    isolation._check_writable(home / "scratch")


def test_special_files_in_the_repository_do_not_stop_verification(calc: Path) -> None:
    """An agent's `mkfifo` (or a socket) in its workspace made every verifier an error:
    copying the repository raised on them."""
    os.mkfifo(calc / "pipe")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(calc / "sock"))
        run, _ = run_in_scratch(calc, "ls", timeout_s=60)
    assert run.ok and "calc" in run.output.split() and "pipe" not in run.output.split()


# 64 MB files until 2.5 GB are written, then it waits: only the disk guard ends it early
FILL_DISK = (
    "for i in $(seq 40); do dd if=/dev/zero of=fill$i bs=1M count=64 2>/dev/null; done; sleep 60"
)


def _leave_free_mb(folder: Path, fill_mb: int) -> isolation.Isolation:
    """A policy whose disk floor lies `fill_mb` below the free space of `folder`'s disk now."""
    free_mb = shutil.disk_usage(folder).free // (1024 * 1024)
    return isolation.Isolation(limits=isolation.Limits(disk_free_mb=free_mb - fill_mb))


def test_a_verifier_command_filling_the_disk_is_stopped(calc: Path) -> None:
    """`file_size_mb` caps each file, not their number: a test wrote until the host's disk was
    full (the copy is on the host's disk), until its timeout."""
    with isolation.policy(_leave_free_mb(calc, 300)):
        run, _ = run_in_scratch(calc, FILL_DISK, timeout_s=8)
    assert not run.timed_out and run.returncode == -9, run.output
    assert run.stopped.endswith("left free on the disk it writes to (sandbox disk_free_mb)")
    assert "stopped:" not in run.output, run.output


def test_an_agent_shell_command_filling_the_disk_is_stopped(calc: Path) -> None:
    """The same through the built-in agent's shell, whose workspace stays after the run."""
    with isolation.policy(_leave_free_mb(calc, 300)):
        result = asyncio.run(run_shell(FILL_DISK, calc, timeout_s=8))
    assert not result.timed_out and result.returncode == -9, result.output
    assert result.stopped.endswith("left free on the disk it writes to (sandbox disk_free_mb)")
    assert "stopped:" not in result.output, result.output


def test_a_sparse_file_in_the_repository_stays_sparse_in_each_copy(calc: Path) -> None:
    """`truncate -s` weighs nothing (the sandbox's disk guard sees no use), but each verifier's
    copy wrote its holes out: a 180 KB repository took 2 GB of the host's disk per copy, and a
    `truncate -s 1T` would fill it before any guard."""
    with (calc / "blob.bin").open("wb") as blob:
        blob.truncate(256 * 1024 * 1024)
        blob.seek(100 * 1024 * 1024)
        blob.write(b"data in the middle")
    run, _ = run_in_scratch(
        calc, "stat -c '%s %b %B' blob.bin; tail -c 1 blob.bin | od -An -c", timeout_s=60
    )
    size, blocks, block_size = map(int, run.output.split()[:3])
    assert size == 256 * 1024 * 1024 and blocks * block_size < 1024 * 1024, run.output
    copied = run_in_scratch(calc, "grep -c 'data in the middle' blob.bin", timeout_s=60)[0]
    assert copied.output.strip() == "1", copied.output


def test_a_repository_whose_copy_would_cross_the_disk_floor_is_not_copied(calc: Path) -> None:
    """Each verifier copies the agent's repository to the host's disk before its command runs,
    and the guard watched only the command: the copy took the disk past the floor, and the
    command, finding the disk short at its start, was then allowed half of what was left."""
    (calc / "data.bin").write_bytes(os.urandom(64 * 1024 * 1024))
    with isolation.policy(_leave_free_mb(calc, 16)):
        run, reports = run_in_scratch(calc, "echo ran", timeout_s=60)
    assert (run.returncode, run.output, reports) == (None, "", {}), run.output
    assert run.stopped.startswith("not started: copying the repository would leave under ")
    assert run.stopped.endswith(" MB free on its disk (sandbox disk_free_mb)"), run.stopped
    assert not run.ok


@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands the copy to `nobody`")
def test_a_folder_swapped_for_a_link_while_it_is_handed_over_is_not_followed(
    calc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Root chowns the writable folder to `nobody` before each command, while a sandboxed MCP
    server may already run there. Failure injection: as root starts on the files of `repo/`,
    it becomes a link to a root-owned host folder; by path, root then chowned that folder's
    files to `nobody` (with `/etc` as the target: `/etc/shadow`)."""
    scratch, host = tmp_path / "scratch", tmp_path / "host-etc"
    scratch.mkdir()
    repo = calc.rename(scratch / "repo")
    host.mkdir()
    for name in os.listdir(repo):
        (host / name).write_text("root's")
    real_chown = os.chown

    def swap_then_chown(path: str, *args: int, dir_fd: int | None = None, **kw: bool) -> None:
        folder = os.readlink(f"/proc/self/fd/{dir_fd}") if dir_fd else os.path.dirname(path)
        if folder == str(repo) and not repo.is_symlink():
            repo.rename(scratch / "moved")
            repo.symlink_to(host, target_is_directory=True)
        real_chown(path, *args, dir_fd=dir_fd, **kw)

    monkeypatch.setattr(os, "chown", swap_then_chown)
    writable = [scratch]
    no_group = MemoryGroup(64, why_not="not needed here")
    policy = isolation.Isolation()
    isolation.isolate(
        ["true"], workdir=scratch, writable=writable, isolation=policy, memory=no_group
    )
    assert repo.is_symlink() and {f.stat().st_uid for f in host.iterdir()} == {0}


@pytest.mark.parametrize("entry", [".", "HOME"])
def test_a_path_entry_holding_the_home_does_not_show_it(
    calc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: str
) -> None:
    """Folders on PATH are bound read-only, as toolchains: `.` on PATH (started from the home
    directory) or `~` on PATH bound the whole home, `~/.ssh` included. (Without root the
    sandbox user is the user: a 0700 home is no obstacle; this home is 0755 so that `nobody`,
    the user under root, shows the same.)"""
    home = tmp_path / "home"
    home.mkdir()
    (home / "secret.txt").write_text("the user's secret\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home)
    monkeypatch.setenv("PATH", f"{home if entry == 'HOME' else entry}:{os.environ['PATH']}")
    run, _ = run_in_scratch(calc, f"cat {home}/secret.txt", timeout_s=60)
    assert not run.ok and "secret" not in run.output.replace("secret.txt", ""), run.output


def test_a_disk_already_short_at_the_start_does_not_stop_every_command(calc: Path) -> None:
    """A user's disk with less free than `disk_free_mb` is not the command's doing: a floor
    above what is free stopped every command at once. It must then leave half of that."""
    free_mb = shutil.disk_usage(calc).free // (1024 * 1024)
    short = isolation.Isolation(limits=isolation.Limits(disk_free_mb=free_mb + 10_000))
    with isolation.policy(short):
        run, _ = run_in_scratch(calc, "sleep 0.5; echo done", timeout_s=20)
        result = asyncio.run(run_shell("sleep 0.5; echo done", calc, timeout_s=20))
    assert (run.returncode, run.output.strip()) == (0, "done"), run.output
    assert (result.returncode, result.output.strip()) == (0, "done"), result.output


def test_a_command_on_a_short_disk_may_use_half_of_what_is_free(calc: Path) -> None:
    free_mb = shutil.disk_usage(calc).free // (1024 * 1024)
    floor = DiskFloor.at_start(calc, isolation.Limits(disk_free_mb=free_mb + 10_000))
    assert floor.short_at_start and abs(floor.floor_bytes // (1024 * 1024) - free_mb // 2) <= 64
    assert not floor.crossed()
    assert "half of the" in floor.note() and "under the sandbox disk_free_mb" in floor.note()


TOO_LONG = (
    "not started: the system refused its arguments as too long (the longest is {n:,} bytes; "
    "Linux takes 131,072 per argument)"
)


def test_a_command_the_kernel_will_not_start_is_not_started_with_no_output(calc: Path) -> None:
    """An argument past the kernel's limit: the launcher never ran. The line named the
    command's own program (`cannot start 'true': … '/usr/bin/sh'`) inside its output, where a
    user's pattern matched AgentLens's words; it is now the result's stop line, and no check
    takes it for a missing tool."""
    too_long = "x" * 200_000
    run, _ = run_in_scratch(calc, ["true", too_long], timeout_s=30)
    assert (run.ok, run.returncode, run.output) == (False, None, ""), run
    assert run.stopped == TOO_LONG.format(n=200_000), run.stopped
    result = run_verifier(
        {"type": "CommandVerifier", "command": ["true", too_long], "forbidden_pattern": "start"},
        VerifyContext(calc),
    )
    assert (result.status, result.metrics["stopped"]) == ("error", run.stopped), result.reason
    assert result.reason == f"the command {run.stopped}", result.reason


def test_an_agent_writing_a_large_file_in_one_command_is_told_why_it_did_not_run(
    calc: Path,
) -> None:
    """A model writing a 200 KB file with one here-document: the scenario died with an
    OSError naming `/usr/bin/sh`. Now the agent's shell result says why, and nothing ran."""
    command = "cat > big.txt <<'EOF'\n" + "y" * 200_000 + "\nEOF"
    result = asyncio.run(run_shell(command, calc, timeout_s=30))
    assert (result.returncode, result.output) == (None, ""), result
    assert result.stopped == TOO_LONG.format(n=len(command)), result.stopped
    assert not (calc / "big.txt").exists()


def _many_files(repo: Path, count: int) -> None:
    for folder in range(count // 1000):
        (repo / "many" / f"d{folder}").mkdir(parents=True)
        for number in range(1000):
            (repo / "many" / f"d{folder}" / f"f{number}").write_bytes(b"x")


def test_a_repository_of_many_files_is_copied_within_the_verifiers_timeout(calc: Path) -> None:
    """Each verifier's copy of the repository ran before its timeout started: 200,000 one-byte
    files made a `CommandVerifier` with a 5 s timeout take 9 minutes, and then pass."""
    _many_files(calc, 40_000)
    spec = {"type": "CommandVerifier", "command": "echo ran", "timeout_ms": 1000}
    result = run_verifier(spec, VerifyContext(repo=calc))
    assert (result.status, result.metrics["exit_code"]) == ("error", None), result.reason
    stopped = result.metrics["stopped"]
    assert stopped.startswith("not started: copying the repository took the whole 1 s timeout ")
    assert stopped.endswith(" copied by then)"), stopped
    assert result.duration_s < 4, result.duration_s


def test_a_large_file_is_copied_a_chunk_at_a_time_under_the_clock(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The clock was read between files only: one large file (10 GB fit under the disk floor
    here) held the copy for as long as it took."""
    monkeypatch.setattr(sandbox, "COPY_CHUNK_BYTES", 1)  # 4 million calls for 4 MB
    (calc / "big.bin").write_bytes(os.urandom(4 * 1024 * 1024))
    start = time.monotonic()
    run, _ = run_in_scratch(calc, "echo ran", timeout_s=1)
    assert run.timed_out and run.output == "", run.output
    assert run.stopped.startswith("not started: copying the repository took the whole 1 s ")
    assert time.monotonic() - start < 4


def test_a_repository_nested_past_pythons_recursion_limit_is_refused_in_one_line(
    calc: Path,
) -> None:
    """1,500 nested folders made every verifier an error saying only `RecursionError: maximum
    recursion depth exceeded` (`shutil.copytree` nests a call per folder)."""
    folder = calc
    for _ in range(1500):
        folder /= "d"
        folder.mkdir()
    try:
        run, _ = run_in_scratch(calc, "echo ran", timeout_s=60)
    finally:
        remove_tree(calc / "d")  # pytest's own cleanup nests a call per folder
    assert (run.returncode, run.output) == (None, ""), run.output
    assert run.stopped == "not started: the repository nests folders over 256 deep"


NEST = "i=0; while [ $i -lt 1500 ]; do mkdir d && cd d || exit 1; i=$((i+1)); done"


def test_a_command_nesting_folders_past_the_recursion_limit_leaves_no_copy(
    calc: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`shutil.rmtree` nests a call per folder too: a test making 1,500 nested folders in its
    copy left the whole copy on the host's disk, each time it ran."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    run, reports = run_in_scratch(calc, NEST, timeout_s=120, reports=True)
    left = list(scratch.iterdir())
    for folder in left:
        remove_tree(folder)
    assert (run.returncode, run.stopped, reports, left) == (0, "", {}, [])


def test_a_test_nesting_folders_past_the_recursion_limit_is_one_verdict(
    calc: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The report globs (`Path.glob`) nest a call per folder: a test run nesting 1,500
    folders in its copy ended its verifier with `RecursionError: maximum recursion depth
    exceeded`, and its reports, beside the nest, went unread."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    report = "target/surefire-reports/TEST-calc.xml"
    suite = '<testsuite tests="2" failures="1"><testcase name="a"/><testcase name="b"/></testsuite>'
    command = f"mkdir -p target/surefire-reports && echo '{suite}' > {report} && ({NEST})"
    spec = {"type": "RunTestsVerifier", "runner": "maven", "command": command}
    result = run_verifier(spec, VerifyContext(repo=calc))
    left = list(scratch.iterdir())
    for folder in left:
        remove_tree(folder)
    assert (result.status, result.reason, left) == (
        "fail",
        "2 tests: 1 passed, 1 failed, 0 errors, 0 skipped (failures + errors > 0)",
        [],
    )


def test_reports_heavier_than_the_host_may_hold_are_no_verdict(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each report under 20 MB was read into the host's memory, with no bound on their sum:
    50 of 19 MB took `agentlens verify` to a peak of 968 MB."""
    monkeypatch.setattr(sandbox, "REPORTS_MAX_BYTES", 1024 * 1024)
    write = (
        "mkdir -p target/surefire-reports && for i in 1 2 3; do head -c 600000 /dev/zero | "
        "tr '\\0' ' ' > target/surefire-reports/TEST-$i.xml; done"
    )
    spec = {"type": "RunTestsVerifier", "runner": "maven", "command": write}
    result = run_verifier(spec, VerifyContext(repo=calc))
    assert (result.status, result.metrics["exit_code"]) == ("error", 0), result.reason
    assert result.reason == "maven stopped: its reports weigh over 1 MB (they were not read)"


def test_looking_for_reports_ends_by_its_deadline(calc: Path) -> None:
    """Reading the reports came after the verifier's clock, with none of its own: 13,800
    reports a test wrote in 4 s took 2.3 s more to find and read."""
    reports = calc / "target" / "surefire-reports"
    reports.mkdir(parents=True)
    (reports / "TEST-calc.xml").write_text("<testsuite/>")
    with pytest.raises(sandbox.ReportsUnreadError) as late:
        sandbox._collect_reports(calc, {}, deadline=time.monotonic())
    assert late.value.note == (
        f"stopped: looking for its reports took over {sandbox.OVERTIME_S:g} s past its timeout"
    )
    found = sandbox._collect_reports(calc, {}, deadline=time.monotonic() + 60)
    assert list(found) == ["target/surefire-reports/TEST-calc.xml"]


def test_an_agent_nesting_folders_past_the_recursion_limit_can_run_its_next_command(
    calc: Path,
) -> None:
    """As root, each command's writable folder is handed to `nobody` first, by `os.fwalk`,
    which nests a call per folder: once the agent had nested 1,100 folders, each of its
    commands raised `RecursionError`, an agent error, and the run a failed run (left out of
    the pass rate, where its failure belonged)."""
    folder = calc
    for _ in range(1100):
        folder /= "d"
        folder.mkdir()
    (folder / "deepest.txt").write_text("here\n")
    try:
        result = asyncio.run(run_shell("find . -name deepest.txt | wc -l", calc, timeout_s=60))
        owner = (folder / "deepest.txt").stat().st_uid
    finally:
        remove_tree(calc / "d")  # pytest's own cleanup nests a call per folder
    assert (result.returncode, result.output) == (0, "1\n"), result.output
    assert owner == (isolation.NOBODY if os.geteuid() == 0 else os.geteuid())
