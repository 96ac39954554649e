"""A batch read whose first pass runs on the engine's workers (`formats.pooled_read`) gives what
`read_paths` gives: the same runs in the same order, ids told apart by the batch, outcomes from
sidecars, the same failures and warnings; the workers read with this process's switches
(`--no-redact`, `--max-file-size`), a failed file keeps its traceback for `--debug`, and every
spill file goes with the read (issue 25)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from agentlens import redaction
from agentlens.engine import get_engine
from agentlens.formats import limits
from agentlens.formats.jsonl import dump_jsonl
from agentlens.formats.load import read_path
from agentlens.formats.stream import read_paths
from agentlens.process.cohort_runs import read_cohort
from agentlens.seams import Engine
from agentlens.trajectory import Source
from tests.conftest import BENCH, DATA
from tests.test_redaction import PLANTED, leaked, planted  # noqa: F401 -- the fixture

FOLDERS = [
    DATA / "formats",  # every reader, sidecars, ids that only the batch tells apart, bad files
    DATA / "mini-swe-agent-swebv",  # outcomes from the harness's reports beside the runs
    BENCH / "trajectories" / "psf__requests-1724",
]


@pytest.fixture(scope="module", params=["serial", "processes:2"])
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    with get_engine(request.param) as chosen:
        yield chosen


LABELS = str(DATA / "formats" / "labels.csv")


@pytest.mark.parametrize("labels", [(), (LABELS,)], ids=["sidecars", "labels-table"])
@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_a_pooled_read_gives_what_read_paths_gives(
    folder: Path, labels: tuple[str, ...], engine: Engine
) -> None:
    whole = read_paths([str(folder)], labels=labels)
    with read_cohort([str(folder)], engine=engine, labels=labels) as (summary, spill):
        assert [r.id for r in spill.refs] == [t.id for t in whole.trajectories]
        assert [(f.path, f.format, f.reason) for f in summary.failures] == [
            (f.path, f.format, f.reason) for f in whole.failures
        ]
        assert list(summary.warnings.items()) == list(whole.warnings.items())
        assert (summary.skipped, summary.unread, summary.sidecars) == (
            whole.skipped, whole.unread, whole.sidecars,
        )  # fmt: skip
        assert summary.n_read == whole.n_read
        back = spill.load(spill.refs)
    assert back == whole.trajectories


def test_the_folders_need_the_batch_to_decide() -> None:
    """The case above is not vacuous: runs renamed by the batch, labelled from sidecars and
    from a labels table."""
    folders = [str(DATA / "formats"), str(DATA / "mini-swe-agent-swebv")]
    with read_cohort(folders) as (_, spill):
        patches = [spill.patch(r) for r in spill.refs]
    with read_cohort(folders, labels=[LABELS]) as (_, spill):
        tabled = [spill.patch(r) for r in spill.refs]
    assert sum(1 for p in patches if p is not None and p.id is not None) >= 2
    assert sum(1 for p in patches if p is not None and p.outcome is not None) >= 2
    sources = {p.outcome.source for p in tabled if p is not None and p.outcome is not None}
    assert any(str(s).startswith("labels:") for s in sources), sources


def test_workers_redact_as_this_process_says(planted: list[Path]) -> None:  # noqa: F811
    files = [str(p) for p in planted]
    with get_engine("processes:2") as engine:
        with read_cohort(files, engine=engine) as (_, spill):
            redacted = spill.load(spill.refs)
        before = redaction.switch()
        redaction.set_enabled(False)
        try:
            with read_cohort(files, engine=engine) as (_, spill):
                kept = spill.load(spill.refs)
        finally:
            redaction.set_enabled(before)
    # the whole run, not its echo (a `Trajectory` echoes as its id and size)
    assert not any(leaked(msgspec.json.encode(t).decode()) for t in redacted)
    assert all(leaked(msgspec.json.encode(t).decode()) == list(PLANTED) for t in kept)


def test_workers_keep_this_process_file_cap_and_tracebacks(tmp_path: Path) -> None:
    real = DATA / "formats" / "mini-swe-agent-fixtures" / "local.traj.json"
    broken = tmp_path / "broken.traj.json"
    broken.write_bytes(real.read_bytes()[:900])  # a real run cut off mid-file, under the cap
    large = BENCH / "trajectories" / "psf__requests-1724"
    limits.set_max_file_size(1000)
    try:
        with (
            get_engine("processes:2") as engine,
            read_cohort([str(large), str(broken)], engine=engine) as (summary, spill),
        ):
            assert list(spill.refs) == []
    finally:
        limits._flag = None
    reasons = [f.reason for f in summary.failures]
    assert sum("input cap" in r for r in reasons) == len(list(large.iterdir()))
    (failure,) = [f for f in summary.failures if f.path.endswith("broken.traj.json")]
    assert "Traceback" in getattr(failure.error, "remote_traceback", "")


def test_every_spill_file_goes_with_the_read(engine: Engine) -> None:
    with read_cohort([str(BENCH / "trajectories" / "psf__requests-1724")], engine=engine) as (
        _,
        spill,
    ):
        assert spill.files and all(Path(f).stat().st_size > 0 for f in spill.files)
    assert not Path(spill.path).exists()


def test_a_file_whose_read_raises_costs_that_file_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Failure injection: a reader bug that escapes `read_one` (in this process: serial)."""
    from agentlens.formats import pooled_read

    folder = BENCH / "trajectories" / "psf__requests-1724"
    victim = sorted(folder.iterdir())[3]
    real = pooled_read.read_one

    def read_one(problems: object, path: Path, *args: object, **kwargs: object) -> list[object]:
        if path == victim:
            raise RecursionError("maximum recursion depth exceeded")
        return real(problems, path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pooled_read, "read_one", read_one)
    with read_cohort([str(folder)]) as (summary, spill):
        assert len(spill.refs) == len(list(folder.iterdir())) - 1
    (failure,) = summary.failures
    assert failure.path == str(victim) and "maximum recursion depth" in failure.reason


