"""`agentlens convert --to hf`: a `datasets` dataset of real runs that loads back with the runs'
messages, ids, outcomes and (with `--scores`) the process scores `cohort --out` wrote."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import orjson
import pytest

from agentlens.cli import main
from agentlens.errors import ConfigError
from agentlens.formats import read_paths
from agentlens.formats.hf_writer import INSTALL_HINT, write_hf
from tests.conftest import DATA, needed

datasets = needed("datasets", "pip install 'agentlens[hf]'")

MINI = DATA / "mini-swe-agent-swebv"
JAVA = DATA / "swe-agent-java"


def test_runs_load_back_with_their_messages(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    assert main(["convert", str(MINI), "--to", "hf", "-o", str(out)]) == 0
    ds = datasets.load_from_disk(str(out))
    trajectories = {t.id: t for t in read_paths([MINI]).trajectories}
    assert ds.num_rows == len(trajectories) == 6
    for row in ds:
        traj = trajectories[row["id"]]
        assert (row["task_id"], row["model"], row["outcome"]) == (
            traj.task_id, traj.model, traj.outcome.status)  # fmt: skip
        assert row["n_steps"] == len(traj.steps) and row["n_tool_calls"] == len(traj.tool_steps)
        calls = [c for m in row["messages"] for c in m["tool_calls"]]
        assert [c["name"] for c in calls] == [s.tool_name for s in traj.tool_steps]
        assert [json.loads(c["arguments"]) for c in calls] == [s.arguments for s in traj.tool_steps]
        results = [m for m in row["messages"] if m["role"] == "tool"]
        assert [m["tool_call_id"] for m in results] == [c["id"] for c in calls]
        assert [m["content"] for m in results] == [s.observation or "" for s in traj.tool_steps]
        plain = [m for m in row["messages"] if m["role"] != "tool" and not m["tool_calls"]]
        assert len(plain) == len(traj.steps) - len(traj.tool_steps)
        assert row["messages"][0]["content"] == traj.steps[0].text
    assert sorted(ds["outcome"]) == ["failed"] * 3 + ["passed"] * 3


def test_scores_from_cohort_rows_become_columns(tmp_path: Path) -> None:
    rows_path = tmp_path / "rows.jsonl"
    assert main(["cohort", str(JAVA), "--boot", "20", "--out", str(rows_path)]) == 0
    rows = {r["trajectory_id"]: r for r in map(orjson.loads, rows_path.read_bytes().splitlines())}
    out = tmp_path / "ds"
    args = ["convert", str(JAVA), "--to", "hf", "-o", str(out), "--scores", str(rows_path)]
    assert main(args) == 0
    ds = datasets.load_from_disk(str(out))
    assert ds.num_rows == 25
    scored = [row for row in ds if row["process_score"] is not None]
    assert len(scored) == len(rows) > 0
    for row in scored:
        mine = rows[row["id"]]
        assert row["process_score"] == pytest.approx(mine["composite"])
        assert row["process_only"] == pytest.approx(mine["composite"] - mine["outcome_term"])
        assert (row["tier"], row["profile"]) == (mine["quality_tier"], mine["profile"])
        assert row["outcome"] == mine["outcome"]
    assert all(r["tier"] is None for r in ds if r["id"] not in rows)


def test_scores_written_as_parquet_join_as_jsonl_do(tmp_path: Path) -> None:
    """`cohort --out rows.parquet` (the README's example) is a `--scores` file too; it was read
    as JSON Lines and refused as "str is not valid UTF-8"."""
    pq = needed("pyarrow.parquet")
    rows_path = tmp_path / "rows.parquet"
    assert main(["cohort", str(JAVA), "--no-tables", "--out", str(rows_path)]) == 0
    rows = {r["trajectory_id"]: r for r in pq.read_table(rows_path).to_pylist()}
    out = tmp_path / "ds"
    args = ["convert", str(JAVA), "--to", "hf", "-o", str(out), "--scores", str(rows_path)]
    assert main(args) == 0
    scored = [r for r in datasets.load_from_disk(str(out)) if r["process_score"] is not None]
    assert len(scored) == len(rows) > 0
    for row in scored:
        assert row["process_score"] == pytest.approx(rows[row["id"]]["composite"])
        assert row["tier"] == rows[row["id"]]["quality_tier"]


def test_a_planted_secret_is_redacted_in_the_export(tmp_path: Path) -> None:
    source = next(MINI.glob("trajs/*/*.traj.json"))
    doc = json.loads(source.read_bytes())
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2
    doc["messages"][1]["content"] += f"\nexport OPENAI_API_KEY={secret}\n"
    planted = tmp_path / "runs" / source.name
    planted.parent.mkdir()
    planted.write_text(json.dumps(doc))
    out = tmp_path / "ds"
    assert main(["convert", str(planted), "--to", "hf", "-o", str(out)]) == 0
    for name in Path(out).glob("*.arrow"):
        assert secret.encode() not in name.read_bytes()
    (row,) = datasets.load_from_disk(str(out))
    assert "[REDACTED:openai-key]" in row["messages"][1]["content"]


def test_an_existing_dataset_needs_force(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    shutil.copytree(MINI, tmp_path / "runs")
    assert main(["convert", str(tmp_path / "runs"), "--to", "hf", "-o", str(out)]) == 0
    assert main(["convert", str(tmp_path / "runs"), "--to", "hf", "-o", str(out)]) == 2
    assert main(["convert", str(tmp_path / "runs"), "--to", "hf", "-o", str(out), "--force"]) == 0


def test_without_datasets_the_error_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)  # failure injection: not installed
    with pytest.raises(ConfigError, match=r"pip install 'agentlens\[hf\]'") as info:
        write_hf(read_paths([MINI]).trajectories, tmp_path, force=False)
    assert str(info.value) == INSTALL_HINT


def test_score_rows_of_other_runs_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_bytes(orjson.dumps({"trajectory_id": "elsewhere/run-1", "composite": 50.0}) + b"\n")
    args = ["convert", str(MINI), "--to", "hf", "-o", str(tmp_path / "ds"), "--scores", str(rows)]
    assert main(args) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "1 of 1 --scores rows match no run read (e.g. elsewhere/run-1)" in err
    assert all(r["process_score"] is None for r in datasets.load_from_disk(str(tmp_path / "ds")))


def test_when_every_file_fails_the_failures_are_reported_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A batch whose every file failed gave `datasets` no row, and it raised `Keys mismatch`:
    `internal error`, exit 3, instead of the failure lines and exit 1."""
    real = DATA / "formats" / "claude-code" / "marot-spotter" / "short.jsonl"
    bad = tmp_path / "short.jsonl"
    bad.write_text(real.read_text().replace('"input_tokens":', '"input_tokens":0.5,"x":', 1))
    out = tmp_path / "ds"
    assert main(["convert", str(bad), "--to", "hf", "-o", str(out)]) == 1
    shown = capsys.readouterr()
    assert "failed: " in shown.err and "no dataset written" in shown.out
    assert not (out / "dataset_info.json").exists()
