"""A reference as scoring reads it: the donors merged into a graph (`pta.merge_reference`) and,
under `calibrated`, the donors' own baseline kept with it (`donor_baseline`), as `agentlens
reference build` writes it. A reference built from Python scores as the command's does."""

from __future__ import annotations

from collections.abc import Sequence

from agentlens.process.donor_baseline import attach_baseline
from agentlens.process.profiles import DEFAULT_PROFILE, Profile, ProfileConfig, get_profile
from agentlens.process.pta import Reference, merge_reference
from agentlens.process.stages import Stage
from agentlens.process.states import ProcState
from agentlens.trajectory import Trajectory


def build_reference(
    trajs: Sequence[Trajectory],
    profile: Profile | ProfileConfig = DEFAULT_PROFILE,
    labels: Sequence[Sequence[Stage | None]] | None = None,
    states: Sequence[list[ProcState]] | None = None,
) -> Reference:
    """`merge_reference(trajs, profile, labels, states)` with the donors' baseline the profile
    reads (none but under `calibrated`)."""
    config = get_profile(profile)
    reference = merge_reference(trajs, config, labels, states)
    attach_baseline(reference, trajs, config, labels=labels)
    return reference
