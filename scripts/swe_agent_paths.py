"""Count SWE-agent files named under two spellings, and fault-localisation candidates that are one
file twice, in every SWE-agent run under a folder (docs/stepvalue.md, "One file, one name").

    PYTHONPATH=src python scripts/swe_agent_paths.py ../shared/data

The check is SWE-agent's own: `open`, `create` and `edit` print `[File: /abs/path (N lines
total)]`, so each such step says which file it named. A candidate pair is one file twice when one
id, repository-relative, ends with `/` plus the other.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

from agentlens.errors import ConfigError
from agentlens.formats import read_paths
from agentlens.shell.working_dir import norm_path, repo_files
from agentlens.stepvalue.candidates import fault_localisation_space
from agentlens.trajectory import Trajectory

SHOWN = re.compile(r"^\[File: (/\S+) \(\d+ lines total\)\]")


def main(folder: str) -> None:
    runs = [r for r in read_paths([folder], unevaluated="failed").trajectories if _swe_agent(r)]
    print(f"{len(runs)} SWE-agent runs")
    named_wrong(runs)
    twin_candidates(runs)


def _swe_agent(run: Trajectory) -> bool:
    return run.source.format == "swe-agent"


def named_wrong(runs: list[Trajectory]) -> None:
    """Steps whose file, as the candidates name it, is not the file SWE-agent says it opened."""
    steps, wrong, runs_hit = 0, 0, set()
    for run in runs:
        for step in run.steps:
            shown = SHOWN.match(step.observation or "")
            if not shown or len(step.files) != 1:
                continue
            steps += 1
            if repo_files(step)[0] != norm_path(shown[1]):
                wrong += 1
                runs_hit.add(run.id)
    print(f"steps whose observation names their file: {steps}; named otherwise: {wrong}")
    print(f"runs with such a step: {len(runs_hit)} {sorted(runs_hit)}")


def twin_candidates(runs: list[Trajectory]) -> None:
    by_task: dict[str, list[Trajectory]] = defaultdict(list)
    for run in runs:
        by_task[run.task_id or run.id].append(run)
    for task, task_runs in sorted(by_task.items()):
        try:
            space = fault_localisation_space(task_runs, k=10)
        except ConfigError as exc:  # a task without a gold or a second file: nothing to count
            print(f"{task}: no candidates ({type(exc).__name__})")
            continue
        ids = [norm_path(c.id) for c in space.candidates]
        twins = [a for a in ids for b in ids if a != b and ("/" + a).endswith("/" + b)]
        print(f"{task}: {len(task_runs)} runs, {len(ids)} candidates, one file twice: {twins}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path("..") / "shared" / "data"))
