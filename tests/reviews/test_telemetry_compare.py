"""Telemetry on real AgentLens-Bench traces (expected values computed from the raw JSON here),
and the run-vs-run comparison rules, checked against scipy and hand-computed values."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime

import pytest
from scipy import stats

from agentlens.formats.load import read_path
from agentlens.formats.stream import read_paths
from agentlens.reviews.compare import (
    RunSummary,
    compare_runs,
    fisher,
    mann_whitney,
    ratio_check,
    telemetry_checks,
    termination_check,
    tool_success_checks,
)
from agentlens.reviews.markdown import compare_markdown
from agentlens.reviews.telemetry import RunTelemetry, trajectory_telemetry
from tests.conftest import BENCH, DATA

TASK = BENCH / "trajectories" / "psf__requests-1724"
PYDICOM = (
    "tests__gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1__"
    "pydicom__pydicom-1458.traj"
)


def test_trajectory_telemetry_matches_raw_json() -> None:
    path = sorted(TASK.glob("*.json"))[0]
    raw = json.loads(path.read_text())
    states = [s for k, s in raw["states"].items() if k != raw["initial_state"]]
    tools = Counter(s["tool_used"] for s in states)
    meta = [s.get("metadata") or {} for s in states]
    stamps = sorted(datetime.fromisoformat(m["timestamp"]) for m in meta if m.get("timestamp"))
    tel = trajectory_telemetry(read_path(path)[0])
    assert tel.tool_calls == len(states)
    assert {k: v[1] for k, v in tel.tools.items()} == dict(tools)
    assert tel.prompt_tokens == sum(m.get("input_tokens") or 0 for m in meta)
    assert tel.completion_tokens == sum(m.get("output_tokens") or 0 for m in meta)
    assert tel.cached_tokens == sum(m.get("cached_input_tokens") or 0 for m in meta)
    assert tel.time_s == pytest.approx((stamps[-1] - stamps[0]).total_seconds())
    assert tel.parallel_mean == 1.0  # one tool call per model response in this format


def test_run_telemetry_report_fields() -> None:
    run = RunTelemetry.of(read_paths([TASK]).trajectories)
    doc = run.to_dict()
    assert doc["trajectories"] == len(list(TASK.glob("*.json")))
    rates = doc["tool_call_success_rates"]
    keys = list(rates)
    fail_share = [
        (int(t) - int(s) + 1) / (int(t) + 2) for s, t in (rates[k].split("/") for k in keys)
    ]
    assert fail_share == sorted(fail_share, reverse=True)  # worst first
    assert doc["cache_hit_ratio"] == round(doc["cached_tokens"] / doc["prompt_tokens"], 4)
    assert doc["tools_calls_total"] == sum(int(v.split("/")[1]) for v in rates.values())
    assert set(doc["agent_time_s"]["chat"]) == {"total", "q10", "q50", "q80", "q100"}


def test_statistics_match_scipy_and_hand_values() -> None:
    x, y = [1.0, 2.0, 3.5, 4.0, 9.0], [5.0, 6.0, 7.5, 8.0, 10.0, 11.0]
    assert mann_whitney(x, y) == round(stats.mannwhitneyu(x, y, alternative="two-sided").pvalue, 4)
    assert mann_whitney([], y) == 1.0
    # 2x2 [[8, 2], [3, 7]]: two-sided hypergeometric p = 0.06978 (by hand: sum of the tables no more likely than the observed one)
    assert fisher(8, 3, 10) == 0.06978


def test_ratio_policy() -> None:
    ok = ratio_check("x", "t", 100, 110, (0.8, 1.3), (0.5, 2.0), p=0.5)
    assert (ok.ratio, ok.warning, ok.alert) == (1.1, False, False)
    warn = ratio_check("x", "t", 100, 140, (0.8, 1.3), (0.5, 2.0), p=0.5)
    assert (warn.warning, warn.alert) == (True, False)
    alert = ratio_check("x", "t", 100, 210, (0.8, 1.3), (0.5, 2.0))
    assert (alert.warning, alert.alert) == (True, True)
    significant = ratio_check("x", "t", 100, 100, (0.8, 1.3), (0.5, 2.0), p=0.01)
    assert (significant.warning, significant.alert) == (True, True)


def test_a_ratio_against_zero_says_run_1_is_zero_not_a_nine_digit_figure() -> None:
    """A Lucky rate of 0.75 against 0 read `ratio 750000001.000`: the spec's 1e-9 at work."""
    check = ratio_check("lucky", "fisher", 0.0, 0.75, (0.8, 1.3), (0.5, 2.0), p=0.14)
    assert check.reason.startswith("ratio 7.5e+08 (run 1 is 0) (warn outside")
    assert check.ratio == round((0.75 + 1e-9) / 1e-9, 4) and check.alert  # the spec's value kept


