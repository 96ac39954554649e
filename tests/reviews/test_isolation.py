"""A hostile repository under `agentlens verify` (the real CLI, real bubblewrap): its pytest
suite tries every escape of issue 23. Each escape is one verifier whose test *asserts that the
escape worked*, so a failing verifier is a blocked escape; what the host can see (a file written
outside, bytes on a loopback listener, a process alive after verify, AgentLens's own peak memory)
is checked on the host too. The same repository under `--no-sandbox` shows the escapes are real."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from tests.scenarios.conftest import host_pids

PROJECT_FILE = Path(__file__).resolve().parents[2] / "pyproject.toml"
HOSTILE_TESTS = """
import os, socket, subprocess, sys, time
from pathlib import Path

def test_write_outside():
    Path(os.environ["HOST_OUT"]).write_text("escaped")

def test_read_shadow():
    assert "root:" in Path("/etc/shadow").read_text()

def test_list_root_ssh():
    assert os.listdir("/root/.ssh") is not None

def test_read_project_file():
    assert Path(os.environ["PROJECT_FILE"]).read_text()

def test_read_host_secret():
    assert Path(os.environ["HOST_SECRET"]).read_text()

def test_network():
    with socket.create_connection(("127.0.0.1", int(os.environ["PORT"])), timeout=5) as conn:
        conn.sendall(b"exfiltrated")

def test_fork():
    children = [subprocess.Popen(["sleep", "5"]) for _ in range(100)]
    assert len(children) == 100

def test_memory():
    block = bytearray(1024 * 1024 * 1024)
    assert len(block) == 1024 * 1024 * 1024

def test_setsid_child():
    late = "sleep 3; echo late > " + os.environ["HOST_LATE"] + "; sleep 30 # " + os.environ["TOKEN"]
    subprocess.Popen(["setsid", "sh", "-c", late], stdout=subprocess.DEVNULL)

def test_huge_output():
    chunk = "x" * 1023 + "\\n"
    for _ in range(400 * 1024):
        sys.stdout.write(chunk)
    sys.stdout.flush()
    assert False, "the output is the attack"
"""
ESCAPES = [
    "write_outside", "read_shadow", "list_root_ssh", "read_project_file", "read_host_secret",
    "network", "fork", "memory", "setsid_child", "huge_output",
]  # fmt: skip
# VmHWM, not getrusage's ru_maxrss: Linux carries the forking parent's peak across exec into
# ru_maxrss, so a pytest process grown large by earlier tests would be counted as ours
PEAK_RSS = """import re, sys
from agentlens.cli import main
try:
    code = main(sys.argv[2:])
finally:
    status = open("/proc/self/status").read()
    open(sys.argv[1], "w").write(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1))
sys.exit(code)
"""


class Listener:
    """A TCP listener on 127.0.0.1 that keeps whatever any connection sends."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.received = b""
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                while data := conn.recv(4096):
                    self.received += data


def hostile_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "hostile"
    repo.mkdir()
    (repo / "test_hostile.py").write_text(textwrap.dedent(HOSTILE_TESTS))
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    commit = [
        "git",
        "-C",
        str(repo),
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "x",
    ]
    subprocess.run(commit, check=True)
    return repo


