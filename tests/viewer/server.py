"""`agentlens view` as a real subprocess on a free port, for the CLI and browser tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    url: str
    process: subprocess.Popen[str]
    started_in: float
    """Seconds from spawning the process to its first answer."""

    def stop(self) -> tuple[int, str, str]:
        """Ctrl-C, as a user would: the exit code and what was printed (stdout, stderr)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            out, err = self.process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, err = self.process.communicate()
        return self.process.returncode, out or "", err or ""


@contextmanager
def running(store: Path | str, timeout: float = 30) -> Iterator[Server]:
    port = free_port()
    command = [sys.executable, "-m", "agentlens", "view", "--store", str(store)]
    command += ["--port", str(port)]
    began = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    server = Server(url, process, 0.0)
    try:
        server.started_in = _wait(url, process, began, timeout)
        yield server
    finally:
        if process.returncode is None:
            server.stop()


def _wait(url: str, process: subprocess.Popen[str], began: float, timeout: float) -> float:
    while time.perf_counter() - began < timeout:
        if process.poll() is not None:
            _, err = process.communicate()
            raise AssertionError(f"agentlens view exited {process.returncode}: {err}")
        try:
            if httpx.get(url + "api/runs", timeout=1).status_code == 200:
                return time.perf_counter() - began
        except httpx.TransportError:
            time.sleep(0.05)
    raise AssertionError(f"agentlens view did not answer on {url} within {timeout} s")