def test_per_tool_rules() -> None:
    checks = {
        c.name: c
        for c in tool_success_checks(
            {"edit": "19/20", "read": "10/10", "grep": "5/5", "new": "0/0"},
            {"edit": "14/20", "read": "3/3", "grep": "3/5", "new": "9/9", "gone": "0/0"},
        )
    }
    edit = checks["tool success: edit"]  # t2 = 20: rel 0.7/0.95 = 0.737 < 0.8 -> alert
    assert (edit.warning, edit.alert) == (True, True)
    assert not checks["tool success: read"].warning  # t2 ≤ 3: no flags
    grep = checks["tool success: grep"]  # t2 = 5 < 10: rel 0.6 < 0.7 warn, ≥ 0.4 no alert
    assert (grep.warning, grep.alert) == (True, False)
    assert not checks["tool success: new"].warning  # t1 = 0: no relative check


def test_termination_rule() -> None:
    from agentlens.reviews.telemetry import TrajectoryTelemetry

    def run(reasons: list[str]) -> RunTelemetry:
        return RunTelemetry(
            [
                TrajectoryTelemetry("t", None, [], None, None, 0, 0, 0, 0, {}, 0, r, None)
                for r in reasons
            ]
        )

    same = termination_check(run(["done"] * 10), run(["done"] * 9 + ["timeout"]))
    # union = 10 + 1 = 11, diff = 1 + 1 = 2: warn needs ≥ 4.2
    assert same.warning is False and same.reason.startswith("diff 2 vs union 11")
    # the columns are "run 1" / "run 2": union and diff are neither run's value
    assert (same.v1, same.v2) == (None, None)
    shifted = termination_check(run(["done"] * 10), run(["done"] * 4 + ["timeout"] * 6))
    # union 16, diff 12: warn ≥ 5.2, alert ≥ 7
    assert (shifted.warning, shifted.alert) == (True, True)
    # spec §11.2: the common counts and each run's extra counts per reason
    assert "both: done 4; only run 1: done 6; only run 2: timeout 6" in shifted.reason
    # a run with no extra reason reads "none", not an empty dict
    assert "both: done 9; only run 1: done 1; only run 2: timeout 1" in same.reason
    alike = termination_check(run(["done"] * 3), run(["done"] * 3))
    assert "both: done 3; only run 1: none; only run 2: none" in alike.reason
    apart = termination_check(run(["done"] * 3), run(["timeout"] * 3))
    assert "both: none; only run 1: done 3; only run 2: timeout 3" in apart.reason


def test_compare_real_runs_with_formal_and_exit_code() -> None:
    trajs = read_paths([BENCH / "trajectories"]).trajectories
    a = [t for t in trajs if t.model == "gpt-4.1"]
    b = [t for t in trajs if t.model == "sonnet-4.5"]
    f1 = [int(t.outcome.status == "passed") for t in a]
    f2 = [int(t.outcome.status == "passed") for t in b]
    result = compare_runs(
        RunSummary("gpt-4.1", RunTelemetry.of(a), formal=f1),
        RunSummary("sonnet-4.5", RunTelemetry.of(b), formal=f2),
    )
    formal = next(c for c in result.checks if c.name == "formal verification")
    n = len(a)
    expected_p = round(stats.fisher_exact([[sum(f1), n - sum(f1)], [sum(f2), n - sum(f2)]])[1], 5)
    assert (formal.v1, formal.v2, formal.p_value) == (sum(f1), sum(f2), expected_p)
    expected_code = (
        2
        if any(c.alert for c in result.checks)
        else 1
        if any(c.warning for c in result.checks)
        else 0
    )
    assert result.exit_code == expected_code
    md = compare_markdown(result.to_dict())
    assert md.startswith("# Run comparison") and "formal verification" in md
    same = compare_runs(
        RunSummary("a", RunTelemetry.of(a), formal=f1),
        RunSummary("a", RunTelemetry.of(a), formal=f1),
    )
    assert same.exit_code == 0


