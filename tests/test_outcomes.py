from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from agentlens.errors import ConfigError
from agentlens.formats import read_path
from agentlens.outcomes import apply_labels, discover_labels, load_label_spec, rank
from agentlens.trajectory import Outcome, Source, Trajectory
from tests.conftest import BENCH, DATA, FORMATS

JAVA = DATA / "swe-agent-java"
MINI = DATA / "mini-swe-agent-swebv"


def _csv_labels(path: Path) -> dict[str, str]:
    with path.open() as handle:
        return {row["local_path"]: row["label"] for row in csv.DictReader(handle)}


def _stub(trace: Path) -> Trajectory:
    """A trajectory that points at a real trace file: only its location matters for sidecars."""
    stem = trace.name.split(".")[0]
    return Trajectory(id=stem, task_id=stem, source=Source(format="swe-agent", path=str(trace)))


def _java_trajectories() -> list[Trajectory]:
    return [_stub(p) for p in sorted(JAVA.glob("*/trajs/*.traj"))]


def test_java_runs_are_labelled_from_their_logs_and_reports() -> None:
    trajectories = _java_trajectories()
    assert len(trajectories) == 25
    assert discover_labels(trajectories) == 25
    expected = _csv_labels(JAVA / "labels.csv")
    for traj in trajectories:
        key = str(Path(traj.source.path).relative_to(JAVA))
        assert traj.outcome.status == ("passed" if expected[key] == "pass" else "failed"), key
        log = Path(traj.source.path).parents[1] / "logs" / traj.id / "run_instance.log"
        if log.exists():
            verdict = re.findall(r"resolved: (True|False)", log.read_text())[-1]
            assert traj.outcome.source == "run_instance.log"
            assert (traj.outcome.status == "passed") == (verdict == "True")
        else:  # doubao 4487 and jib-4035: no log, listed in results.json empty_patch_ids
            assert traj.outcome.source == "results.json"
            assert "empty_patch_ids" in (traj.outcome.detail or "")


def test_broken_results_json_gives_no_label_to_incomplete_instances() -> None:
    report = JAVA / "20240825_SWE-agent_gpt-4o-mini-2024-07-18" / "results" / "results.json"
    raw = json.loads(report.read_bytes())
    table = load_label_spec(str(report))
    assert set(table.by_id) == set(raw["resolved"]) | set(raw["unresolved_ids"])
    assert not set(table.by_id) & set(raw["incomplete_ids"])


def test_explicit_csv_outranks_the_log() -> None:
    trajectories = _java_trajectories()
    discover_labels(trajectories)
    assert apply_labels(trajectories, [str(JAVA / "labels.csv")]) == 25
    assert {t.outcome.source for t in trajectories} == {"labels:csv"}
    discover_labels(trajectories)  # a weaker source never overwrites an explicit label
    assert {t.outcome.source for t in trajectories} == {"labels:csv"}


def test_provenance_csv_paths_with_original_roots_are_remapped() -> None:
    trajectories = _java_trajectories()
    apply_labels(trajectories, [str(FORMATS / "labels.csv")])
    expected = {
        k.split("/", 1)[1]: v
        for k, v in _csv_labels(FORMATS / "labels.csv").items()
        if k.startswith("multi-swe-bench-java-sweagent/")
    }
    for traj in trajectories:
        key = str(Path(traj.source.path).relative_to(JAVA))
        assert traj.outcome.status == ("passed" if expected[key] == "pass" else "failed")


def test_mini_swe_agent_runs_use_the_harness_reports() -> None:
    trajectories = [_stub(p) for p in sorted(MINI.glob("trajs/*/*.traj.json"))]
    discover_labels(trajectories)
    report = json.loads((MINI / "sb-cli-report.json").read_bytes())
    for traj in trajectories:
        assert traj.outcome.status == (
            "passed" if traj.task_id in report["resolved_ids"] else "failed"
        )
        assert traj.outcome.source in ("report.json", "sb-cli-report")


def test_sb_cli_report_and_logs_dir_as_explicit_labels() -> None:
    report = json.loads((MINI / "sb-cli-report.json").read_bytes())
    table = load_label_spec(str(MINI / "sb-cli-report.json"))
    assert sum(o.status == "passed" for o in table.by_id.values()) == len(report["resolved_ids"])
    assert sum(o.status == "failed" for o in table.by_id.values()) == len(report["unresolved_ids"])
    logs = load_label_spec(str(JAVA / "20240825_SWE-agent_deepseek-chat-v2" / "logs"))
    assert {o.source for o in logs.by_id.values()} == {"run_instance.log"}
    assert len(logs.by_id) == 5


