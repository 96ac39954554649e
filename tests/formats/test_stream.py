"""The streamed batch read: the same trajectories as the list it replaces, in flat memory."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from agentlens.formats import read_path
from agentlens.formats._batch_ids import unique_ids
from agentlens.formats.load import iter_trace_paths
from agentlens.formats.stream import iter_trajectories, read_paths, stream_paths
from agentlens.outcomes import discover_labels
from agentlens.store import Run, open_store
from agentlens.store.records import import_record, import_records
from agentlens.trajectory import Trajectory
from tests.conftest import BENCH, DATA, FORMATS

SRC = Path(__file__).resolve().parents[2] / "src"
TASK_NAME = re.compile(rb'("task_name"\s*:\s*")')
# a large dev trace (217 KB), so that what the list path held is well above the imports' peak
LARGE = sorted((BENCH / "trajectories").rglob("*.json"), key=lambda p: p.stat().st_size)[359]


def _list_path(specs: list[Path]) -> list[Trajectory]:
    """What the loader did before it streamed: every file read into one list, ids made unique
    over the list, repeats removed with `list.remove`, then sidecar labels."""
    trajectories: list[Trajectory] = []
    for path, _ in iter_trace_paths(specs):
        try:
            trajectories += read_path(path)
        except Exception:
            continue
    for repeat, _why in unique_ids(trajectories):
        trajectories.remove(repeat)
    discover_labels(trajectories)
    return trajectories


def _batch_with_shared_ids(root: Path) -> list[Path]:
    """Real traces where ids meet: one file named twice, one session copied into two folders."""
    session = next((FORMATS / "claude-code").rglob("*.jsonl"))
    for folder in ("a", "b"):
        (root / folder).mkdir(parents=True)
        shutil.copy(session, root / folder / session.name)
    return [FORMATS / "codex", root, FORMATS / "codex", DATA / "mini-swe-agent-swebv"]


def test_the_stream_gives_what_the_list_path_gave(tmp_path: Path) -> None:
    specs = _batch_with_shared_ids(tmp_path)
    expected = [msgspec.json.encode(t) for t in _list_path(specs)]
    stream = stream_paths(specs)
    assert stream.count == len(expected)
    got = [msgspec.json.encode(t) for t in stream]
    assert got == expected  # ids, renames, order, labels: byte for byte
    assert stream.n_read == len(expected)
    assert any(f.reason == "named again: read once" for f in stream.failures)
    assert len({t.split(b'"id":')[1][:80] for t in got}) == len(got)  # ids unique


def test_iter_trajectories_is_the_stream(tmp_path: Path) -> None:
    specs = _batch_with_shared_ids(tmp_path)
    ids = [t.id for t in iter_trajectories(specs)]
    assert ids == [t.id for t in _list_path(specs)]


def test_a_streamed_import_stores_what_a_whole_save_stores(tmp_path: Path) -> None:
    trajectories = _list_path([DATA / "mini-swe-agent-swebv", FORMATS / "codex"])
    tables = ("trajectories", "steps", "records", "metrics")
    counts = []
    for name, save in (
        ("whole", lambda db, run: db.save(run, trajectories, import_records(trajectories))),
        ("stream", lambda db, run: db.save_stream(run, ((t, import_record(t)) for t in trajectories))),
    ):  # fmt: skip
        with open_store(str(tmp_path / f"{name}.db")) as db:
            run_id = save(db, Run(kind="import", scorer="import/1"))
            records = [(r.trajectory, r.trajectory_id, r.metrics) for r in db.records(run_id)]
            counts.append((db.stats(), records, db.new_steps))
    whole, streamed = counts
    assert streamed == whole
    assert {k: whole[0][k] for k in tables} == {k: streamed[0][k] for k in tables}
    assert whole[0]["records"] == len(trajectories) > 0


def _corpus(root: Path, copies: int) -> Path:
    """`copies` copies of a large dev trace, each with its own file and task name."""
    data = LARGE.read_bytes()
    for n in range(copies):
        renamed = TASK_NAME.sub(rb"\1scale-test-copy%d-" % n, data, count=1)
        (root / f"scale-test-copy{n}-{LARGE.name}").write_bytes(renamed)
    return root


PEAK = """
import atexit, os, sys

def write_peak():
    status = open("/proc/self/status").read().split("VmHWM:")[1]
    open(os.environ["PEAK_FILE"], "w").write(status.split()[0])

