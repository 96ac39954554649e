"""`agentlens report` against a hostile user: a disk that fills up while the report is written,
control characters in trace text, and an output that is a symbolic link."""

from __future__ import annotations

import re
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import msgspec

from agentlens.report import render_report
from agentlens.store import Run, open_store
from agentlens.store.records import import_records
from tests.cli.conftest import Run as CliRun
from tests.report.conftest import Store, hostile_trajectories
from tests.report.test_hostile_text import ALLOWED_TAGS

RunCli = Callable[..., CliRun]
LIMIT = 40_000
"""Bytes a file may grow to in the test's process (above the 32 KiB SQLite's -shm file takes)."""


def _small_files() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def test_a_full_disk_keeps_the_previous_report_whole(store: Store, tmp_path: Path) -> None:
    with open_store(store.url) as db:
        assert len(render_report(db, [r.id for r in db.runs(kind="score")])) > LIMIT
    out = tmp_path / "report.html"
    out.write_text("the previous report")
    command = [sys.executable, "-m", "agentlens", "report", "--kind", "score"]
    result = subprocess.run(
        [*command, "--store", store.url, "-o", str(out)],
        capture_output=True, text=True, preexec_fn=_small_files, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert str(out) in line and "File too large" in line
    assert out.read_text() == "the previous report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_control_characters_never_reach_the_document(tmp_path: Path) -> None:
    controls = "".join(map(chr, [0, 1, 8, 0x0B, 0x1B, 0x7F, 0x85, 0x9F]))
    trajectories = [
        msgspec.structs.replace(t, id=f"id{controls}{i}", model=f"model{controls}")
        for i, t in enumerate(hostile_trajectories())
    ]
    url = str(tmp_path / "s.db")
    with open_store(url) as db:
        run = Run(kind="import", scorer="import/1", label=f"label{controls}",
                  settings={"paths": [f"p{controls}"]})  # fmt: skip
        run_id = db.save(run, trajectories, import_records(trajectories))
        document = render_report(db, [run_id])
    assert not re.search("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]", document)
    assert "label\ufffd" in document and "model\ufffd" in document
    assert set(re.findall(r"<([a-z0-9]+)", document)) <= ALLOWED_TAGS


def test_an_output_that_is_a_link_is_written_through(
    store: Store, run_cli: RunCli, tmp_path: Path
) -> None:
    target, link = tmp_path / "target.html", tmp_path / "link.html"
    target.write_text("old")
    link.symlink_to(target)
    result = run_cli("report", "--kind", "import", "--store", store.url, "-o", str(link))
    assert result.code == 0, result.err
    assert link.is_symlink() and target.read_text().startswith("<!DOCTYPE html>")


def test_the_report_is_never_written_over_its_store(
    store: Store, run_cli: RunCli, tmp_path: Path
) -> None:
    copy = tmp_path / "results.db"
    copy.write_bytes(Path(store.url).read_bytes())
    result = run_cli("report", "--kind", "import", "--store", str(copy), "-o", str(copy))
    assert result.code == 2
    assert result.err.strip() == f"error: -o {copy} is the store itself: give another file"
    assert run_cli("store", "info", "--store", str(copy)).code == 0


def test_a_device_that_is_full_is_one_line_naming_it(store: Store, run_cli: RunCli) -> None:
    result = run_cli("report", "--kind", "import", "--store", store.url, "-o", "/dev/full")
    assert result.code == 2
    assert result.err.strip() == "error: /dev/full: cannot write it (No space left on device)"
