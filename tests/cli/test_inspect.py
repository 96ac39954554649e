from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.conftest import BENCH, FORMATS

TASK = "psf__requests-1724"


def test_glob_and_json_lines_match_the_files(run_cli: Callable[..., object]) -> None:
    pattern = str(BENCH / "trajectories" / TASK / "*-pass-*.json")
    expected = sorted(str(p) for p in (BENCH / "trajectories" / TASK).glob("*-pass-*.json"))
    result = run_cli("inspect", "--json", pattern)
    assert result.code == 0  # type: ignore[attr-defined]
    rows = [json.loads(line) for line in result.out.splitlines()]  # type: ignore[attr-defined]
    assert sorted(r["path"] for r in rows) == expected
    assert {r["outcome"] for r in rows} == {"passed"}
    for row in rows:
        raw = json.loads(Path(row["path"]).read_bytes())
        assert row["tool_calls"] == len(raw["states"]) - 1


def test_directory_walk_skips_sidecars_and_labels_outcomes(run_cli: Callable[..., object]) -> None:
    gemini = FORMATS / "gemini-cli"
    result = run_cli("inspect", "--json", str(gemini))
    assert result.code == 0  # type: ignore[attr-defined]
    (row,) = [json.loads(line) for line in result.out.splitlines()]  # type: ignore[attr-defined]
    assert row["format"] == "gemini-cli"


def test_explicit_labels_show_their_source(run_cli: Callable[..., object]) -> None:
    task_dir = BENCH / "trajectories" / TASK
    labels = BENCH / "annotations" / "trajectories.csv"
    result = run_cli("inspect", "--json", "--labels", str(labels), str(task_dir))
    rows = [json.loads(line) for line in result.out.splitlines()]  # type: ignore[attr-defined]
    assert len(rows) == len(list(task_dir.glob("*.json")))
    assert {r["outcome_source"] for r in rows} == {"labels:csv"}


def test_missing_labels_file_is_a_one_line_error(run_cli: Callable[..., object]) -> None:
    result = run_cli("inspect", "--labels", "/nonexistent/labels.csv", str(BENCH / "trajectories"))
    assert result.code == 2  # type: ignore[attr-defined]
    assert result.err.strip().splitlines() == [  # type: ignore[attr-defined]
        "error: --labels /nonexistent/labels.csv: no such file or directory"
    ]


def test_a_glob_matching_nothing_is_a_failure(run_cli: Callable[..., object]) -> None:
    result = run_cli("inspect", "--json", "/nonexistent/dir/*.json", str(FORMATS / "gemini-cli"))
    assert result.code == 1  # type: ignore[attr-defined]
    assert "failed: /nonexistent/dir/*.json [format unknown]: no file matches this pattern" in (
        result.err  # type: ignore[attr-defined]
    )
    assert len(result.out.splitlines()) == 1  # type: ignore[attr-defined]


def test_forced_format(run_cli: Callable[..., object]) -> None:
    gemini = str(FORMATS / "gemini-cli")
    assert run_cli("inspect", "--format", "gemini-cli", "--json", gemini).code == 0  # type: ignore[attr-defined]
    wrong = run_cli("inspect", "--format", "atif", gemini)
    assert wrong.code == 1  # type: ignore[attr-defined]
    assert "[atif]" in wrong.err  # type: ignore[attr-defined]
    unknown = run_cli("inspect", "--format", "nosuch", gemini)
    assert unknown.code == 2  # type: ignore[attr-defined]
    assert "unknown format 'nosuch'" in unknown.err  # type: ignore[attr-defined]


def test_a_broken_sub_agent_file_is_a_warning_naming_it(
    run_cli: Callable[..., object], tmp_path: Path
) -> None:
    claude = FORMATS / "claude-code/marot-spotter"
    main = tmp_path / "session.jsonl"
    main.write_bytes((claude / "short.jsonl").read_bytes())
    sub = tmp_path / "session/subagents/agent-broken.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_bytes(b"\xff\xfe not json at all\n")
    result = run_cli("inspect", str(main))
    assert result.code == 0  # type: ignore[attr-defined]  # the session itself was read
    warnings = [line for line in result.err.splitlines() if line.startswith("warning:")]  # type: ignore[attr-defined]
    assert len(warnings) == 1 and str(sub) in warnings[0], result.err  # type: ignore[attr-defined]
