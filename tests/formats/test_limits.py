"""The input size cap (`agentlens.formats.limits`): a file over it is one line naming the file and
its size, before a byte is read; the batch goes on and the exit code says a file failed."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentlens.errors import ConfigError, TraceError
from agentlens.formats import limits
from tests.conftest import BENCH

TASK = BENCH / "trajectories" / "psf__requests-1724"


@pytest.fixture(autouse=True)
def unset() -> Iterator[None]:
    yield
    limits._flag = None


@pytest.mark.parametrize(
    ("text", "size"),
    [("1000", 1000), ("2GiB", 2 << 30), ("512M", 512 << 20), ("1.5k", 1536), ("3 TB", 3 << 40),
     ("0", None), ("none", None)],
)  # fmt: skip
def test_sizes_are_read_in_powers_of_1024(text: str, size: int | None) -> None:
    assert limits.parse_size(text) == size


@pytest.mark.parametrize("text", ["", "-1", "1x", "GiB", "1e9"])
def test_a_bad_size_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a size"):
        limits.parse_size(text)


def test_a_sparse_file_over_the_default_cap_is_refused_unread(tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:
        handle.truncate(limits.DEFAULT_MAX_FILE_SIZE + 1)  # sparse: no disk used
    with pytest.raises(TraceError) as caught:
        limits.check_file_size(huge)
    assert caught.value.path == str(huge)
    assert caught.value.reason.startswith("file is 1.0 GiB, over the 1.0 GiB input cap")
    limits.set_max_file_size(None)
    limits.check_file_size(huge)  # no cap


def test_the_flag_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    real = next(TASK.glob("*.json"))
    monkeypatch.setenv(limits.ENV, "1K")
    with pytest.raises(TraceError, match=r"KiB, over the 1.0 KiB input cap"):
        limits.check_file_size(real)
    limits.set_max_file_size(10 << 20)
    limits.check_file_size(real)
    limits._flag = None
    monkeypatch.setenv(limits.ENV, "lots")
    with pytest.raises(ConfigError, match="AGENTLENS_MAX_FILE_SIZE: not a size"):
        limits.check_file_size(real)


def inspect_batch(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    return subprocess.run(
        [sys.executable, "-m", "agentlens", *args, "inspect", str(TASK)],
        capture_output=True, text=True, env={**environ, **(env or {})}, timeout=300,
    )  # fmt: skip


@pytest.mark.parametrize("how", ["flag", "env"])
def test_files_over_the_cap_fail_one_line_each_and_the_batch_goes_on(how: str) -> None:
    """Real traces of one task, capped at 80 KiB: the larger ones fail, the others are read."""
    sizes = {p.name: p.stat().st_size for p in TASK.glob("*.json")}
    over = sorted(name for name, size in sizes.items() if size > 80 << 10)
    assert 0 < len(over) < len(sizes)
    done = (inspect_batch("--max-file-size", "80K") if how == "flag"
            else inspect_batch(env={limits.ENV: "80K"}))  # fmt: skip
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if "input cap" in line]
    assert sorted(Path(line.split(" ")[1]).name for line in lines) == over
    assert all("over the 80.0 KiB input cap (raise it with --max-file-size" in x for x in lines)
    assert "Traceback" not in done.stderr
    assert f"{len(sizes) - len(over)} trajectories read" in done.stderr


def test_the_default_cap_reads_every_real_trace() -> None:
    done = inspect_batch()
    assert done.returncode == 0, done.stderr


def test_a_bad_flag_value_is_a_usage_error_naming_the_option() -> None:
    done = inspect_batch("--max-file-size", "lots")
    assert done.returncode == 2 and "Invalid value for --max-file-size: not a size" in done.stderr


def test_an_eval_zip_whose_members_inflate_past_the_cap_is_refused(
    data_dir: Path, tmp_path: Path
) -> None:
    """The cap counted an Inspect `.eval` by its compressed size: 64 KiB of zip inflating to
    64 MiB of samples (or, at the default cap, gigabytes: each member could declare up to
    1 GiB, and every sample is held at once) was read whole under `--max-file-size 32M`."""
    import json
    import zipfile

    real = data_dir / "formats" / "inspect-ai" / "log_formats.eval"
    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(real) as source, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            out.writestr(info.filename, source.read(info))
        sample = json.loads(source.read("samples/1_epoch_1.json"))
        for epoch in range(2, 10):  # the same sample, other epochs, 8 MiB long each
            text = json.dumps({**sample, "epoch": epoch}).encode()
            out.writestr(f"samples/1_epoch_{epoch}.json", text[:-1] + b" " * (8 << 20) + b"}")
    assert bomb.stat().st_size < 256 << 10
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    command = [sys.executable, "-m", "agentlens", "--max-file-size", "32M", "inspect", "--json"]
    done = subprocess.run([*command, str(bomb), str(real)], capture_output=True, text=True,
                          env=env, timeout=300)  # fmt: skip
    assert done.returncode == 1 and len(done.stdout.splitlines()) == 1, done.stderr
    assert "bomb.eval" in done.stderr and "inflate" in done.stderr and "32.0 MiB" in done.stderr
