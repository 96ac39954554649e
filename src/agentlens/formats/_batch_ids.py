"""Trajectory ids that are unique and stable within a batch, built from where each file lies.

Readers name a run from its file: a session id, `<run>/<instance>` for a run folder holding
`trajs/`. Two layouts need the batch to finish the job:
* `<run>/<instance>/<instance>.traj.json` (mini-swe-agent's and SWE-agent 1.x's own output): a
  reader that names the run by its instance alone gets the run folder put in front,
  `<run>/<instance>`, so runs of one task by several models never share an id;
* any other id read from more than one file (copies of one session in two folders, fixtures
  with a placeholder id) gets the shortest part of its folder path, then of its file name, that
  tells the files apart: `<folders>/<id>`. Only when the files cannot be told apart (the same
  record named twice) is it an error: the repeat is dropped and named as a failure, so a
  result table never holds two rows with one id.
Paths are absolute by then (`read_path`), so the ids do not depend on the working directory.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from agentlens.formats.jsonl import JsonlReader
from agentlens.trajectory import Trajectory


def unique_ids(trajectories: list[Trajectory]) -> list[tuple[Trajectory, str]]:
    """Rename in place; returns the repeats (trajectory, why) to drop from the batch.
    (`stream.TraceStream` does the same over a stream: `_run_folder_first` as each is read, then
    `_tell_apart` on the few that share an id.)"""
    for trajectory in trajectories:
        _run_folder_first(trajectory)
    repeats: list[tuple[Trajectory, str]] = []
    groups: dict[str, list[Trajectory]] = defaultdict(list)
    for trajectory in trajectories:
        groups[trajectory.id].append(trajectory)
    for shared, group in groups.items():
        if len(group) > 1:
            repeats += _tell_apart(shared, group)
    return repeats


def _run_folder_first(trajectory: Trajectory) -> None:
    path = Path(trajectory.source.path)
    if "/" in trajectory.id or path.parent.name != trajectory.id:
        return
    run = path.parent.parent.name
    if run:
        _rename(trajectory, f"{run}/{trajectory.id}")


def _tell_apart(shared: str, group: list[Trajectory]) -> list[tuple[Trajectory, str]]:
    firsts: dict[tuple[str, int | None], Trajectory] = {}
    repeats = []
    for trajectory in group:
        key = (trajectory.source.path, trajectory.source.index)
        if key in firsts:
            repeats.append((trajectory, _read_twice(shared, firsts[key], trajectory)))
        else:
            firsts[key] = trajectory
    distinct = list(firsts.values())
    if len(distinct) > 1:
        for trajectory, prefix in zip(distinct, _prefixes(shared, distinct), strict=True):
            _rename(trajectory, f"{prefix}/{shared}")
    return repeats


def _read_twice(shared: str, first: Trajectory, repeat: Trajectory) -> str:
    """Why `repeat` is dropped, said of the file it was read from (`file_read`): a converted copy
    keeps its original's path, so the original and its copies, or two copies, are one run."""
    said = f"trajectory id {shared!r} read twice"
    here, earlier, recorded = file_read(repeat)[0], file_read(first)[0], repeat.source.path
    if here == earlier:
        return f"{said} from this file"
    if earlier == recorded:
        return f"{said}: converted from {recorded}, which was read too"
    if here == recorded:
        return f"{said}: already read from {earlier}, converted from this file"
    return f"{said}: the run of {recorded}, already read from {earlier}"


def file_read(trajectory: Trajectory) -> tuple[str, str]:
    """(path, format) of the file the trajectory was read from: its source, or the canonical
    JSONL file that holds it (`Source.read_from`)."""
    source = trajectory.source
    if source.read_from is None:
        return source.path, source.format
    return source.read_from, JsonlReader.name


def _prefixes(shared: str, group: list[Trajectory]) -> list[str]:
    """The shortest trailing folders (then folders and file name, then record number) that
    differ between every two files of the group."""
    names = set(shared.split("/"))
    candidates = []
    for trajectory in group:
        path = Path(trajectory.source.path)
        folders = list(path.parent.parts[1:])  # not the root: ids never start with "/"
        while folders and folders[-1] in names:  # `<run>/<id>/<id>.traj.json`: the run tells
            folders.pop()
        index = trajectory.source.index
        record = [f"#{index}"] if index is not None else []
        candidates.append((folders, [*folders, path.name.removesuffix(path.suffix), *record]))
    for use in (0, 1):
        longest = max(len(c[use]) for c in candidates)
        for length in range(1, longest + 1):
            prefixes = ["/".join(c[use][-length:]) for c in candidates]
            if len(set(prefixes)) == len(prefixes):
                return prefixes
    return ["/".join(c[1]) for c in candidates]


def _rename(trajectory: Trajectory, new: str) -> None:
    """A new id, carried to its sub-agents (whose ids start with it) and the steps that link them."""
    old = trajectory.id
    trajectory.id = new
    renamed: dict[str, str] = {}
    for sub in trajectory.subtrajectories:
        sub.parent_id = new
        if sub.id.startswith(old + "/"):
            sub_old = sub.id
            _rename(sub, new + sub.id[len(old) :])
            renamed.setdefault(sub_old, sub.id)
    for step in trajectory.steps:  # once, however many sub-agents (an OTel file holds 1000s)
        if step.subtrajectory in renamed:
            step.subtrajectory = renamed[step.subtrajectory]