@pytest.mark.parametrize("value", [None, "a note of the file's own", {"x": 1}, ["a", 2]])
def test_odd_warnings_beside_a_broken_sidecar_come_back_as_read_paths_gives_them(
    value: object, tmp_path: Path, engine: Engine
) -> None:
    """A run whose `metadata.warnings` is not a list of notes, beside an outcome sidecar that
    cannot be read: the sidecar's note is added (the odd value kept as the first note), the
    same by both reads; before, `read_paths` crashed the batch on it."""
    (trajectory,) = read_path(DATA / "formats" / "mini-swe-agent-fixtures" / "local.traj.json")
    (tmp_path / "results.json").write_text("{broken")
    source = Source(format=trajectory.source.format, path=str(tmp_path / "run.traj.json"))
    odd = msgspec.structs.replace(trajectory, id="run", source=source,
                                  metadata={**trajectory.metadata, "warnings": value})  # fmt: skip
    dump_jsonl([odd], tmp_path / "runs.jsonl")
    whole = read_paths([str(tmp_path)])
    with read_cohort([str(tmp_path)], engine=engine) as (summary, spill):
        back = spill.load(spill.refs)
    assert back == whole.trajectories and len(back) == 1
    notes = back[0].metadata["warnings"]
    assert isinstance(notes, list) and "outcome sidecar ignored" in notes[-1]
    assert list(summary.warnings.items()) == list(whole.warnings.items())


def test_a_read_in_small_windows_gives_what_read_paths_gives(
    monkeypatch: pytest.MonkeyPatch, engine: Engine
) -> None:
    """The walk goes to the workers a window at a time (so no list of every file is held): ids
    told apart across windows, a folder named twice and a missing file named first, as before."""
    from agentlens.formats import pooled_read

    monkeypatch.setattr(pooled_read, "WINDOW", 5)
    paths = [str(DATA / "formats"), str(DATA / "formats" / "claude-code"), "/nonexistent/*.json"]
    whole = read_paths(paths, labels=(LABELS,))
    assert len(whole.trajectories) > 3 * pooled_read.WINDOW
    with read_cohort(paths, engine=engine, labels=(LABELS,)) as (summary, spill):
        assert [r.id for r in spill.refs] == [t.id for t in whole.trajectories]
        assert [(f.path, f.reason) for f in summary.failures] == [
            (f.path, f.reason) for f in whole.failures
        ]
        assert any("named again" in f.reason for f in summary.failures)
        assert list(summary.warnings.items()) == list(whole.warnings.items())
        back = spill.load(spill.refs)
    assert back == whole.trajectories
