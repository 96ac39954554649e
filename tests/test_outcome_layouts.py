"""Outcomes where harnesses put them: Terminal-Bench and Harbor trial result files, Multi-SWE-bench
harness reports. Each is found from a trace below it, from any working directory."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from agentlens.formats import read_paths
from agentlens.outcomes import apply_labels, load_label_spec
from agentlens.outcomes._multi_swe_bench import dataset_id
from agentlens.outcomes._trial_results import trial_outcome
from tests.conftest import DATA, FORMATS

TB = FORMATS / "terminal-bench-leaderboard"
INDEX = json.loads((TB / "index.json").read_bytes())
CLAUDE = FORMATS / "claude-code/marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
GEMINI = FORMATS / "gemini-cli/session-2025-10-27T19-55-981c87cb.json"
JAVA_RUN = DATA / "swe-agent-java/20240825_SWE-agent_gpt-4o-2024-05-13"
STATUS = {True: "passed", False: "failed", None: "unknown"}


def test_every_terminal_bench_trial_gives_its_index_verdict() -> None:
    assert len(INDEX) == 120
    for entry in INDEX:
        outcome = trial_outcome(TB / entry["dir"])
        assert outcome is not None, entry["dir"]
        assert outcome.status == STATUS[entry["is_resolved"]], entry["dir"]
        assert outcome.source == "trial-results.json"
    unknown = [trial_outcome(TB / e["dir"]) for e in INDEX if e["is_resolved"] is None]
    assert len(unknown) == 5 and all("not evaluated" in (o.detail or "") for o in unknown if o)


def _trial_with_trace(root: Path, entry: dict[str, object], logs: str) -> Path:
    trial = root / str(entry["dir"])
    shutil.copytree(TB / str(entry["dir"]), trial)
    (trial / logs).mkdir()
    shutil.copy(CLAUDE, trial / logs / CLAUDE.name)
    return trial


@pytest.mark.parametrize("resolved", [True, False, None])
def test_a_trace_in_a_terminal_bench_trial_gets_its_verdict_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, resolved: bool | None
) -> None:
    entry = next(e for e in INDEX if e["is_resolved"] is resolved)
    trial = _trial_with_trace(tmp_path / "runs", entry, "agent-logs")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    (traj,) = read_paths([Path("..") / trial.relative_to(tmp_path)]).trajectories
    assert traj.outcome.status == STATUS[resolved]
    assert traj.outcome.detail and str(trial / "results.json") in traj.outcome.detail


def _harbor_trial(root: Path, verifier: object) -> Path:
    trial = root / "jobs/2026-01-01__00-00-00/hello-world__AbC12"
    (trial / "agent").mkdir(parents=True)
    shutil.copy(GEMINI, trial / "agent" / GEMINI.name)
    result = {"task_name": "hello-world", "trial_name": trial.name, "verifier_result": verifier}
    (trial / "result.json").write_text(json.dumps(result))
    return trial


@pytest.mark.parametrize(
    ("verifier", "status"),
    [
        ({"rewards": {"reward": 1.0}}, "passed"),
        ({"rewards": {"reward": 0}}, "failed"),
        (None, "unknown"),
    ],
)
def test_a_trace_in_a_harbor_trial_gets_the_verifier_reward(
    tmp_path: Path, verifier: object, status: str
) -> None:
    trial = _harbor_trial(tmp_path, verifier)
    (traj,) = read_paths([tmp_path / "jobs"]).trajectories
    assert traj.source.format == "gemini-cli"
    assert (traj.outcome.status, traj.outcome.source) == (status, "trial-result.json")
    assert str(trial / "result.json") in (traj.outcome.detail or "")


def _harness_report(results: dict[str, list[str]]) -> dict[str, object]:
    """The real run's buckets as Multi-SWE-bench's harness `FinalReport` writes them."""

    def harness(ids: list[str]) -> list[str]:  # apache__dubbo-10638 -> apache/dubbo:pr-10638
        return [re.sub(r"^(.+?)__(.+)-(\d+)$", r"\1/\2:pr-\3", i) for i in ids]

    buckets = ("resolved_ids", "unresolved_ids", "incomplete_ids", "empty_patch_ids", "error_ids")
    report: dict[str, object] = {b: harness(results.get(b, [])) for b in buckets}
    report["resolved_ids"] = harness(results["resolved"])
    return report


def test_a_multi_swe_bench_final_report_labels_the_runs_like_the_results_file(
    tmp_path: Path,
) -> None:
    results = json.loads((JAVA_RUN / "results/results.json").read_bytes())
    run = tmp_path / "run"
    shutil.copytree(JAVA_RUN / "trajs", run / "trajs")
    (run / "final_report.json").write_text(json.dumps(_harness_report(results)))
    original = {t.task_id: t.outcome for t in read_paths([JAVA_RUN / "trajs"]).trajectories}
    moved = {t.task_id: t.outcome for t in read_paths([run / "trajs"]).trajectories}
    assert moved.keys() == original.keys() and len(moved) == 5
    assert {k: o.status for k, o in moved.items()} == {k: o.status for k, o in original.items()}
    assert all("final_report.json" in (o.detail or "") for o in moved.values() if o.source)
    assert {o.status for o in moved.values()} >= {"passed", "failed"}


def test_a_multi_swe_bench_instance_report(tmp_path: Path) -> None:
    report = {"org": "apache", "repo": "dubbo", "number": 10638, "valid": False,
              "error_msg": "No fix for failed test", "fix_patch_result": {}}  # fmt: skip
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    (outcome,) = load_label_spec(str(path)).by_id.values()
    assert load_label_spec(str(path)).by_id.keys() == {"apache__dubbo-10638"}
    assert outcome.status == "failed" and "No fix for failed test" in (outcome.detail or "")
    path.write_text(json.dumps(report | {"valid": True}))
    assert load_label_spec(str(path)).by_id["apache__dubbo-10638"].status == "passed"


def test_a_key_in_a_harness_error_message_never_reaches_the_outcome(tmp_path: Path) -> None:
    """A sidecar is read after the trace was redacted: a Multi-SWE-bench report's `error_msg`
    (a registry URL with its password, a token) went into the outcome's detail as written, so
    into `inspect --json`, every export and the store; and it was cut to 120 characters first,
    leaving a token's head too short for any detector. Found or named, the detail is masked."""
    password, token = "Pa55w0rdRegistry", "ghp_Zq8rT2vWx9yB4nM6kL1pQ3sD5fG7hJ0aC2eR"
    said = f"docker pull https://ci:{password}@registry.example.com/v2/ failed;"
    report = {"org": "fasterxml", "repo": "jackson-core", "number": 1142, "valid": False,
              "fix_patch_result": {}, "error_msg": f"{said}{' ' * (106 - len(said))}{token}"}  # fmt: skip
    run = tmp_path / "run"
    (run / "trajs").mkdir(parents=True)
    shutil.copy(JAVA_RUN / "trajs/fasterxml__jackson-core-1142.traj", run / "trajs")
    logs = run / "logs/fasterxml__jackson-core-1142"
    logs.mkdir(parents=True)
    (logs / "report.json").write_text(json.dumps(report))
    (found,) = read_paths([run / "trajs"]).trajectories
    (named,) = read_paths([run / "trajs"]).trajectories
    apply_labels([named], [str(logs / "report.json")])
    for outcome in (found.outcome, named.outcome):
        assert outcome.status == "failed" and "[REDACTED:" in (outcome.detail or "")
        assert password not in (outcome.detail or "") and token[4:12] not in (outcome.detail or "")


def test_harness_ids_become_dataset_ids() -> None:
    assert dataset_id("fasterxml/jackson-core:pr-1142") == "fasterxml__jackson-core-1142"
    assert dataset_id("fasterxml__jackson-core-1142") == "fasterxml__jackson-core-1142"


def test_a_trial_file_given_as_labels_labels_by_trial_and_task() -> None:
    entry = next(e for e in INDEX if e["is_resolved"] is False)
    table = load_label_spec(str(TB / entry["dir"] / "results.json"))
    trial_name = Path(entry["dir"]).name
    assert table.by_id.keys() == {trial_name, entry["task_id"]}
    assert {o.status for o in table.by_id.values()} == {"failed"}
