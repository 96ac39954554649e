"""The merger keeps a reference's states in step order and its edges' keys as it adds each run:
the graph must be the one that sorting and collecting them again for each run gives."""

from __future__ import annotations

import pytest

from agentlens.formats.stream import read_paths
from agentlens.process import pta
from agentlens.process.profiles import Profile
from agentlens.process.pta_io import reference_to_json
from agentlens.process.states import ProcState
from tests.conftest import BENCH


class _ResortingMerger(pta._Merger):
    """The merge as it was: the states sorted and the edges' keys collected again for each run."""

    def add(self, ref: pta.Reference, run: list[ProcState]) -> None:
        self.ordered = sorted(ref.nodes.values(), key=lambda s: s.step_no)
        self.seen = {(e.source, e.target, e.action) for e in ref.edges}
        super().add(ref, run)


@pytest.mark.parametrize("profile", ["calibrated", "sdk-compat"])
def test_the_merge_keeps_its_order_as_sorting_again_would(
    monkeypatch: pytest.MonkeyPatch, profile: Profile
) -> None:
    trajs = read_paths([BENCH / "trajectories" / "psf__requests-1724"]).trajectories
    donors = [t for t in trajs if t.outcome.status == "passed"]
    kept = reference_to_json(pta.merge_reference(donors, profile))
    monkeypatch.setattr(pta, "_Merger", _ResortingMerger)
    assert reference_to_json(pta.merge_reference(donors, profile)) == kept
