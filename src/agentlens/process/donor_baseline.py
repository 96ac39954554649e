"""The donors' own baseline for the `calibrated` profile's relative terms (`f1_rel`, `cov_rel`,
`len_rel`): each donor scored against the reference merged from the other donors, computed once
per reference and kept with it (`calibrated.BASELINE_KEY`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from agentlens.process.calibrated import BASELINE_DONORS, BASELINE_KEY, DonorBaseline
from agentlens.process.profiles import ProfileConfig
from agentlens.process.pta import Reference, merge_reference, run_labels, run_states
from agentlens.process.score import score_trajectory
from agentlens.process.stages import Stage
from agentlens.process.states import ProcState
from agentlens.trajectory import Trajectory


def donor_baseline(
    donors: Sequence[Trajectory],
    config: ProfileConfig,
    labels: Sequence[Sequence[Stage | None]] | None = None,
    states: Sequence[list[ProcState]] | None = None,
) -> DonorBaseline | None:
    """Leave-one-donor-out: each of the first `BASELINE_DONORS` donors against the reference of
    all the others; None with fewer than 3 donors (a reference needs 2). `labels` and `states`,
    the donors' own (as the reference was built with), spare deriving them once per merge."""
    if len(donors) < 3:
        return None
    plain = replace(config, composite="eq1", terms=())
    stages = labels if labels is not None else [run_labels(d, plain) for d in donors]
    if states is None:  # a run's states do not depend on the composite `plain` drops
        states = [run_states(d, lab, plain) for d, lab in zip(donors, stages, strict=True)]
    found = []
    for i, donor in enumerate(donors[:BASELINE_DONORS]):
        others = [j for j in range(len(donors)) if j != i]
        reference = merge_reference(
            [donors[j] for j in others], plain, states=[states[j] for j in others]
        )
        found.append(score_trajectory(donor, reference, plain, stages[i]))
    f1 = sum(r.f1_score for r in found) / len(found) / 100
    cov = sum(r.signals["cov"].value for r in found) / len(found) / 100
    n = sum(r.n_states for r in found) / len(found)
    reason = f"mean of {len(found)} donors each scored against the other {len(donors) - 1}"
    return DonorBaseline(f1, cov, n, reason)


def attach_baseline(
    reference: Reference,
    donors: Sequence[Trajectory],
    config: ProfileConfig,
    known: dict[tuple[int, ...], DonorBaseline | None] | None = None,
    labels: Sequence[Sequence[Stage | None]] | None = None,
    states: Sequence[list[ProcState]] | None = None,
) -> None:
    """Compute the donors' baseline once and keep it with the reference (its memo); `known`
    shares baselines between references of the same donors; `labels` and `states` are the
    donors'."""
    if config.composite != "logistic":
        return
    key = tuple(id(d) for d in donors)
    cache = known if known is not None else {}
    if key not in cache:
        cache[key] = donor_baseline(donors, config, labels, states)
    found = cache[key]
    reference.cached(BASELINE_KEY, lambda: found)
