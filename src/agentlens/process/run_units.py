"""Scoring the runs of one task's work unit so that one bad step costs its run only.

`score_unit` labels each run once, merges each split's donors (a donor that cannot be labelled
is left out and reported once) and scores the split's runs; any exception while labelling or
scoring a run becomes a `RunFailure` naming the run, the step and the reason, and the other runs
of the task are still scored. `score_run` is the same for one run against a given reference.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeAlias, TypeVar

from agentlens.formats.run_spill import RunFields
from agentlens.process import score as scoring
from agentlens.process.calibrated import DonorBaseline
from agentlens.process.donor_baseline import attach_baseline, baseline_donor_sets
from agentlens.process.profiles import get_profile
from agentlens.process.pta import PartialMerge, check_donors, run_labels, run_states
from agentlens.process.states import ProcState
from agentlens.trajectory import Trajectory

if TYPE_CHECKING:
    from agentlens.process.profiles import Profile, ProfileConfig
    from agentlens.process.pta import Reference
    from agentlens.process.result import ProcessResult
    from agentlens.process.stages import Stage

ScoredRun: TypeAlias = "ProcessResult | RunFailure"


CohortRun = RunFields
"""What a protocol reads of a run to split a cohort: a `Trajectory`, or the `RunRef` a cohort
keeps of a run waiting in a spill file (id, task, source, outcome)."""


T = TypeVar("T")


@dataclass(frozen=True)
class TaskSplit(Generic[T]):
    """One task's runs under a protocol: the reference donors and the runs scored against them
    (trajectories, refs, or, for a spilled cohort, the runs' positions in the spill)."""

    task_id: str
    donors: Sequence[T]
    scored: Sequence[T]


@dataclass(frozen=True)
class RunFailure:
    """One run that could not be labelled or scored (`step`: label, reference or score); the
    other runs of its task are scored without it."""

    run: str
    step: str
    reason: str

    def __str__(self) -> str:
        return f"{self.run}: {self.step} failed: {self.reason}"


def run_name(traj: Trajectory) -> str:
    """The run as a user finds it: its file (and record), else its id."""
    index = f"#{traj.source.index}" if traj.source.index is not None else ""
    return f"{traj.source.path or traj.id}{index}"


@dataclass(frozen=True)
class TaskUnit:
    """A task's consecutive splits as one work unit: each run once, splits as indices into it."""

    task_id: str
    runs: list[Trajectory]
    splits: list[tuple[list[int], list[int]]]


def score_unit(unit: TaskUnit, profile: Profile) -> list[ScoredRun]:
    """Each split: label the donors, merge them, score the other runs; a run whose labelling or
    scoring raises becomes a `RunFailure` (a failed donor is reported once and left out)."""
    config = get_profile(profile)
    labels: dict[int, list[Stage | None] | RunFailure] = {}
    baselines: dict[tuple[int, ...], DonorBaseline | None] = {}
    states: dict[int, list[ProcState]] = {}  # a donor's states, for every reference it joins
    merges = _Merges(unit, config, states)
    results: list[ScoredRun] = []
    for donors, scored in unit.splits:
        usable = [i for i in donors if _labelled(unit, i, config, labels, results)]
        reference = _reference(unit, usable, config, labels, baselines, merges)
        for i in scored:
            results.append(_score_one(unit, i, reference, config, labels, results))
    return [r for r in results if r is not _SKIP]


def _labelled(
    unit: TaskUnit, i: int, config: ProfileConfig,
    known: dict[int, list[Stage | None] | RunFailure], results: list[ScoredRun],
) -> bool:  # fmt: skip
    return not isinstance(_labels(unit, i, config, known, results), RunFailure)


_SKIP = RunFailure("", "", "")
"""A placeholder for a run whose failure was already reported (a donor, or a run scored twice)."""


def _labels(
    unit: TaskUnit, i: int, config: ProfileConfig,
    known: dict[int, list[Stage | None] | RunFailure], results: list[ScoredRun],
) -> list[Stage | None] | RunFailure:  # fmt: skip
    if i not in known:
        try:
            known[i] = run_labels(unit.runs[i], config)
        except Exception as exc:  # any bug in one run's labelling costs that run only
            known[i] = RunFailure(run_name(unit.runs[i]), "label", _reason(exc))
            results.append(known[i])  # type: ignore[arg-type]
    return known[i]


PARTIAL_STATES = 40_000
"""The most states the partial merges a unit keeps may hold (about 12 MB): leave-one-out keeps
first runs for later splits, which grows with the square of a task's passing runs; past it, a
donor set merges from the longest first runs kept, or from its first run."""


class _Merges:
    """Each donor set's reference merged once in a unit, and donor sets that begin alike merge
    their common first runs once: a split's reference and its baseline's leave-one-donor-out
    references share donor sets with other splits (leave-one-out: the runs but i and j, for split
    i and for split j) and first runs with most (all the runs before i). A reference, or runs
    merged so far, is kept until its last planned use."""

    def __init__(
        self, unit: TaskUnit, config: ProfileConfig, states: dict[int, list[ProcState]]
    ) -> None:
        self.unit, self.config, self.states = unit, config, states
        planned = _planned(unit, config)
        self.kept: dict[tuple[int, ...], Reference] = {}
        self.uses_left = Counter(planned)
        self.partial: dict[tuple[int, ...], PartialMerge] = {}
        self.partial_uses_left = Counter(_resumed_from(list(dict.fromkeys(planned))))
        self.partial_states = 0  # the states the kept partial merges hold, up to PARTIAL_STATES

    def of(self, donors: tuple[int, ...]) -> Reference:
        """The reference merged from the unit's runs `donors` (labelled), in that order."""
        reference = self.kept.pop(donors, None) or self._merge(donors)
        self.uses_left[donors] -= 1
        if self.uses_left[donors] > 0:
            self.kept[donors] = reference
        return reference

    def _merge(self, donors: tuple[int, ...]) -> Reference:
        trajs = [self.unit.runs[i] for i in donors]
        check_donors(trajs)
        done, merge = self._resume(donors)
        for n in range(done, len(donors)):
            if merge is None:
                merge = PartialMerge(self.config, self.states[donors[0]])
            else:
                merge.add(self.states[donors[n]])
            self._keep(donors[: n + 1], merge)
        assert merge is not None  # donors were checked: one or more
        return merge.reference(trajs)

    def _resume(self, donors: tuple[int, ...]) -> tuple[int, PartialMerge | None]:
        """The longest first runs of `donors` merged before (a copy, unless it is their last
        use), and how many they are; else 0 and None."""
        for n in range(len(donors), 0, -1):
            if (merge := self.partial.get(donors[:n])) is not None:
                self.partial_uses_left[donors[:n]] -= 1
                if self.partial_uses_left[donors[:n]] > 0:
                    return n, merge.copy()
                del self.partial[donors[:n]]
                self.partial_states -= merge.size()
                return n, merge
        return 0, None

    def _keep(self, first: tuple[int, ...], merge: PartialMerge) -> None:
        if self.partial_uses_left[first] <= 0 or first in self.partial:
            return
        if self.partial_states + merge.size() <= PARTIAL_STATES:
            self.partial[first] = merge.copy()
            self.partial_states += merge.size()


def _resumed_from(distinct: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """For each donor set, in order, the longest first runs (two or more) it shares with one
    merged before it: merged once, kept for it."""
    found: list[tuple[int, ...]] = []
    begun: set[tuple[int, ...]] = set()
    for donors in distinct:
        n = 0
        while n < len(donors) and donors[: n + 1] in begun:
            n += 1
        if n >= 2:
            found.append(donors[:n])
        begun.update(donors[:i] for i in range(1, len(donors) + 1))
    return found


def _planned(unit: TaskUnit, config: ProfileConfig) -> list[tuple[int, ...]]:
    """The donor sets the unit's splits merge, in order: each split's own, then under a logistic
    composite its baseline's, the first time its donors come (`attach_baseline` keeps it)."""
    planned: list[tuple[int, ...]] = []
    baselined: set[tuple[int, ...]] = set()
    for donors, _ in unit.splits:
        key = tuple(donors)
        planned.append(key)
        if config.composite == "logistic" and key not in baselined:
            baselined.add(key)
            sets = baseline_donor_sets(len(key))
            planned += [tuple(donors[p] for p in others) for others in sets]
    return planned


def _reference(
    unit: TaskUnit, donors: list[int], config: ProfileConfig,
    labels: dict[int, list[Stage | None] | RunFailure],
    baselines: dict[tuple[int, ...], DonorBaseline | None],
    merges: _Merges,
) -> Reference | RunFailure:  # fmt: skip
    runs = [unit.runs[i] for i in donors]
    try:
        stages = [labels[i] for i in donors]
        for i, labelled in zip(donors, stages, strict=True):
            if i not in merges.states:
                merges.states[i] = run_states(unit.runs[i], labelled, config)  # type: ignore[arg-type]
        donor_states = [merges.states[i] for i in donors]
        reference = merges.of(tuple(donors))

        def merged(positions: tuple[int, ...]) -> Reference:
            return merges.of(tuple(donors[p] for p in positions))

        attach_baseline(reference, runs, config, baselines, stages, donor_states, merged)  # type: ignore[arg-type]
    except Exception as exc:  # the runs scored against it fail, named
        return RunFailure("", "reference", _reason(exc))
    return reference


def _score_one(
    unit: TaskUnit, i: int, reference: Reference | RunFailure, config: ProfileConfig,
    labels: dict[int, list[Stage | None] | RunFailure], results: list[ScoredRun],
) -> ScoredRun:  # fmt: skip
    name = run_name(unit.runs[i])
    if isinstance(reference, RunFailure):
        return RunFailure(name, "reference", reference.reason)
    labelled = _labels(unit, i, config, labels, results)
    if isinstance(labelled, RunFailure):
        return _SKIP
    try:  # through the module, so a test can make one run's scoring raise
        return scoring.score_trajectory(unit.runs[i], reference, config, labels=labelled)
    except Exception as exc:  # any bug in one run's scoring costs that run only
        return RunFailure(name, "score", _reason(exc))


def score_run(traj: Trajectory, reference: Reference, profile: Profile) -> ScoredRun:
    """One run against a given reference (`agentlens score`): its result, or a `RunFailure`
    naming the step (label or score) that raised."""
    unit = TaskUnit(traj.task_id or "", [traj], [([], [0])])
    results: list[ScoredRun] = []
    scored = _score_one(unit, 0, reference, get_profile(profile), {}, results)
    return results[0] if scored is _SKIP else scored


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
