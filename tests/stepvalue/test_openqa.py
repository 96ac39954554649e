"""Open-QA task rows (spec §2.2) validated and joined with real trajectories into asv.v1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentlens.cli import main
from agentlens.errors import ConfigError, SchemaError
from agentlens.formats import read_path
from agentlens.stepvalue.openqa import INSUFFICIENCY_TEXT, join, load_tasks
from agentlens.stepvalue.schema import load_asv
from tests.conftest import BENCH, DATA

BENCH_TRACE = sorted((BENCH / "trajectories" / "psf__requests-1724").glob("*.json"))[2]
JAVA_TRACE = (
    DATA
    / "swe-agent-java"
    / "20240825_SWE-agent_gpt-4o-2024-05-13"
    / "trajs"
    / "googlecontainertools__jib-4035.traj"
)


def task_row(trajectory_id: str, **overrides: object) -> dict:
    row = {
        "trajectory_id": trajectory_id,
        "question": "Why does requests raise UnicodeDecodeError for a unicode method name?",
        "category": "diagnostic",
        "candidate_answers": [
            {"id": "method-not-encoded", "text": "The unicode method is not encoded to bytes."},
            {"id": "bad-url", "text": "The URL contains non-ASCII characters."},
            {"id": "file-mode", "text": "The uploaded file is opened in text mode."},
            {"id": "none-of-the-above", "text": INSUFFICIENCY_TEXT},
        ],
        "gold_candidate_id": "method-not-encoded",
        "review": {"status": "approved", "reviewer": "r1", "notes": ""},
    }
    row.update(overrides)
    return row


def write_rows(path: Path, *rows: dict) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


BAD_ROWS = [
    ({"review": {"status": "pending"}}, "review.status is 'pending'"),
    ({"review": None}, "review.status is None"),
    ({"gold_candidate_id": "elsewhere"}, "gold_candidate_id 'elsewhere' is not one of"),
    ({"question": " "}, "question must be a non-empty string"),
]


@pytest.mark.parametrize(("override", "message"), BAD_ROWS)
def test_bad_rows_are_one_line_errors_naming_file_and_line(
    tmp_path: Path, override: dict, message: str
) -> None:
    path = write_rows(tmp_path / "tasks.jsonl", task_row("ok"), task_row("t2", **override))
    with pytest.raises(SchemaError) as caught:
        load_tasks(path)
    assert str(caught.value).startswith(f"{path} [open-qa task]: line 2: ")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def candidates_with(change) -> list[dict]:
    answers = task_row("x")["candidate_answers"]
    change(answers)
    return answers


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        (candidates_with(lambda a: a.pop(1)), "must list 4 answers, found 3"),
        (
            candidates_with(lambda a: a.__setitem__(3, {"id": "none-of-the-above", "text": "?"})),
            "text must be exactly",
        ),
        (
            candidates_with(lambda a: a.__setitem__(3, {"id": "other", "text": "x"})),
            "exactly one candidate must have id 'none-of-the-above'",
        ),
        (
            candidates_with(lambda a: a.__setitem__(0, {"id": "bad-url", "text": "x"})),
            "candidate ids are not unique",
        ),
        (
            candidates_with(lambda a: a.__setitem__(0, {"id": "dup", "text": INSUFFICIENCY_TEXT})),
            "only none-of-the-above may carry",
        ),
    ],
)
def test_candidate_rules(tmp_path: Path, answers: list[dict], message: str) -> None:
    gold = answers[1]["id"]
    path = write_rows(
        tmp_path / "t.jsonl", task_row("x", candidate_answers=answers, gold_candidate_id=gold)
    )
    with pytest.raises(SchemaError, match="line 1: .*" + message.replace("(", r"\(")):
        load_tasks(path)


def test_duplicate_trajectory_rows_are_refused(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "t.jsonl", task_row("same"), task_row("same"))
    with pytest.raises(SchemaError, match="line 2: trajectory_id 'same' already used on line 1"):
        load_tasks(path)


def test_rows_join_real_trajectories_by_id_or_file_name(tmp_path: Path) -> None:
    (bench,) = read_path(BENCH_TRACE)
    (java,) = read_path(JAVA_TRACE)
    rows = [task_row(BENCH_TRACE.stem), task_row(java.id, review={"status": "Accepted"})]
    tasks = load_tasks(write_rows(tmp_path / "t.jsonl", *rows))
    problems, missing = join(tasks, [bench, java], tasks_path="t.jsonl", max_steps=3)
    assert missing == []
    assert [p.trajectory_id for p in problems] == [BENCH_TRACE.stem, java.id]
    assert all(len(p.transitions) == 3 for p in problems)
    assert problems[0].view.insufficiency_id == "none-of-the-above"
    lonely = load_tasks(write_rows(tmp_path / "u.jsonl", task_row("nowhere")))
    with pytest.raises(ConfigError, match=r"u\.jsonl line 1: trajectory 'nowhere' is not among"):
        join(lonely, [bench], tasks_path="u.jsonl")


def test_cli_writes_asv_records_the_evaluate_path_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = json.loads(BENCH_TRACE.read_text())
    tasks = write_rows(tmp_path / "tasks.jsonl", task_row(BENCH_TRACE.stem), task_row("not-given"))
    out = tmp_path / "open.asv.jsonl"
    argv = ["stepvalue", "adapt-open-qa", str(tasks), str(BENCH_TRACE), "-o", str(out)]
    assert main([*argv, "--max-steps", "2"]) == 2
    assert "line 2: trajectory 'not-given' is not among" in capsys.readouterr().err
    assert main([*argv, "--max-steps", "2", "--skip-missing"]) == 0
    assert "1 of 2 task rows" in capsys.readouterr().out
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["schema_version"] == "asv.v1" and record["redaction"] == "span"
    assert record["task"]["category"] == "diagnostic"
    assert record["task"]["candidate_space"]["gold_candidate_id"] == "method-not-encoded"
    meta = raw["states"]["state_2"]["metadata"]
    assert record["steps"][1]["cost"]["prompt_tokens"] == meta["input_tokens"]
    assert record["steps"][1]["cost"]["completion_tokens"] == meta["output_tokens"]
    (problem,) = load_asv(out)
    assert problem.view.insufficiency_id == "none-of-the-above"
    assert problem.redaction == "span" and len(problem.transitions) == 2
    assert problem.transitions[1].cost.tool_calls == 1
    assert problem.notes["category"] == "diagnostic"
