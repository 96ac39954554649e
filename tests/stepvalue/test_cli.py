from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentlens.cli import main
from agentlens.formats import read_path
from agentlens.stepvalue.candidates import outcome_problem
from agentlens.stepvalue.schema import write_asv
from tests.conftest import BENCH, FORMATS

TRACE = sorted((BENCH / "trajectories" / "pallets__flask-5014").glob("*.json"))[0]


def test_unknown_candidate_source_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["stepvalue", str(TRACE), "--candidates", "nonsense", "--evaluator", "x:y"])
    assert code == 2
    assert "--candidates must be one of fault-localisation, outcome" in capsys.readouterr().err


def test_unknown_channel_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["stepvalue", str(TRACE), "--candidates", "outcome", "--evaluator", "x:y"]
    assert main([*argv, "--channels", "direct,telepathy"]) == 2
    assert "unknown channel 'telepathy'" in capsys.readouterr().err
    assert main([*argv, "--slices", "full,vibes"]) == 2
    assert "unknown slice 'vibes'" in capsys.readouterr().err


def test_bad_cost_weights_are_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["stepvalue", str(TRACE), "--candidates", "outcome", "--evaluator", "x:y"]
    assert main([*argv, "--cost-weights", "p=1,q=2"]) == 2
    assert "--cost-weights: 'q=2' is not KEY=NUMBER" in capsys.readouterr().err
    assert main(["stepvalue", "evaluate", *argv[1:], "--lambda", "x"]) == 2
    assert "'x' is not a valid float" in capsys.readouterr().err