def test_bench_annotation_csv_by_trajectory_id_outranks_the_file_name() -> None:
    paths = sorted((BENCH / "trajectories").glob("*/*.json"))[:40]
    trajectories = [t for p in paths for t in read_path(p)]
    assert {t.outcome.source for t in trajectories} <= {"file", "file-name"}
    with (BENCH / "annotations" / "trajectories.csv").open() as handle:
        passed = {r["trajectory_id"]: r["passed"] == "True" for r in csv.DictReader(handle)}
    apply_labels(trajectories, [str(BENCH / "annotations" / "trajectories.csv")])
    for traj in trajectories:
        assert traj.outcome.source == "labels:csv"
        assert (traj.outcome.status == "passed") == passed[traj.id]


def test_precedence_order() -> None:
    order = ["labels:csv", "run_instance.log", "results.json", "file", "file-name"]
    ranks = [rank(Outcome(status="passed", source=s)) for s in order]
    assert ranks == sorted(ranks, reverse=True)
    assert len(set(ranks)) == len(ranks)
    assert rank(Outcome(status="unknown", source="labels:csv")) == 0


def test_bad_label_files_raise_a_one_line_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_label_spec(str(tmp_path / "missing.csv"))
    bad = tmp_path / "labels.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(ConfigError, match="label column"):
        load_label_spec(str(bad))
    preds = FORMATS / "mini-swe-agent-fixtures" / "results.json"
    with pytest.raises(ConfigError, match="not a SWE-bench report"):
        load_label_spec(str(preds))


def test_read_paths_labels_real_runs_like_the_curated_csvs() -> None:
    from agentlens.formats import read_paths

    for root in (JAVA, MINI):
        result = read_paths([root])
        assert not result.failures
        expected = _csv_labels(root / "labels.csv")
        assert len(result.trajectories) == len(expected)
        for traj in result.trajectories:
            key = str(Path(traj.source.path).relative_to(root))
            assert traj.outcome.status == ("passed" if expected[key] == "pass" else "failed"), key
        relabelled = read_paths([root], labels=[str(root / "labels.csv")], sidecars=False)
        assert {t.outcome.source for t in relabelled.trajectories} == {"labels:csv"}


def test_run_directory_in_the_csv_key_distinguishes_models() -> None:
    """Each model's run of a task gets its own row, not the first model's (longest suffix wins)."""
    root = DATA / "swe-agent-java"
    result = read_paths_no_sidecars(root)
    apply_labels(result, [str(root / "labels.csv")])
    with (root / "labels.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    expected = {(r["local_path"].split("/")[0], r["task_id"]): r["label"] for r in rows}
    for traj in result:
        run_dir = Path(traj.source.path).parts[-3]
        want = "passed" if expected[(run_dir, traj.task_id)] == "pass" else "failed"
        assert traj.outcome.status == want, traj.source.path


def read_paths_no_sidecars(root: Path) -> list[Trajectory]:
    from agentlens.formats import read_paths

    return read_paths([root], sidecars=False).trajectories


def test_path_keys_with_dot_folders_and_many_decoys_still_match(tmp_path: Path) -> None:
    """Keys are looked up by file name (not scanned); `./` parts and decoy rows for the same file
    name in other run folders must not change which row labels a trajectory."""
    with (JAVA / "labels.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    flipped = {"pass": "fail", "fail": "pass"}
    labels = tmp_path / "labels.csv"
    with labels.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["local_path", "label"])
        for number, row in enumerate(rows):
            task_file = row["local_path"].split("/")[-1]
            writer.writerow([f"other-run-{number}/trajs/{task_file}", flipped[row["label"]]])
            writer.writerow([f"./{row['local_path']}", row["label"]])
        writer.writerows([f"decoy-{n}/trajs/x{n}.traj", "pass"] for n in range(5000))
    trajectories = read_paths_no_sidecars(JAVA)
    assert apply_labels(trajectories, [str(labels)]) == len(rows)
    expected = {r["local_path"]: r["label"] for r in rows}
    for traj in trajectories:
        key = str(Path(traj.source.path).relative_to(JAVA))
        assert traj.outcome.status == ("passed" if expected[key] == "pass" else "failed"), key
