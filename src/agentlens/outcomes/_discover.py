"""Find outcome sidecars next to a trace and apply them under the precedence of `outcomes`."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec
import orjson

from agentlens import redaction
from agentlens.errors import ConfigError
from agentlens.outcomes._multi_swe_bench import REPORT_NAME as MSB_REPORT
from agentlens.outcomes._sources import (
    LabelTable,
    Unevaluated,
    read_report,
    read_run_instance_log,
)
from agentlens.outcomes._trial_results import HARBOR as TRIAL_HARBOR
from agentlens.outcomes._trial_results import TERMINAL_BENCH as TRIAL_TB
from agentlens.outcomes._trial_results import trial_outcome
from agentlens.trajectory import Outcome, Trajectory

PARENTS = 3
REPORT_NAMES = ("results/results.json", "results.json", "sb-cli-report.json", MSB_REPORT)
RANKS = {"run_instance.log": 4, "results.json": 3, "sb-cli-report": 3, "report.json": 3}
RANKS |= {"swebench-summary": 3, "multi-swe-bench": 3}
RANKS |= {f"trial-{TRIAL_HARBOR}": 3, f"trial-{TRIAL_TB}": 3}
RANKS |= {"file": 2, "file-name": 1}


def trajectory_keys(traj: Trajectory) -> list[str]:
    """Ids a sidecar may use for this trajectory: its id, task id and file stem."""
    keys = [traj.id]
    if traj.task_id:
        keys.append(traj.task_id)
    if traj.source.path:
        name = Path(traj.source.path).name
        keys.append(name.split(".", 1)[0])
    return list(dict.fromkeys(keys))


def discover_labels(
    trajectories: Iterable[Trajectory], unevaluated: Unevaluated = "unknown"
) -> int:
    """Label trajectories from sidecars found beside their files; returns how many changed.
    A task a report never evaluated stays `unknown` (its detail says why) unless `unevaluated`
    is "failed"."""
    labeler = SidecarLabeler(unevaluated)
    return sum(labeler.label(traj) for traj in trajectories)


class SidecarLabeler:
    """`discover_labels` one trajectory at a time, for a stream: the sidecars read stay cached
    across calls, up to `FOLDERS_CACHED` folders (then the cache starts again, so a corpus of a
    million run folders does not keep a million folders' answers)."""

    FOLDERS_CACHED = 4096

    def __init__(self, unevaluated: Unevaluated = "unknown") -> None:
        self.unevaluated = unevaluated
        self._finder = _Finder(unevaluated)

    def label(self, traj: Trajectory) -> bool:
        """Apply the best sidecar outcome to `traj`; whether its outcome changed."""
        if len(self._finder.has_logs) > self.FOLDERS_CACHED:
            self._finder = _Finder(self.unevaluated)
        finder = self._finder
        found = finder.best(traj)
        if finder.consulted_broken:  # outcome stays as it is; say which sidecar was unusable
            traj.add_warnings(map(redaction.masked, finder.consulted_broken))
        if found is None:
            return False
        if rank(found) > rank(traj.outcome) or _explains_unknown(found, traj.outcome):
            traj.outcome = masked_detail(found)
            return True
        return False


def masked_detail(outcome: Outcome) -> Outcome:
    """The outcome with its detail masked: a sidecar is read after the trace was redacted, and
    the detail quotes it (a harness's error message) or names it (a folder named by a key)."""
    if not outcome.detail:
        return outcome
    return msgspec.structs.replace(outcome, detail=redaction.masked(outcome.detail))


def _explains_unknown(found: Outcome, current: Outcome) -> bool:
    """A report that says "not evaluated" is worth keeping on an outcome nothing else labels."""
    return found.status == current.status == "unknown" and current.source is None


class _Finder:
    """Caches each sidecar, since every trace of a run shares the same report."""

    def __init__(self, unevaluated: Unevaluated = "unknown") -> None:
        self.unevaluated = unevaluated
        self.harness: dict[Path, list[tuple[Path, Path]]] = {}
        self.report_paths: dict[Path, list[Path]] = {}
        self.tables: dict[Path, LabelTable | None] = {}
        self.reports: dict[Path, list[LabelTable]] = {}
        self.has_logs: dict[Path, bool] = {}
        self.trials: dict[Path, Outcome | None] = {}
        self.broken: dict[Path, str] = {}  # sidecar -> why it could not be used
        self.consulted_broken: list[str] = []  # of the last `best` call

    def best(self, traj: Trajectory) -> Outcome | None:
        if not traj.source.path:
            return None
        keys = trajectory_keys(traj)
        self.consulted_broken = []
        trace = Path(os.path.abspath(traj.source.path))  # the same from any working directory
        candidates = [
            table.by_id[key]
            for table in self._tables(trace, keys)
            for key in keys
            if key in table.by_id
        ]
        trial = next(filter(None, map(self._trial, trace.parents[:PARENTS])), None)
        return max([*candidates, *([trial] if trial else [])], key=rank, default=None)

    def _trial(self, folder: Path) -> Outcome | None:
        """The verdict of a Harbor or Terminal-Bench trial folder (`_trial_results`)."""
        if folder not in self.trials:
            self.trials[folder] = trial_outcome(folder)
        return self.trials[folder]

    def _tables(self, trace: Path, keys: list[str]) -> Iterator[LabelTable]:
        for folder in trace.parents[:PARENTS]:
            if self._has_logs(folder):
                logs = folder / "logs"
                for key in filter(_path_part, keys):
                    yield from self._load(logs / key / "run_instance.log")
                    yield from self._load(logs / key / "report.json")
                for model_dir, summary in self._harness_runs(logs):
                    for key in filter(_path_part, keys):
                        yield from self._load(model_dir / key / "report.json")
                    yield from self._load(summary)
            yield from self._reports(folder)

    def _harness_runs(self, logs: Path) -> list[tuple[Path, Path]]:
        """(model folder, summary file) of each run in the SWE-bench harness layout
        `logs/run_evaluation/<run_id>/<model>/`, whose summary the harness writes as
        `<model>.<run_id>.json` in the folder it ran from (the one holding `logs/`)."""
        if logs not in self.harness:
            root = logs / "run_evaluation"
            runs = sorted(p for p in root.glob("*/*") if p.is_dir()) if root.is_dir() else []
            self.harness[logs] = [
                (model, logs.parent / f"{model.name}.{model.parent.name}.json") for model in runs
            ]
        return self.harness[logs]

    def _has_logs(self, folder: Path) -> bool:
        # Per-folder caches: all traces of a run share a folder, so the file system is asked once.
        if folder not in self.has_logs:
            self.has_logs[folder] = (folder / "logs").is_dir()
        return self.has_logs[folder]

    def _reports(self, folder: Path) -> list[LabelTable]:
        paths = self._report_paths(folder)
        if folder not in self.reports:  # `_load` notes the broken ones as it reads them
            self.reports[folder] = [t for path in paths for t in self._load(path)]
            return self.reports[folder]
        self.consulted_broken += [self.broken[p] for p in paths if p in self.broken]
        return self.reports[folder]

    def _report_paths(self, folder: Path) -> list[Path]:
        """The fixed names, then sb-cli's downloads `sb-cli-reports/<dataset>__<split>__<run>.json`."""
        if folder not in self.report_paths:
            downloads = folder / "sb-cli-reports"
            found = sorted(downloads.glob("*.json")) if downloads.is_dir() else []
            self.report_paths[folder] = [folder / name for name in REPORT_NAMES] + found
        return self.report_paths[folder]

    def _load(self, path: Path) -> Iterator[LabelTable]:
        if path not in self.tables:
            self.tables[path] = self._read(path)
        table = self.tables[path]
        if table is not None:
            yield table
        elif path in self.broken:
            self.consulted_broken.append(self.broken[path])

    def _read(self, path: Path) -> LabelTable | None:
        try:
            if not path.is_file():  # OSError: e.g. a name too long for the file system
                return None
            if path.suffix == ".log":
                return read_run_instance_log(path)
            return read_report(path, self.unevaluated)
        except OSError:
            return None
        except ConfigError as exc:
            # unreadable or not JSON: worth a warning; valid JSON of another kind (mini-swe-agent's
            # preds in a results.json) is just not ours
            if isinstance(exc.__cause__, OSError | orjson.JSONDecodeError):
                self.broken[path] = f"outcome sidecar ignored: {exc}"
            return None


def _path_part(key: str) -> bool:
    """Keys come from the trace (hostile): only one plain, short folder name may be looked up."""
    return 0 < len(key) <= 200 and not any(c in key for c in "/\\\0") and key not in (".", "..")


def rank(outcome: Outcome) -> int:
    """Precedence of an outcome's source: 5 explicit, 4 log, 3 report, 2 in-file, 1 name, 0 none."""
    if outcome.status == "unknown" or outcome.source is None:
        return 0
    if outcome.source.startswith("labels:"):
        return 5
    return RANKS.get(outcome.source, 2)