@pytest.mark.llm
def test_cli_scores_an_asv_file_in_exact_mode(local_gguf_path: Path, tmp_path: Path) -> None:
    (traj,) = read_path(TRACE)
    asv = tmp_path / "frozen.jsonl"
    write_asv([outcome_problem(traj, max_steps=1)], asv)
    out = tmp_path / "out"
    argv = ["stepvalue", "--candidates", str(asv), "--evaluator", f"llamacpp:{local_gguf_path}"]
    argv += ["--channels", "direct", "-b", "1", "--out", str(out), "--no-cache"]
    assert main([*argv, "--lambda", "2", "--cost-weights", "t=0.25"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["costs"]["scoring_calls"] == 2  # one transition: two states, one permutation
    (row,) = [json.loads(line) for line in (out / "steps.jsonl").read_text().splitlines()]
    assert row["channel"] == "direct" and row["candidates"] == "explicit"
    assert traj.steps[1].kind == "tool"  # the first step scored is one tool call: C = 0.25·1
    assert row["net_asv"] == pytest.approx(row["delta_h"] - 2 * 0.25)
    assert {p.name for p in out.iterdir()} >= {"report.md", "states.jsonl", "channels.csv"}


def test_group_help_lists_both_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stepvalue", "--help"]) == 0
    out = capsys.readouterr().out
    assert "adapt-open-qa" in out and "evaluate" in out
    assert main(["stepvalue", "evaluate", "--help"]) == 0
    assert "--candidates" in capsys.readouterr().out


def test_evaluate_help_groups_its_options_under_headings(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`stepvalue evaluate --help` listed its 25 options as one unsorted list."""
    from agentlens.cli.stepvalue_cmd import EVALUATE_SECTIONS, evaluate_cmd

    assert main(["stepvalue", "evaluate", "--help"]) == 0
    out = capsys.readouterr().out
    headings = [line for line in out.splitlines() if line and not line[0].isspace()]
    assert headings[-len(EVALUATE_SECTIONS) - 1 :] == [
        *(f"{heading}:" for heading in EVALUATE_SECTIONS),
        "Other options:",
    ]
    options = {p.name for p in evaluate_cmd.params if p.param_type_name == "option"}
    named = [name for names in EVALUATE_SECTIONS.values() for name in names]
    assert sorted(named) == sorted(options)  # each option in one section, once
    terms = [line.split()[0] for line in out.splitlines() if line.startswith("  -")]
    assert len(terms) == len(set(terms)) == len(options) + 1  # each shown once, and `--help`


def test_adapt_freezes_a_real_run_into_asv_v1(tmp_path: Path) -> None:
    from agentlens.stepvalue.candidates import explicit_problems

    out = tmp_path / "frozen.asv.jsonl"
    argv = ["stepvalue", "adapt", str(TRACE), "--candidates", "outcome", "-o", str(out)]
    assert main([*argv, "--max-steps", "3"]) == 0
    (problem,) = explicit_problems(out)
    # the bench file name carries the run's verdict: "-pass-" or "-fail-"
    assert problem.gold_id == ("resolved" if "-pass-" in TRACE.name else "not-resolved")
    assert problem.candidate_ids == ["resolved", "not-resolved"]
    assert len(problem.transitions) == 3 and problem.redaction == "span"
    assert '"gold_visible_to_evaluator":false' in out.read_text()


@pytest.mark.llm
def test_failed_evaluator_calls_are_named_and_exit_1(
    local_gguf_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A candidate text longer than the model's context fails every call: the rows stay
    unscored, each distinct error is one `failed:` line and the exit code is 1, not 0."""
    (traj,) = read_path(TRACE)
    asv = tmp_path / "frozen.jsonl"
    write_asv([outcome_problem(traj, max_steps=1)], asv)
    record = json.loads(asv.read_text())
    record["task"]["candidate_space"]["candidates"][1]["text"] = "The run fails. " * 4000
    asv.write_text(json.dumps(record) + "\n")
    out = tmp_path / "out"
    argv = ["stepvalue", "--candidates", str(asv), "--evaluator", f"llamacpp:{local_gguf_path}"]
    assert main([*argv, "--channels", "direct", "-b", "1", "--out", str(out), "--no-cache"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "failed: scoring:" in err and "context" in err
    assert "2 evaluator calls failed" in err
    (row,) = [json.loads(line) for line in (out / "steps.jsonl").read_text().splitlines()]
    assert row["missing"] and row["flags"] == ["missing_labels"]


def test_a_trajectory_without_steps_reports_its_channels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real codex stream with no step: nothing to score, no call, and the report still names
    the channels it was asked for (it said `channels ;`)."""
    stream = FORMATS / "codex" / "jnarowski-agentcmd" / "stream" / "stream-output-multi-1.jsonl"
    labels = tmp_path / "labels.csv"
    labels.write_text("path,label\njnarowski-agentcmd/stream/stream-output-multi-1.jsonl,fail\n")
    out = tmp_path / "out"
    argv = ["stepvalue", str(stream), "--labels", str(labels), "--candidates", "outcome"]
    argv += [
        "--evaluator",
        "llamacpp:/no/such/model.gguf",
        "--channels",
        "direct,extractive-buffer",
    ]
    assert main([*argv, "--out", str(out)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "1 trajectory, 0 transitions, 0 states: 0 evaluator calls" in said  # `1 trajectories`
    assert "; channels direct, extractive-buffer; " in (out / "report.md").read_text()


KEY = "sk-ant-api03-" + "A" * 20 + "b" * 20 + "C9" * 10


class _HostileServer(BaseHTTPRequestHandler):
    """An OpenAI-compatible server that refuses every call with terminal escape codes in its
    error text, and the key it was sent quoted back (failure injection: no real server sends
    these on demand)."""

    def do_POST(self) -> None:
        said = f"bad \x1b[31mRED\x1b]8;;http://x\x07link; key {KEY} refused"
        body = json.dumps({"error": {"message": said}})
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: Any) -> None:
        pass


def test_a_servers_error_text_reaches_the_terminal_without_escape_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (traj,) = read_path(TRACE)
    asv = tmp_path / "frozen.jsonl"
    write_asv([outcome_problem(traj, max_steps=1)], asv)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HostileServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        model = f"openai-compatible:http://127.0.0.1:{server.server_port}/v1#m"
        argv = ["stepvalue", "--candidates", str(asv), "--evaluator", model, "--no-cache"]
        code = main([*argv, "--channels", "direct", "-b", "1", "--out", str(tmp_path / "o")])
    finally:
        server.shutdown()
    err = capsys.readouterr().err
    assert code == 1 and "failed: scoring:" in err and "HTTP 400" in err
    assert "\x1b" not in err and "\x07" not in err and "RED" in err
    assert KEY not in err and "key [REDACTED:" in err  # `say` masks what a server quotes
    report = (tmp_path / "o" / "report.md").read_text()
    assert "HTTP 400" in report and "\x1b" not in report
    assert KEY not in report and KEY not in (tmp_path / "o" / "summary.json").read_text()


def test_a_run_without_a_label_is_one_line_and_the_batch_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Outcome candidates need each run's verdict: a real Gemini CLI session without one is one
    `failed:` line naming it, the labelled run is still frozen, and the exit code is 1."""
    gemini = FORMATS / "gemini-cli" / "session-2025-10-27T19-55-981c87cb.json"
    out = tmp_path / "frozen.asv.jsonl"
    argv = ["stepvalue", "adapt", str(TRACE), str(gemini), "--candidates", "outcome"]
    assert main([*argv, "--max-steps", "2", "-o", str(out)]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"failed: {gemini}: outcome candidates need a pass/fail label" in err
    assert [json.loads(line)["task"]["task_id"] for line in out.read_text().splitlines()] == [
        read_path(TRACE)[0].task_id
    ]
    alone = ["stepvalue", "adapt", str(gemini), "--candidates", "outcome", "-o", str(out)]
    assert main(alone) == 2  # no run left: a usage error


def test_each_summary_line_is_one_line_however_long_its_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A script reads `report: PATH` and the adapt lines from a pipe (80 columns): a long path
    used to be folded onto a second line."""
    deep = tmp_path / ("a-folder-name-long-enough-to-pass-eighty-columns-" * 2)
    deep.mkdir()
    frozen = deep / "frozen.asv.jsonl"
    argv = ["stepvalue", "adapt", str(TRACE), "--candidates", "outcome", "-o", str(frozen)]
    assert main([*argv, "--max-steps", "3"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"1 trajectory -> {frozen} (3 steps)"]
    record = json.loads(frozen.read_text())
    for step in record["steps"]:  # beliefs as an evaluator would have left them
        step["belief_before"] = {"resolved": 0.5, "not-resolved": 0.5}
        step["belief_after"] = {"resolved": 0.6, "not-resolved": 0.4}
    scored = deep / "scored.asv.jsonl"
    scored.write_text(json.dumps(record) + "\n")
    out = deep / "out"
    argv = ["stepvalue", "--candidates", str(scored), "--evaluator", "provided", "--out", str(out)]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "1 trajectory, 3 transitions, scored from the beliefs the file carries "
        "(no evaluator calls)",
        f"report: {out / 'report.md'}",
    ]