def test_per_tool_upper_alert_bound_default_and_released_profile() -> None:
    """Decision §13.10 on real runs (django__django-11066): gemini-2.5-pro as anchor, opus-4.5
    as the new run. The new run's run_in_terminal rate is far higher; with t2 ≥ 20 (warn 0.9,
    alert 0.8) the released code alerts above 1.2/0.9 = 1.333, the default above 1.2/0.8 = 1.5."""
    trajs = read_paths([BENCH / "trajectories" / "django__django-11066"]).trajectories
    s1 = RunTelemetry.of([t for t in trajs if t.model == "gemini-2.5-pro"]).tool_success()
    s2 = RunTelemetry.of([t for t in trajs if t.model == "opus-4.5"]).tool_success()
    ok1, n1 = map(int, s1["run_in_terminal"].split("/"))
    ok2, n2 = map(int, s2["run_in_terminal"].split("/"))
    rel = (ok2 / n2) / (ok1 / n1)
    assert n2 >= 20 and 1.2 / 0.9 < rel <= 1.2 / 0.8  # the band where the two bounds differ
    name = "tool success: run_in_terminal"
    default = {c.name: c for c in tool_success_checks(s1, s2)}[name]
    released = {c.name: c for c in tool_success_checks(s1, s2, "released")}[name]
    assert (default.warning, default.alert) == (True, False)
    assert (released.warning, released.alert) == (True, True)


def test_agent_time_excludes_the_users_reply_time() -> None:
    """Spec §11.1 `agent_time`: per-response times summed per chat. A real Claude Code session
    with 10 user messages: agent time is, per block of agent steps, the block's last timestamp
    minus the timestamp just before it (the user's message), summed; the user's time to reply
    (the wall-clock span counted it) is left out."""
    from tests.conftest import FORMATS

    traj = read_path(FORMATS / "claude-code" / "jnarowski-agentcmd" / "full-session-two.jsonl")[0]
    expected, block_start, block_end = 0.0, None, None
    previous = None
    for step in traj.steps:
        if step.kind in ("user", "system"):
            if block_start is not None and block_end is not None:
                expected += (block_end - block_start).total_seconds()
            block_start = block_end = None
        else:
            if block_start is None:
                block_start = previous
            block_end = step.timestamp or block_end
        previous = step.timestamp or previous
    if block_start is not None and block_end is not None:
        expected += (block_end - block_start).total_seconds()
    stamps = [s.timestamp for s in traj.steps if s.timestamp is not None]
    span = (stamps[-1] - stamps[0]).total_seconds()
    tel = trajectory_telemetry(traj)
    assert tel.time_s == pytest.approx(expected)
    assert span - expected > 60  # minutes of user time are no longer agent time


def test_parallel_tool_calls_are_pooled_over_responses() -> None:
    """Spec §11.1 `tool_calls_in_parallel_mean`: mean calls per tool-calling response over the
    run's responses (the released report pools them), not a mean of per-chat means."""
    from tests.conftest import FORMATS

    trajs = read_paths([FORMATS / "claude-code"]).trajectories
    per_response: list[int] = []
    for traj in trajs:
        calls = Counter(s.turn for s in traj.tool_steps if s.turn is not None)
        calls.update(("own", s.index) for s in traj.tool_steps if s.turn is None)
        per_response += list(calls.values())
    expected = sum(per_response) / len(per_response)
    run = RunTelemetry.of(trajs)
    assert run.parallel_mean() == pytest.approx(expected)
    assert run.to_dict()["tool_calls_in_parallel_mean"] == round(expected, 3)
    chat_means = [t.parallel_mean for t in run.trajectories if t.parallel_mean is not None]
    assert abs(sum(chat_means) / len(chat_means) - expected) > 0.1  # the old mean of means