atexit.register(write_peak)
sys.argv = ["agentlens", *sys.argv[1:]]
from agentlens.cli import main
main()
"""


def _inspect_peak(corpus: Path) -> tuple[int, int]:
    """(peak RSS in bytes of the whole `agentlens inspect --json` process, lines it wrote). The
    process's own VmHWM: `ru_maxrss` keeps the forking pytest's peak across exec, so in a long
    run both figures compared were pytest's."""
    peak_file = corpus.parent / f"{corpus.name}.peak"
    env = {**os.environ, "PYTHONPATH": str(SRC), "PEAK_FILE": str(peak_file)}
    child = subprocess.run(
        [sys.executable, "-c", PEAK, "inspect", "--json", str(corpus)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=600,
    )  # fmt: skip
    assert child.returncode == 0
    return int(peak_file.read_text()) * 1024, len(child.stdout.splitlines())


def test_inspect_peak_memory_does_not_grow_with_the_corpus(tmp_path: Path) -> None:
    # the list path held each copy to the end: measured +54 MiB of peak from 20 to 200 copies
    small, large = 20, 120
    (tmp_path / "small").mkdir()
    (tmp_path / "large").mkdir()
    small_peak, small_lines = _inspect_peak(_corpus(tmp_path / "small", small))
    large_peak, large_lines = _inspect_peak(_corpus(tmp_path / "large", large))
    assert (small_lines, large_lines) == (small, large)
    grown = (large_peak - small_peak) / 2**20
    assert grown < 8, f"peak grew {grown:.1f} MiB from {small} to {large} traces"


def test_a_large_jsonl_file_read_a_line_at_a_time_gives_the_same_trajectory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentlens.formats import load

    jsonl = [
        *(FORMATS / "claude-code").rglob("*.jsonl"),
        *(FORMATS / "gemini-cli-jsonl").rglob("*.jsonl"),
    ]
    whole = {p: [msgspec.json.encode(t) for t in read_path(p)] for p in jsonl}
    monkeypatch.setattr(load, "LINES_FROM", 1)  # every large file read a line at a time
    by_line = {p: [msgspec.json.encode(t) for t in read_path(p)] for p in jsonl}
    assert by_line == whole and len(whole) >= 4


def test_lines_split_as_splitlines_does() -> None:
    from agentlens.formats._json import lines

    for data in (b"a\nb", b"a\r\nb\r\n", b"\n\na\n", b"a\rb\n\rc", b"", b"\r", b"x\r\r\ny"):
        assert list(lines(data)) == data.splitlines()


def test_peak_memory_does_not_grow_with_copies_that_share_an_id(tmp_path: Path) -> None:
    """Runs that share an id were held whole while the batch told them apart (`settle_ids`): 100
    copies of one 3 MB Claude Code session peaked 180 MiB above 10 copies."""
    session = FORMATS / "claude-code/marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
    peaks = []
    for copies in (4, 40):
        folder = tmp_path / str(copies)
        folder.mkdir()
        for n in range(copies):
            (folder / f"copy{n}.jsonl").write_bytes(session.read_bytes())
        peak, lines = _inspect_peak(folder)
        assert lines == copies
        peaks.append(peak)
    grown = (peaks[1] - peaks[0]) / 2**20
    assert grown < 16, f"peak grew {grown:.1f} MiB from 4 to 40 copies"


def test_a_path_given_alone_is_one_path_not_its_characters() -> None:
    trajs = DATA / "mini-swe-agent-swebv" / "trajs"
    expected = [t.id for t in read_paths([trajs]).trajectories]
    for alone in (str(trajs), trajs):
        result = read_paths(alone)
        assert [t.id for t in result.trajectories] == expected
        assert result.failures == []


def test_a_labels_file_given_alone_is_one_file() -> None:
    trajs, report = (
        DATA / "mini-swe-agent-swebv" / "trajs",
        DATA / "mini-swe-agent-swebv" / "sb-cli-report.json",
    )
    listed = read_paths([trajs], labels=[str(report)], sidecars=False).trajectories
    alone = read_paths([trajs], labels=str(report), sidecars=False).trajectories
    assert [t.outcome for t in alone] == [t.outcome for t in listed]
    assert {t.outcome.status for t in alone} == {"passed", "failed"}


def test_a_read_result_is_exported_and_echoes_as_counts() -> None:
    import agentlens

    result = agentlens.read_paths([DATA / "mini-swe-agent-swebv" / "trajs", "no-such-folder"])
    assert isinstance(result, agentlens.ReadResult)
    assert isinstance(result.failures[0], agentlens.ReadFailure)
    assert (
        repr(result) == "<ReadResult: 6 trajectories, 1 failure, 0 skipped, 0 unread, 0 sidecars>"
    )


def test_an_unknown_unevaluated_choice_is_refused_naming_the_choices() -> None:
    from agentlens.errors import ConfigError

    with pytest.raises(ConfigError, match="unevaluated='pass': choose 'unknown' or 'failed'"):
        read_paths([DATA / "mini-swe-agent-swebv" / "trajs"], unevaluated="pass")  # type: ignore[arg-type]


def test_a_trajectory_echoes_as_who_what_and_how_long() -> None:
    """A notebook echoing one real run printed every step whole (tens of thousands of
    characters); the whole run is still `msgspec.to_builtins(run)`."""
    run = read_paths([DATA / "mini-swe-agent-swebv" / "trajs"]).trajectories[0]
    shown = repr(run)
    assert shown.startswith(f"Trajectory(id={run.id!r}, format='mini-swe-agent', task_id=")
    assert shown.endswith(f"steps={len(run.steps)})") and len(run.steps) > 5
    assert len(shown) < 500


def test_iter_trajectories_names_every_option_of_stream_paths() -> None:
    """`**options: object` let a misspelt option (`lenent=True`) pass a type checker."""
    import inspect

    from agentlens.formats.stream import iter_trajectories, stream_paths

    def options(function: object) -> dict[str, object]:
        return {
            name: (param.kind, param.default)
            for name, param in inspect.signature(function).parameters.items()  # type: ignore[arg-type]
        }

    assert options(iter_trajectories) == options(stream_paths)
