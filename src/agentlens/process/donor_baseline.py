"""The donors' own baseline for the `calibrated` profile's relative terms (`f1_rel`, `cov_rel`,
`len_rel`): each donor scored against the reference merged from the other donors, computed once
per reference and kept with it (`calibrated.BASELINE_KEY`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from agentlens.process.calibrated import BASELINE_DONORS, BASELINE_KEY, DonorBaseline
from agentlens.process.profiles import ProfileConfig
from agentlens.process.pta import Reference, merge_reference, run_labels, run_states
from agentlens.process.score import score_trajectory
from agentlens.process.stages import Stage
from agentlens.process.states import ProcState
from agentlens.trajectory import Trajectory

MergeOf = Callable[[tuple[int, ...]], Reference]
"""The reference merged from the donors at the given positions."""


def donor_baseline(
    donors: Sequence[Trajectory],
    config: ProfileConfig,
    labels: Sequence[Sequence[Stage | None]] | None = None,
    states: Sequence[list[ProcState]] | None = None,
    merged: MergeOf | None = None,
) -> DonorBaseline | None:
    """Leave-one-donor-out: each of the first `BASELINE_DONORS` donors against the reference of
    all the others; None with fewer than 3 donors (a reference needs 2). `labels` and `states`,
    the donors' own (as the reference was built with), spare deriving them once per merge;
    `merged` gives the reference of the donors at some positions (one merged before, say)."""
    if len(donors) < 3:
        return None
    plain = replace(config, composite="eq1", terms=())
    stages = labels if labels is not None else [run_labels(d, plain) for d in donors]
    if states is None:  # a run's states do not depend on the composite `plain` drops
        states = [run_states(d, lab, plain) for d, lab in zip(donors, stages, strict=True)]
    kept = states

    def merge(others: tuple[int, ...]) -> Reference:
        return merge_reference([donors[j] for j in others], plain, states=[kept[j] for j in others])

    found = []
    for i, others in enumerate(baseline_donor_sets(len(donors))):
        reference = (merged or merge)(others)
        found.append(score_trajectory(donors[i], reference, plain, stages[i]))
    f1 = sum(r.f1_score for r in found) / len(found) / 100
    cov = sum(r.signals["cov"].value for r in found) / len(found) / 100
    n = sum(r.n_states for r in found) / len(found)
    reason = f"mean of {len(found)} donors each scored against the other {len(donors) - 1}"
    return DonorBaseline(f1, cov, n, reason)


def baseline_donor_sets(n_donors: int) -> list[tuple[int, ...]]:
    """The positions of the donors each baseline reference merges, in the order scored: all but
    the i-th, for each of the first `BASELINE_DONORS`; none below 3 donors."""
    if n_donors < 3:
        return []
    every = range(n_donors)
    return [tuple(j for j in every if j != i) for i in range(min(n_donors, BASELINE_DONORS))]


def attach_baseline(
    reference: Reference,
    donors: Sequence[Trajectory],
    config: ProfileConfig,
    known: dict[tuple[int, ...], DonorBaseline | None] | None = None,
    labels: Sequence[Sequence[Stage | None]] | None = None,
    states: Sequence[list[ProcState]] | None = None,
    merged: MergeOf | None = None,
) -> None:
    """Compute the donors' baseline once and keep it with the reference (its memo); `known`
    shares baselines between references of the same donors; `labels`, `states` and `merged`
    as `donor_baseline` takes them."""
    if config.composite != "logistic":
        return
    key = tuple(id(d) for d in donors)
    cache = known if known is not None else {}
    if key not in cache:
        cache[key] = donor_baseline(donors, config, labels, states, merged)
    found = cache[key]
    reference.cached(BASELINE_KEY, lambda: found)
