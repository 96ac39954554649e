"""`agentlens compare` is a CI gate: it must not pass on inputs it could not read."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import BENCH, DATA

TASK = BENCH / "trajectories" / "psf__requests-1724"


def test_a_run_with_no_readable_trajectory_is_an_error(run_cli: Callable[..., object]) -> None:
    readme = DATA / "README.md"  # a real file, but not a trace
    result = run_cli("compare", str(TASK), str(readme))
    assert result.code == 2  # type: ignore[attr-defined]
    assert f"{readme}: no trajectories read" in result.err  # type: ignore[attr-defined]
    assert "Status: ok" not in result.out  # type: ignore[attr-defined]


def test_unreadable_files_are_listed_and_never_exit_0(
    run_cli: Callable[..., object], tmp_path: Path
) -> None:
    runs = sorted(TASK.glob("*.json"))
    for path in runs:
        shutil.copy(path, tmp_path / path.name)
    broken = tmp_path / runs[0].name
    broken.write_bytes(runs[0].read_bytes()[:100])  # truncated
    same = run_cli("compare", str(TASK), str(TASK))
    assert same.code == 0  # type: ignore[attr-defined]
    result = run_cli("compare", str(TASK), str(tmp_path))
    assert result.code >= 1  # type: ignore[attr-defined]
    assert f"failed: {broken}" in result.err  # type: ignore[attr-defined]


def test_a_terminal_gets_a_table_and_a_pipe_gets_markdown(run_cli: Callable[..., object]) -> None:
    a, b = str(TASK / "*gpt-4.1-*"), str(TASK / "*gpt-5.3-codex-*")
    command = [sys.executable, "-m", "agentlens", "compare", a, b]
    # the figures to find in the two outputs; only those need a process with a pipe or a terminal
    doc = json.loads(run_cli("compare", a, b, "--json").out)  # type: ignore[attr-defined]
    piped = subprocess.run(command, capture_output=True, text=True)
    assert piped.stdout.startswith("# Run comparison") and "| check | test |" in piped.stdout
    terminal = os.environ | {"TTY_COMPATIBLE": "1", "FORCE_COLOR": "1", "COLUMNS": "250"}
    shown = subprocess.run(command, capture_output=True, text=True, env=terminal).stdout
    plain = re.sub(r"\x1b\[[0-9;]*m", "", shown)
    assert plain.splitlines()[0].endswith(f"{doc['status']} (exit code {doc['exit_code']})")
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in plain.splitlines()]
    rows = [r for r in rows if len(r) == 8 and r[0] != "check"]
    assert [r[0] for r in rows] == [c["name"] for c in doc["checks"]]
    flags = {"ALERT" if c["alert"] else "warning" if c["warning"] else "ok" for c in doc["checks"]}
    assert {r[6] for r in rows} == flags
    assert "#" not in plain.splitlines()[0] and "|---|" not in plain


def test_a_verify_or_reviews_file_for_one_run_only_is_refused(
    run_cli: Callable[..., object], tmp_path: Path
) -> None:
    """With `--a-verify` alone the formal check used to vanish and the gate said ok: a pass
    rate that fell to 0 in run B went unflagged. Such a half-given pair is a usage error."""
    verify = tmp_path / "verify.json"
    result = {"scenario": "s", "formal_verification_result": 1, "verifier_results": []}
    verify.write_text(json.dumps({"kind": "agentlens.verify/1", "results": [result]}))
    for option in ("--a-verify", "--b-verify"):
        refused = run_cli("compare", str(TASK), str(TASK), option, str(verify))
        assert refused.code == 2  # type: ignore[attr-defined]
        assert "--a-verify and --b-verify" in refused.err  # type: ignore[attr-defined]
        assert "Status" not in refused.out  # type: ignore[attr-defined]
    both = run_cli(
        "compare", str(TASK), str(TASK), "--a-verify", str(verify), "--b-verify", str(verify)
    )
    assert both.code == 0, both.err  # type: ignore[attr-defined]
    reviews = run_cli("compare", str(TASK), str(TASK), "--b-reviews", str(verify))
    assert reviews.code == 2 and "--a-reviews and --b-reviews" in reviews.err  # type: ignore[attr-defined]


def test_an_sxs_file_of_the_runs_in_the_other_order_is_refused(
    run_cli: Callable[..., object], tmp_path: Path
) -> None:
    """`sxs B A` scores are negative where B is better: read as the SxS of `compare A B`, its
    flags (asymmetric: warning at ≤ −0.2 or ≥ 0.3) would be judged the wrong way round."""
    a, b = str(TASK / "*gpt-4.1-*"), str(TASK / "*gpt-5.3-codex-*")
    dims = {"ToolCalls": {"mean_score": -0.3, "p_value": 0.5, "warning": True, "cells": []}}
    sxs = tmp_path / "sxs.json"
    sxs.write_text(
        json.dumps({"kind": "agentlens.sxs/1", "run_a": b, "run_b": a, "dimensions": dims})
    )
    swapped = run_cli("compare", a, b, "--sxs", str(sxs))
    assert swapped.code == 2  # type: ignore[attr-defined]
    assert "the other way round" in swapped.err  # type: ignore[attr-defined]
    sxs.write_text(
        json.dumps({"kind": "agentlens.sxs/1", "run_a": a, "run_b": b, "dimensions": dims})
    )
    ordered = run_cli("compare", a, b, "--sxs", str(sxs), "--json")
    assert "SxS: ToolCalls" in ordered.out, ordered.err  # type: ignore[attr-defined]


def test_trace_text_in_the_compare_markdown_is_shown_not_rendered(
    run_cli: Callable[..., object], tmp_path: Path
) -> None:
    """A tool name is trace text, and the Markdown goes into a PR comment or
    $GITHUB_STEP_SUMMARY: an image tag there fetched a URL, a `|` or newline broke the table."""
    session = DATA / "formats" / "gemini-cli" / "session-2025-10-27T19-55-981c87cb.json"
    hostile = '<img src="https://example.invalid/t.png"> | x\n| forged | row'
    doc = json.loads(session.read_text())
    for message in doc["messages"]:
        for call in message.get("toolCalls") or []:
            if call.get("name") == "read_file":
                call["name"] = hostile
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / session.name).write_text(json.dumps(doc))
    md = tmp_path / "c.md"
    run_cli("compare", str(session), str(tmp_path / "b"), "--md", str(md))
    lines = md.read_text().splitlines()
    assert "<img" not in md.read_text() and "&lt;img" in md.read_text()
    table = [line for line in lines if line.startswith("|")]
    assert all(line.count(" | ") == 7 for line in table[2:]), table  # 8 cells, none split
    assert not any(line.startswith("| forged") for line in lines)


def test_the_report_says_files_were_left_unread(
    run_cli: Callable[..., object], tmp_path: Path
) -> None:
    """The exit code was 1 for an unreadable file while the report (the --md a CI job posts)
    read "Status: ok (exit code 0)": the report now has the row that explains the 1."""
    runs = sorted(TASK.glob("*.json"))
    for path in runs:
        shutil.copy(path, tmp_path / path.name)
    (tmp_path / runs[0].name).write_bytes(runs[0].read_bytes()[:100])
    md = tmp_path / "c.md"
    result = run_cli("compare", str(TASK), str(tmp_path), "--md", str(md), "--json")
    doc = json.loads(result.out)  # type: ignore[attr-defined]
    assert result.code == doc["exit_code"] >= 1  # type: ignore[attr-defined]
    (row,) = [c for c in doc["checks"] if c["name"] == "inputs"]
    assert row["warning"] and row["reason"] == "run 2: 1 file could not be read (named on stderr)"
    assert f"exit code {doc['exit_code']}" in md.read_text() and "| inputs |" in md.read_text()
