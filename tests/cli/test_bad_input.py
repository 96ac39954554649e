"""Hostile input through the real CLI: one line per bad file, the batch goes on, exit code 1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import BENCH, FORMATS

GOOD = sorted((BENCH / "trajectories").glob("*/*.json"))[0]
GEMINI = FORMATS / "gemini-cli" / "session-2025-10-27T19-55-981c87cb.json"


def _truncated(tmp: Path) -> Path:
    data = GOOD.read_bytes()
    out = tmp / "truncated.json"
    out.write_bytes(data[: len(data) // 2])
    return out


def _flipped(tmp: Path) -> Path:
    data = bytearray(GOOD.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 8] = b"\xff\x00\xfe\x01\xfd\x02\xfc\x03"
    out = tmp / "flipped.json"
    out.write_bytes(bytes(data))
    return out


def _wrong_shape(tmp: Path) -> Path:
    doc = json.loads(GOOD.read_bytes())
    doc["states"] = list(doc["states"].values())
    out = tmp / "wrong_shape.json"
    out.write_bytes(json.dumps(doc).encode())
    return out


def _gemini_wrong_shape(tmp: Path) -> Path:
    doc = json.loads(GEMINI.read_bytes())
    doc["messages"] = {"0": doc["messages"][0]}
    out = tmp / "gemini_wrong_shape.json"
    out.write_bytes(json.dumps(doc).encode())
    return out


def _empty(tmp: Path) -> Path:
    out = tmp / "empty.json"
    out.write_bytes(b"")
    return out


def _binary(tmp: Path) -> Path:
    out = tmp / "binary.json"
    out.write_bytes(os.urandom(4096) + b"\x00" * 64)
    return out


CASES: dict[str, tuple[Callable[[Path], Path], str | None, str]] = {
    "truncated": (_truncated, "agentlens-bench", "truncated?"),
    "flipped": (_flipped, "agentlens-bench", "invalid JSON"),
    "wrong_shape": (_wrong_shape, "agentlens-bench", "'states' should be a dict"),
    "gemini_wrong_shape": (_gemini_wrong_shape, "gemini-cli", "'messages' should be a list"),
    "empty": (_empty, None, "empty file"),
    "binary": (_binary, None, "binary content"),
}


def _failed_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("failed:")]


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_bad_file_gets_one_line_and_the_batch_continues(
    case: str, tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    make, fmt, reason = CASES[case]
    bad = make(tmp_path)
    result = run_cli("inspect", "--json", str(bad), str(GOOD))
    assert result.code == 1  # type: ignore[attr-defined]
    (line,) = _failed_lines(result.err)  # type: ignore[attr-defined]
    assert str(bad) in line
    assert f"[{fmt}]" in line if fmt else "[format unknown]" in line
    assert reason in line
    (summary,) = [json.loads(x) for x in result.out.splitlines()]  # type: ignore[attr-defined]
    assert summary["path"] == str(GOOD)
    assert "Traceback" not in result.err  # type: ignore[attr-defined]


def test_debug_shows_the_traceback_of_each_failed_file(
    tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    bad = [_truncated(tmp_path), _wrong_shape(tmp_path)]
    result = run_cli("--debug", "inspect", *map(str, bad))
    assert result.code == 1  # type: ignore[attr-defined]
    err = result.err  # type: ignore[attr-defined]
    assert len(_failed_lines(err)) == 2
    assert err.count("Traceback (most recent call last)") == 2
    assert "JSONDecodeError" in err
    assert "SchemaError" in err


def test_a_directory_of_bad_and_good_files_is_walked(
    tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    for make in (_truncated, _binary, _wrong_shape):
        make(tmp_path)
    shutil.copy(GOOD, tmp_path / GOOD.name)
    (tmp_path / "notes.md").write_text("not a trace")
    result = run_cli("inspect", "--json", str(tmp_path))
    assert result.code == 1  # type: ignore[attr-defined]
    failed = _failed_lines(result.err)  # type: ignore[attr-defined]
    assert (
        len(failed) == 2
    )  # truncated and wrong shape; binary and notes.md are skipped as non-traces
    assert len(result.out.splitlines()) == 1  # type: ignore[attr-defined]


def _huge_unknown(path: Path, size: int) -> None:
    """A valid JSON list of objects no reader knows, `size` bytes."""
    chunk = b'{"alpha": 1, "beta": [1, 2, 3], "gamma": "x"},' * 20000
    with path.open("wb") as handle:
        handle.write(b"[")
        written = 1
        while written < size:
            handle.write(chunk)
            written += len(chunk)
        handle.write(b'{"end": true}]')


def _huge_garbage_after_trace_head(path: Path, size: int) -> None:
    """A real trace's first 32 KiB (so it is detected as agentlens-bench), then garbage."""
    head = GOOD.read_bytes()[:32768]
    garbage = b'\x8f{["' * (1 << 18)
    with path.open("wb") as handle:
        handle.write(head)
        written = len(head)
        while written < size:
            handle.write(garbage)
            written += len(garbage)


@pytest.mark.parametrize(
    ("make", "expected"),
    [(_huge_unknown, "not a known trace format"), (_huge_garbage_after_trace_head, "invalid JSON")],
)
def test_a_200_mb_file_fails_fast_without_eating_memory(
    make: Callable[[Path, int], None], expected: str, tmp_path: Path
) -> None:
    big = tmp_path / "big.json"
    make(big, 200 * 1024 * 1024)
    # VmHWM, the peak of this address space: `ru_maxrss` survives exec, so a child forked from a
    # large pytest process would report the parent's size
    code = (
        "import re, sys\n"
        "from agentlens.cli import main\n"
        "rc = main(sys.argv[1:])\n"
        "peak = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1]\n"
        "print('maxrss_kb', peak, file=sys.stderr)\n"
        "sys.exit(rc)\n"
    )
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code, "inspect", str(big), str(GOOD)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.perf_counter() - started
    assert proc.returncode == 1, proc.stderr
    (line,) = _failed_lines(proc.stderr)
    assert str(big) in line and expected in line
    rss_mb = int(proc.stderr.split("maxrss_kb")[1].split()[0]) / 1024
    # Detection reads 64 KiB; a detected file is read once (200 MB), never copied several times.
    assert rss_mb < 450, rss_mb
    assert elapsed < 60, elapsed


def test_a_named_pipe_in_a_walked_folder_does_not_hang_the_batch(tmp_path: Path) -> None:
    shutil.copy(GOOD, tmp_path / GOOD.name)
    os.mkfifo(tmp_path / "pipe.json")  # open() on it would wait for a writer forever
    proc = subprocess.run(
        [sys.executable, "-m", "agentlens", "inspect", "--json", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    (row,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert row["path"] == str(tmp_path / GOOD.name)