def test_tool_success_ties_put_the_busier_tool_first() -> None:
    """(fail + 1) / (total + 2) ties between 0 of 2 failed and 1 of 6 failed (both 1/4): the
    released report breaks the tie by more calls first."""
    from agentlens.reviews.telemetry import TrajectoryTelemetry

    tools = {"aaa": [2, 2], "zzz": [5, 6], "bad": [0, 1]}
    run = RunTelemetry(
        [TrajectoryTelemetry("t", None, [], None, None, 0, 0, 0, 9, tools, 0, "x", None)]
    )
    assert list(run.tool_success().items()) == [("bad", "0/1"), ("zzz", "5/6"), ("aaa", "2/2")]


def test_run_metadata_counts_models_from_the_file_names() -> None:
    """Spec §11.1 run metadata: trajectories per model (the dev-set file names carry the model)."""
    import re

    files = sorted(TASK.glob("*.json"))
    expected = Counter(re.search(r"-logs-(.+?)-(?:pass|fail)-", p.name)[1] for p in files)
    meta = RunTelemetry.of(read_paths([TASK]).trajectories).to_dict()["run_metadata"]
    assert meta["models"] == dict(sorted(expected.items()))
    assert sum(meta["formats"].values()) == len(files)


def test_swe_agent_tokens_are_its_model_stats_not_zero() -> None:
    """SWE-agent steps carry no usage; a run compared on tokens must use `info.model_stats`
    (with 0 there, `compare` raised a false generation-token alert)."""
    from tests.conftest import DATA

    path = sorted((DATA / "swe-agent-java").rglob("*.traj"))[0]
    (traj,) = read_path(path)
    stats = json.loads(path.read_text())["info"]["model_stats"]
    telemetry = trajectory_telemetry(traj)
    assert (telemetry.prompt_tokens, telemetry.completion_tokens) == (
        stats["tokens_sent"],
        stats["tokens_received"],
    )


def test_a_value_only_one_run_records_warns() -> None:
    """Real runs: a SWE-agent run records its price and no times, a Gemini CLI session its
    times and no price. A gate must not read "ok" for a figure it could not compare."""
    swe = read_path(DATA / "formats" / "swe-agent" / PYDICOM)
    gemini = read_paths([DATA / "formats" / "gemini-cli"]).trajectories
    checks = {c.name: c for c in telemetry_checks(RunTelemetry.of(swe), RunTelemetry.of(gemini))}
    assert checks["price"].v1 is not None and checks["price"].v2 is None
    assert checks["price"].warning and not checks["price"].alert
    assert checks["price"].reason == "recorded in run 1 only: nothing to compare it with"
    assert checks["time"].warning and checks["time"].reason.startswith("recorded in run 2 only")
    neither = ratio_check("price", "t", None, None, (0.9, 1.2), (0.66, 1.5))
    assert not neither.warning and neither.reason == "recorded in neither run"


def test_a_clock_that_goes_back_gives_no_negative_time() -> None:
    """The last call of this real Claude Code log is stamped an hour before the message it
    answers: its response time is unknown, not -3690 s (which made the run's agent time
    -3590 s and its throughput negative)."""
    (traj,) = read_path(
        DATA / "formats" / "claude-code" / "daaain-claude-code-log" / "edge_cases.jsonl"
    )
    telemetry = trajectory_telemetry(traj)
    times = [t.time_s for t in telemetry.turns]
    assert times == [30.0, 30.0, 40.0, None]  # each from the step before it
    assert telemetry.time_s == 100.0 and telemetry.throughput and telemetry.throughput > 0


