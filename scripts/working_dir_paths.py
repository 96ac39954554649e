"""Count, per format, files that step value's candidates would name twice, with each step's
`Step.cwd` as the readers give it and with it cleared (what the readers gave before they set it):
docs/stepvalue.md, "One file, one name".

    PYTHONPATH=src python scripts/working_dir_paths.py ../shared/data

For each task (a run's `task_id`, else the run alone) its names are every file a step names,
repository-relative and resolved against the folder it was named in, and its candidate pool is
`tracked_from_runs`: the files its runs read or edit and none creates, by repository-relative
name. A name is one file twice when another name of the same pool ends with `/` plus it
(`src/a.ts` and `Users/me/proj/src/a.ts`); a name is newly resolved when only the runs read
with their `cwd` give it. Fault-localisation candidates (k=10) are counted the same way for the
tasks that have them (a passing run that edits a file).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from agentlens.errors import ConfigError
from agentlens.formats import read_paths
from agentlens.shell.working_dir import norm_path, repo_files
from agentlens.stepvalue.candidates import fault_localisation_space
from agentlens.stepvalue.candidates.tracked import tracked_from_runs
from agentlens.trajectory import Trajectory


def main(folder: str) -> None:
    runs = read_paths([folder], unevaluated="failed").trajectories
    by_format: dict[str, list[Trajectory]] = defaultdict(list)
    for run in runs:
        by_format[run.source.format].append(run)
    print(
        "format | runs | steps with cwd | names | newly resolved | twice before | twice after | "
        "pool names | "
        "twice before | twice after | FL tasks | FL twice before | FL twice after"
    )
    for name, format_runs in sorted(by_format.items()):
        print(" | ".join(str(cell) for cell in _row(name, format_runs)))


def _row(name: str, runs: list[Trajectory]) -> list[object]:
    with_cwd = sum(1 for run in runs for step in run.steps if step.cwd)
    tasks = _tasks(runs)
    named_after = [_named(task) for task in tasks]
    after = [_pool(task) for task in tasks]
    fl_after = [_fl(task) for task in tasks]
    for run in runs:
        for step in run.steps:
            step.cwd = None
    named_before = [_named(task) for task in tasks]
    before = [_pool(task) for task in tasks]
    fl_before = [_fl(task) for task in tasks]
    fl_tasks = sum(1 for ids in fl_after if ids is not None)
    return [
        name,
        len(runs),
        with_cwd,
        sum(len(n) for n in named_after),
        sum(len(set(a) - set(b)) for a, b in zip(named_after, named_before, strict=True)),
        sum(len(_twice(n)) for n in named_before),
        sum(len(_twice(n)) for n in named_after),
        sum(len(p) for p in after),
        sum(len(_twice(p)) for p in before),
        sum(len(_twice(p)) for p in after),
        fl_tasks,
        sum(len(_twice(ids or [])) for ids in fl_before),
        sum(len(_twice(ids or [])) for ids in fl_after),
    ]


def _tasks(runs: list[Trajectory]) -> list[list[Trajectory]]:
    by_task: dict[str, list[Trajectory]] = defaultdict(list)
    for run in runs:
        by_task[run.task_id or run.id].append(run)
    return list(by_task.values())


def _named(runs: list[Trajectory]) -> list[str]:
    return sorted({f for run in runs for step in run.steps for f in repo_files(step)} - {""})


def _pool(runs: list[Trajectory]) -> list[str]:
    return sorted(tracked_from_runs(runs).paths)


def _fl(runs: list[Trajectory]) -> list[str] | None:
    try:
        space = fault_localisation_space(runs, k=10)
    except ConfigError:  # no gold, or a single file: no candidates to count
        return None
    return [norm_path(c.id) for c in space.candidates]


def _twice(names: Iterable[str]) -> list[str]:
    """Names that another name of the list ends with (after a `/`): one file, two names."""
    names = set(names)
    return sorted(a for a in names if any(b != a and b.endswith("/" + a) for b in names))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path("..") / "shared" / "data"))
