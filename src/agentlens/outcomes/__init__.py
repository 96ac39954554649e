"""Pass/fail labels from outside the trace file, with a documented precedence.

Precedence, strongest first (a weaker source never overwrites a stronger one):

1. explicit `--labels` sidecars (`apply_labels`), source `labels:<kind>`; a later spec wins ties;
2. a `run_instance.log` (`Result for <task>: resolved: True|False`) found next to the trace;
3. a report found next to the trace: SWE-bench `results.json`, an sb-cli report, a harness
   `report.json`;
4. a label inside the trace file (source `file`, e.g. OpenHands resolver `success`);
5. the file name (source `file-name`, AgentLens-Bench `-pass-` / `-fail-`).

Auto-discovery (`discover_labels`) looks at the trace's folder and up to three parents (of its
absolute path, so the working directory does not matter) for `logs/<task>/run_instance.log`,
`logs/<task>/report.json`, the SWE-bench harness layout
`logs/run_evaluation/<run_id>/<model>/<task>/report.json` with its summary `<model>.<run_id>.json`,
`results/results.json`, `results.json`, `sb-cli-report.json` and Multi-SWE-bench's
`final_report.json` (`_multi_swe_bench`), and takes a Harbor or Terminal-Bench trial's result file
(`_trial_results`) for every trace below that trial's folder.

A task a report lists as never evaluated (`incomplete_ids`, `empty_patch_ids`, sb-cli's
`pending_ids`) is `unknown`, its `detail` saying "not evaluated", unless `unevaluated="failed"`
(`--unevaluated failed`) counts it as failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentlens.errors import ConfigError
from agentlens.outcomes._discover import (
    SidecarLabeler,
    discover_labels,
    masked_detail,
    rank,
    trajectory_keys,
)
from agentlens.outcomes._sources import (
    UNEVALUATED,
    LabelTable,
    Unevaluated,
    parse_status,
    read_csv,
    read_logs_dir,
    read_report,
    read_run_instance_log,
)
from agentlens.outcomes._trial_results import trial_labels
from agentlens.trajectory import Outcome, Trajectory

__all__ = [
    "UNEVALUATED",
    "LabelTable",
    "SidecarLabeler",
    "Unevaluated",
    "apply_labels",
    "apply_tables",
    "discover_labels",
    "load_label_spec",
    "parse_status",
    "rank",
]


def load_label_spec(spec: str, unevaluated: Unevaluated = "unknown") -> LabelTable:
    """Read one `--labels` value: a CSV, a SWE-bench/sb-cli/Multi-SWE-bench report, a Harbor or
    Terminal-Bench trial result, a run_instance.log or a logs dir."""
    path = Path(spec)
    if not path.exists():
        raise ConfigError(f"--labels {spec}: no such file or directory")
    if path.is_dir():
        table = read_logs_dir(path, unevaluated)
    elif path.suffix.lower() in (".csv", ".tsv"):
        table = read_csv(path)
    elif path.suffix.lower() == ".log":
        table = read_run_instance_log(path)
    else:
        table = trial_labels(path) or read_report(path, unevaluated)
    if not len(table):
        raise ConfigError(f"--labels {spec}: no pass/fail labels found in it")
    return table


def apply_labels(trajectories: Sequence[Trajectory], label_specs: Sequence[str]) -> int:
    """Label trajectories from explicit sidecars; returns how many trajectories got a label.

    Explicit labels outrank every other source. A trajectory matches a table entry by its source
    path (the CSV path may be relative, or start with the original data root), by its id, or by
    its task id.
    """
    return apply_tables(trajectories, [load_label_spec(spec) for spec in label_specs])


def apply_tables(trajectories: Sequence[Trajectory], tables: Sequence[LabelTable]) -> int:
    """`apply_labels` for tables already loaded with `load_label_spec` (later tables win)."""
    labelled = 0
    for table in tables:
        for traj in trajectories:
            found = match(table, traj)
            if found is not None and (
                found.status != "unknown" or traj.outcome.status == "unknown"
            ):
                source = f"labels:{found.source}"
                labelled_as = Outcome(status=found.status, source=source, detail=found.detail)
                traj.outcome = masked_detail(labelled_as)
                labelled += 1
    return labelled


def match(table: LabelTable, traj: Trajectory) -> Outcome | None:
    """The table's label for a trajectory: by path suffix first, then by id, then by task id.

    The longest matching path suffix wins, so `trajs/<task>.traj` (the key with its first folder
    dropped) never shadows a key that also names the run directory.
    """
    if table.by_path and traj.source.path:
        parts = Path(traj.source.path).resolve().parts
        keys = table.path_keys_named(parts[-1]) if parts else []
        best = max(
            ((_match_length(parts, key), table.by_path[key]) for key in keys),
            key=lambda pair: pair[0],
            default=(0, None),
        )
        if best[0] > 0:
            return best[1]
    for key in trajectory_keys(traj):
        if key in table.by_id:
            return table.by_id[key]
    return None


def _match_length(parts: tuple[str, ...], key: str) -> int:
    """How many trailing path components the key matches (0: no match)."""
    key_parts = tuple(p for p in key.split("/") if p and p != ".")
    # Try the key as given, then without its first folder (original download roots, §0.2).
    for candidate in (key_parts, key_parts[1:]):
        if len(candidate) >= 2 and parts[-len(candidate) :] == candidate:
            return len(candidate)
    return 0