def test_a_run_that_records_no_tokens_is_not_a_run_of_zero_tokens() -> None:
    """A Grok CLI session folder carries no billed tokens. Against a run that does, generation
    tokens and throughput used to be 0 for it: an alert for a collapse that never happened."""
    anchor = read_paths([TASK]).trajectories
    grok = read_paths([DATA / "formats" / "grok-cli"]).trajectories
    assert grok[0].usage_known() is None
    checks = {c.name: c for c in telemetry_checks(RunTelemetry.of(anchor), RunTelemetry.of(grok))}
    for name in ("generation tokens", "throughput"):
        assert checks[name].v2 is None and not checks[name].alert, checks[name]
        assert checks[name].reason.startswith("recorded in run 1 only")
    unknown = trajectory_telemetry(grok[0])
    assert (unknown.prompt_tokens, unknown.completion_tokens, unknown.cached_tokens) == (None,) * 3
    assert unknown.throughput is None
    assert (
        trajectory_telemetry(anchor[0]).completion_tokens
        == anchor[0].usage_total().completion_tokens
    )


def test_the_token_rate_counts_the_time_of_runs_that_record_tokens_only() -> None:
    """A Grok CLI session records no tokens but has agent time: pooled with runs that record
    both, its seconds divided their tokens (gen tokens / s of every run), lowering the rate."""
    grok = read_paths([DATA / "formats" / "grok-cli"]).trajectories
    runs = read_paths([TASK]).trajectories
    silent = [trajectory_telemetry(t) for t in grok]
    assert all(t.completion_tokens is None and t.time_s for t in silent)
    alone = RunTelemetry.of(runs).to_dict()["gen_tokens_to_seconds_ratio"]
    pooled = RunTelemetry.of([*runs, *grok]).to_dict()
    assert pooled["gen_tokens_to_seconds_ratio"] == alone
    assert (
        pooled["agent_time_s"]["chat"]["total"]
        > RunTelemetry.of(runs).to_dict()["agent_time_s"]["chat"]["total"]
    )  # the silent run's time is still the run's time


def test_a_tool_result_that_is_a_diff_is_no_failure_for_the_code_it_shows() -> None:
    """SWE-agent's `submit` answers with the patch: 8 of the 17 in swe-agent-java counted as
    failed calls because the Java they show says `throws Exception` (the error markers are
    inferred from the output where the format has no error flag), so telemetry gave `submit
    3/5` and compare could flag a tool-success drop that never happened."""
    runs = read_paths([DATA / "swe-agent-java"]).trajectories
    submits = [0, 0]
    for traj in runs:
        ok, calls = trajectory_telemetry(traj).tools.get("submit", [0, 0])
        submits = [submits[0] + ok, submits[1] + calls]
    assert submits == [18, 18]  # one answered with nothing, 17 with the patch
    failing = next(
        t for t in runs if t.id.endswith("deepseek-coder-v2/fasterxml__jackson-databind-4486")
    )
    assert trajectory_telemetry(failing).tools["bash"] == [0, 1]  # `javac: command not found`


def test_a_tool_a_run_never_called_has_no_success_rate() -> None:
    """swe-agent-java: gpt-4o called `scroll_down` once, deepseek-chat-v2 never; the row printed
    rate 1 vs 0 beside "1/1 vs 0/0", a run that never called the tool reading as one whose every
    call failed. A tool with no calls has no rate ("–")."""
    java = DATA / "swe-agent-java"
    runs = [
        RunTelemetry.of(read_paths([java / f"20240825_SWE-agent_{model}"]).trajectories)
        for model in ("gpt-4o-2024-05-13", "deepseek-chat-v2")
    ]
    checks = {c.name: c for c in telemetry_checks(*runs)}
    scroll = checks["tool success: scroll_down"]
    assert scroll.reason.startswith("1/1 vs 0/0")
    assert (scroll.v1, scroll.v2) == (1.0, None)
    assert "| tool success: scroll_down | rate | 1 | – |" in compare_markdown(
        compare_runs(RunSummary("a", runs[0]), RunSummary("b", runs[1])).to_dict()
    )


def test_a_tool_that_always_failed_in_run_1_shows_no_giant_rate_ratio() -> None:
    """create_file 0/1 vs 44/44 read "rel 1000000000.000": the 1e-9 that keeps the division
    finite, not a figure; it now says run 1's rate is 0, as the ratio checks do."""
    (check,) = tool_success_checks({"create_file": "0/1"}, {"create_file": "44/44"})
    assert "rel 1e+09 (run 1 is 0)" in check.reason and "1000000000" not in check.reason
    assert check.alert