def verify(
    tmp_path: Path, *extra: str, escapes: list[str] = ESCAPES
) -> tuple[dict[str, dict[str, object]], dict[str, object]]:
    """Run the escapes; the verifier results by escape name, and what the host saw."""
    repo, listener, token = hostile_repo(tmp_path), Listener(), uuid.uuid4().hex
    secret = tmp_path / "host-secret.txt"
    secret.write_text("the host's secret")
    env = {"HOST_OUT": str(tmp_path / "written-outside.txt"), "PROJECT_FILE": str(PROJECT_FILE),
           "HOST_SECRET": str(secret), "PORT": str(listener.port),
           "HOST_LATE": str(tmp_path / "late.txt"), "TOKEN": token}  # fmt: skip
    command = [
        "python",
        "-m",
        "pytest",
        "-q",
        "-s",
        "-p",
        "no:cacheprovider",
        "test_hostile.py",
        "-k",
    ]
    verifiers = [{"type": "RunTestsVerifier", "name": name, "command": [*command, name],
                  "env": env, "timeout_ms": 60_000} for name in escapes]  # fmt: skip
    scenario = tmp_path / "scenario.json"
    limits = {"processes": 32, "memory_mb": 512}
    scenario.write_text(json.dumps({"verifiers": verifiers, "sandbox": limits}))
    (tmp_path / "run.py").write_text(PEAK_RSS)
    peak = tmp_path / "peak-rss-kb"
    argv = [sys.executable, str(tmp_path / "run.py"), str(peak), "verify", str(scenario),
            "--repo", str(repo), "--json", *extra]  # fmt: skip
    src = str(Path(__file__).resolve().parents[2] / "src")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PYTHONPATH": src})  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout)
    results = {str(r["name"]): r for r in doc["results"][0]["verifier_results"]}
    if "setsid_child" in escapes:  # 4 s after it started, the setsid child would have written
        after = escapes[escapes.index("setsid_child") + 1 :]  # verifiers run one after another
        waited = sum(float(results[name]["duration_s"]) for name in after)  # type: ignore[arg-type]
        time.sleep(max(0.0, 4 - waited))
    seen = {
        "written_outside": Path(env["HOST_OUT"]).exists(),
        "received": listener.received,
        "late_file": Path(env["HOST_LATE"]).exists(),
        "alive_after_verify": host_pids(token),
        "peak_rss_mb": int(peak.read_text()) / 1024,
        "warning": doc["results"][0].get("warning"),
    }
    for pid in seen["alive_after_verify"]:  # type: ignore[attr-defined]
        os.kill(pid, 9)
    listener.sock.close()
    return results, seen


def test_every_escape_of_a_hostile_repository_fails(tmp_path: Path) -> None:
    results, seen = verify(tmp_path)
    report = {name: (r["status"], _why(r)) for name, r in results.items()}
    print(json.dumps({"escapes": report, "host": {**seen, "received": repr(seen["received"])}}))
    # starting a `setsid` child is allowed; its surviving verify (checked below) is the escape
    expected = {**dict.fromkeys(ESCAPES, "fail"), "setsid_child": "pass"}
    assert {name: r["status"] for name, r in results.items()} == expected
    assert seen["written_outside"] is False and seen["received"] == b""
    assert seen["late_file"] is False and seen["alive_after_verify"] == []
    assert float(seen["peak_rss_mb"]) < 200  # 400 MB printed, 1 MB tail kept  # type: ignore[arg-type]
    tail = str(results["huge_output"]["metrics"]["output_tail"])  # type: ignore[index]
    assert "the output is the attack" in tail and seen["warning"] is None


def _why(result: dict[str, object]) -> str:
    """The error line pytest printed for the escape's assertion."""
    tail = str(result["metrics"]["output_tail"])  # type: ignore[index]
    errors = [line[4:].strip() for line in tail.splitlines() if line.startswith("E   ")]
    return errors[-1][:120] if errors else str(result["reason"])[:120]


def test_without_the_sandbox_the_same_escapes_work(tmp_path: Path) -> None:
    """The suite can fail: uncontained, the hostile tests reach the host. (Only these four:
    the fork, memory and output floods would take the host's resources for a minute.)"""
    reaching = ["write_outside", "read_project_file", "read_host_secret", "network"]
    results, seen = verify(tmp_path, "--no-sandbox", escapes=reaching)
    worked = {name for name, r in results.items() if r["status"] == "pass"}
    assert set(reaching) == worked
    assert seen["written_outside"] is True and seen["received"] == b"exfiltrated"
    assert seen["warning"] == "warning: --no-sandbox: agent-written code ran without isolation"


def test_without_bubblewrap_verify_refuses_in_one_line(tmp_path: Path) -> None:
    """Failure injection: a PATH without `bwrap`."""
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"verifiers": [{"type": "CommandVerifier", "command": "true"}]}))
    repo = hostile_repo(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "prlimit", "setpriv", "sh"):
        found = subprocess.run(["which", tool], capture_output=True, text=True).stdout.strip()
        if found:
            (bin_dir / tool).symlink_to(found)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{bin_dir}",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}  # fmt: skip
    argv = [sys.executable, "-m", "agentlens", "verify", str(scenario), "--repo", str(repo)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "bubblewrap is not usable here (no 'bwrap' on PATH)" in lines[0]
    assert "apt-get install bubblewrap" in lines[0] and "--no-sandbox" in lines[0]


@pytest.fixture(autouse=True)
def _needs_bubblewrap() -> None:
    from agentlens.verification import isolation

    isolation.bubblewrap()  # on a machine without it this fails, as the CI installs it
