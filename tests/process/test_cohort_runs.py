"""`cohort` reads runs to a spill file and keeps stubs (`process.cohort_runs`): what a worker
unpacks is exactly what `read_paths` gives, ids fixed by the batch and sidecar labels included,
and a work unit carries references, not trajectories (issue 25)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from agentlens.formats.stream import read_paths
from agentlens.process.cohort_runs import hydrate, load, read_cohort, spilled_units
from agentlens.process.protocols import split_cohort
from tests.conftest import BENCH, DATA

FOLDERS = [
    DATA / "formats",  # every reader, sidecars, ids that only the batch tells apart
    DATA / "mini-swe-agent-swebv",
    DATA / "swe-agent-java",
    BENCH / "trajectories" / "psf__requests-1724",
]


@pytest.mark.parametrize("deferred", [False, True], ids=["spilled", "deferred"])
@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_spilled_runs_come_back_as_read_paths_gives_them(folder: Path, deferred: bool) -> None:
    """Deferred, the first pass reads without redaction and redacts the stubs alone, and the
    runs are read again: the same trajectories, secrets redacted, either way."""
    whole = read_paths([str(folder)])
    with read_cohort([str(folder)], deferred=deferred) as (result, spill):
        assert [t.id for t in result.trajectories] == [t.id for t in whole.trajectories]
        assert [t.outcome for t in result.trajectories] == [t.outcome for t in whole.trajectories]
        failures = [(f.path, f.format, f.reason) for f in result.failures]
        assert failures == [(f.path, f.format, f.reason) for f in whole.failures]
        assert result.warnings == whole.warnings
        assert result.skipped == whole.skipped and result.unread == whole.unread
        assert all(not t.steps for t in result.trajectories)
        back = load(result.trajectories, spill)
    assert back == whole.trajectories


def test_a_unit_names_its_runs_instead_of_carrying_them() -> None:
    folder = BENCH / "trajectories" / "psf__requests-1724"
    with read_cohort([str(folder)]) as (result, spill):
        splits = split_cohort(result.trajectories, "agentlens-bench")
        (unit,) = spilled_units([splits], spill, local=True)
        (shipped,) = spilled_units([splits], spill, local=False)
        assert unit.packed is None and shipped.packed is not None
        small, large = len(pickle.dumps(unit)), len(pickle.dumps(shipped))
        assert small * 5 < large, (small, large)
        runs = hydrate(unit)
        assert runs == hydrate(shipped)
    whole = {t.id: t for t in read_paths([str(folder)]).trajectories}
    assert runs == [whole[t.id] for t in unit.stubs]
    assert len(runs) == len(whole)


def test_the_spill_file_is_removed() -> None:
    with read_cohort([str(BENCH / "trajectories" / "psf__requests-1724")]) as (_, spill):
        assert Path(spill.path).stat().st_size > 0
    assert not Path(spill.path).exists()
