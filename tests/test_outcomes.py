from __future__ import annotations

import csv
import json
import re
import shutil
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
    """labels.csv counts the two runs with an empty patch as failed: `--unevaluated failed`."""
    trajectories = _java_trajectories()
    assert len(trajectories) == 25
    assert discover_labels(trajectories, unevaluated="failed") == 25
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
            assert "empty_patch_ids: not evaluated" in (traj.outcome.detail or "")


def test_never_evaluated_runs_are_unknown_by_default() -> None:
    trajectories = _java_trajectories()
    discover_labels(trajectories)
    unknown = [t for t in trajectories if t.outcome.status == "unknown"]
    doubao = JAVA / "20240825_SWE-agent_doubao-pro-128k"
    empty = set(json.loads((doubao / "results" / "results.json").read_bytes())["empty_patch_ids"])
    shipped = {p.stem for p in (doubao / "trajs").glob("*.traj")}
    assert len(unknown) == 2
    assert sorted(t.id for t in unknown) == sorted(shipped & empty)
    assert all("not evaluated" in (t.outcome.detail or "") for t in unknown)


def test_broken_results_json_gives_no_label_to_incomplete_instances() -> None:
    report = JAVA / "20240825_SWE-agent_gpt-4o-mini-2024-07-18" / "results" / "results.json"
    raw = json.loads(report.read_bytes())
    table = load_label_spec(str(report))
    labelled = {task for task, outcome in table.by_id.items() if outcome.status != "unknown"}
    assert labelled == set(raw["resolved"]) | set(raw["unresolved_ids"])
    assert not labelled & set(raw["incomplete_ids"])
    unknown = {task for task, outcome in table.by_id.items() if outcome.status == "unknown"}
    assert set(raw["incomplete_ids"]) - labelled <= unknown


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
        result = read_paths([root], unevaluated="failed")  # the CSVs count empty patches failed
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


RUN_ID, MODEL = "gemini3pro-verified", "gemini__gemini-3-pro-preview"


def _harness_layout(root: Path) -> dict[str, str]:
    """A submission folder as the SWE-bench harness leaves it, from the six real mini-swe-agent
    runs and their real reports: `trajs/`, `logs/run_evaluation/<run_id>/<model>/<id>/report.json`
    and the summary `<model>.<run_id>.json`. Two failing runs are turned into an empty patch and
    an incomplete run (the harness writes no report for them). Returns the expected buckets."""
    buckets: dict[str, str] = {}
    for trace in sorted((MINI / "trajs").glob("*/*.traj.json")):
        task = trace.parent.name
        (root / "trajs" / task).mkdir(parents=True)
        shutil.copy(trace, root / "trajs" / task / trace.name)
        report = json.loads((MINI / "logs" / task / "report.json").read_bytes())
        buckets[task] = "resolved_ids" if report["resolved"] else "unresolved_ids"
    failing = sorted(t for t, b in buckets.items() if b == "unresolved_ids")
    buckets[failing[0]], buckets[failing[1]] = "empty_patch_ids", "incomplete_ids"
    for task, bucket in buckets.items():
        if bucket in ("resolved_ids", "unresolved_ids"):
            target = root / "logs" / "run_evaluation" / RUN_ID / MODEL / task
            target.mkdir(parents=True)  # the harness keys its report by instance id
            report = json.loads((MINI / "logs" / task / "report.json").read_bytes())
            (target / "report.json").write_text(json.dumps({task: report}))
    summary = {
        key: sorted(t for t, b in buckets.items() if b == key) for key in set(buckets.values())
    }
    summary |= {"error_ids": [], "schema_version": 2, "submitted_ids": sorted(buckets)}
    (root / f"{MODEL}.{RUN_ID}.json").write_text(json.dumps(summary))
    return buckets


@pytest.mark.parametrize("unevaluated", ["unknown", "failed"])
def test_harness_layout_outcomes_from_any_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unevaluated: str
) -> None:
    from agentlens.formats import read_paths

    buckets = _harness_layout(tmp_path / "submission")
    expected = {
        "resolved_ids": "passed",
        "unresolved_ids": "failed",
        "empty_patch_ids": unevaluated,
        "incomplete_ids": unevaluated,
    }
    seen = []
    for cwd, spec in ((tmp_path, "submission"), (tmp_path / "submission" / "trajs", ".")):
        monkeypatch.chdir(cwd)
        result = read_paths([spec], unevaluated=unevaluated)  # type: ignore[arg-type]
        got = {t.task_id: t.outcome for t in result.trajectories}
        assert set(got) == set(buckets)
        for task, bucket in buckets.items():
            assert got[task].status == expected[bucket], (cwd, task, bucket)
            if bucket in ("empty_patch_ids", "incomplete_ids"):
                assert got[task].source == "swebench-summary"
                assert "not evaluated" in (got[task].detail or "")
            elif bucket == "resolved_ids":
                assert got[task].source in ("report.json", "swebench-summary")
        seen.append(sorted((t.id, t.outcome.status) for t in result.trajectories))
    assert seen[0] == seen[1]  # ids and outcomes do not depend on the working directory


def test_sb_cli_report_downloads_folder_is_found(tmp_path: Path) -> None:
    from agentlens.formats import read_paths

    run = tmp_path / "20251118_gemini-3-pro"
    for trace in sorted((MINI / "trajs").glob("*/*.traj.json")):
        (run / "trajs" / trace.parent.name).mkdir(parents=True)
        shutil.copy(trace, run / "trajs" / trace.parent.name / trace.name)
    (run / "trajs" / "sb-cli-reports").mkdir()
    shutil.copy(
        MINI / "sb-cli-report.json",
        run / "trajs" / "sb-cli-reports" / "swe-bench_verified__test__run1.json",
    )
    report = json.loads((MINI / "sb-cli-report.json").read_bytes())
    result = read_paths([run])
    for traj in result.trajectories:
        assert traj.outcome.source == "sb-cli-report"
        assert (traj.outcome.status == "passed") == (traj.task_id in report["resolved_ids"])
