"""Intent-stage labelling of a trajectory: one E/I/V/O per tool step, two profiles.

`sdk-compat` (`labeler_sdk`) reproduces the released labeler, quirks included; `paper` (default,
`labeler_paper`) follows the careful-human guideline. Both read only the canonical fields
(`Step.category`, `command`, `files`, `arguments`, `observation`, `is_error`; `paper` also the
agent's note on a step and the run's task text), so they work on every input format. States are
the tool steps; the task message and agent text get None.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentlens.errors import ConfigError
from agentlens.process.labeler_paper import label_steps_paper
from agentlens.process.labeler_sdk import label_steps_sdk
from agentlens.process.profiles import Profile, labeler_for
from agentlens.process.stages import Stage
from agentlens.trajectory import Step, Trajectory

LabelProfile = Profile


def label_trajectory(traj: Trajectory, profile: LabelProfile = "paper") -> list[Stage | None]:
    """Label every step of `traj`: a stage for each tool step, None for the others."""
    indices = state_indices(traj)
    stages = label_steps([traj.steps[i] for i in indices], profile, task=traj.task)
    labels: list[Stage | None] = [None] * len(traj.steps)
    for index, stage in zip(indices, stages, strict=True):
        labels[index] = stage
    return labels


def label_steps(
    steps: Sequence[Step], profile: LabelProfile = "paper", task: str | None = None
) -> list[Stage]:
    """Label a run's tool steps in order (the synthetic initial state is implied, not passed);
    `task`, the run's task text, lets the `paper` labeler see which files the task names."""
    profile = labeler_for(profile)
    if profile == "sdk-compat":
        return label_steps_sdk(steps)
    if profile == "paper":
        return label_steps_paper(steps, task)
    raise ConfigError(f"unknown profile {profile!r}; choose 'paper' or 'sdk-compat'")


def state_indices(traj: Trajectory) -> list[int]:
    """Indices of the steps that become states: every tool call (with its result)."""
    return [step.index for step in traj.steps if step.kind == "tool"]
