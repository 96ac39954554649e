"""`--metric-set auto`, the default of `review` and `sxs`: a scenario's tags choose the metric set
(spec §5.6). `agentlens run` keeps them on each trajectory as `metadata["scenario_tags"]`; a
trajectory tagged `testing` is judged on the testing set, any other on workflows. In SxS a pair
key gets the testing set only when its task is tagged `testing` on both sides, in every pair."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from agentlens.reviews import METRIC_SETS
from agentlens.reviews.sxs.pairing import pair_task

if TYPE_CHECKING:
    from agentlens.reviews.sxs.pairing import Side
    from agentlens.trajectory import Trajectory

AUTO = "auto"


def tagged_testing(traj: Trajectory) -> bool:
    tags = traj.metadata.get("scenario_tags")
    return isinstance(tags, list) and "testing" in tags


def narrowed(dimensions: Sequence[str], only: Sequence[str]) -> tuple[str, ...]:
    """The dimensions of `only` (in its order) that are in `dimensions`; all of them without it."""
    return tuple(d for d in only if d in dimensions) if only else tuple(dimensions)


def trajectory_dimensions(only: Sequence[str] = ()) -> Callable[[Trajectory], tuple[str, ...]]:
    """Per trajectory: the dimensions of its own metric set, narrowed to `only` when given."""

    def dimensions(traj: Trajectory) -> tuple[str, ...]:
        own = METRIC_SETS["testing" if tagged_testing(traj) else "workflows"]
        return narrowed(own, only)

    return dimensions


def keys_tagged_testing(a: Side, b: Side) -> set[str]:
    """The pair keys of the tasks whose paired trajectories, on both sides, are all tagged
    testing (a task with repeats is one task: one untagged repeat makes all its keys workflows)."""
    keys = set(a.trajectories) & set(b.trajectories)
    untagged = {
        pair_task(k) for k in keys if not all(tagged_testing(s.trajectories[k]) for s in (a, b))
    }
    return {k for k in keys if pair_task(k) not in untagged}


def pair_dimensions(a: Side, b: Side, only: Sequence[str] = ()) -> Callable[[str], tuple[str, ...]]:
    """Per pair key: the testing set's dimensions on `keys_tagged_testing`, workflows' on the
    others, narrowed to `only` when given."""
    testing = keys_tagged_testing(a, b)

    def dimensions(key: str) -> tuple[str, ...]:
        return narrowed(METRIC_SETS["testing" if key in testing else "workflows"], only)

    return dimensions
