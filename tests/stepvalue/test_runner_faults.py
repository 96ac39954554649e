"""Runner bookkeeping with a scripted evaluator: failure injection and exact call counts.
(The real-model runs are in test_llm_runs.py.)"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import warnings
from collections.abc import Sequence
from pathlib import Path

import pytest

from agentlens.errors import ProviderError
from agentlens.formats import read_path
from agentlens.providers.types import (
    ChatRequest,
    ChatResponse,
    Message,
    OptionLogprob,
    OptionLogprobs,
)
from agentlens.stepvalue.candidates import outcome_problem
from agentlens.stepvalue.config import RunConfig
from agentlens.stepvalue.evaluate import evaluate
from agentlens.stepvalue.labels import normalise_token
from agentlens.stepvalue.model import Problem
from agentlens.stepvalue.outputs import write_outputs
from agentlens.stepvalue.redaction import LeakageError
from tests.conftest import BENCH

TRACE = sorted((BENCH / "trajectories" / "pallets__flask-5014").glob("*.json"))[0]


class Scripted:
    """Answers by rule; fails or leaks on request, to exercise the runner's error paths."""

    name = "scripted"

    def __init__(
        self, *, fail_rationale_for: str | None = None, rationale: str = "resolved: unclear"
    ) -> None:
        self.fail_rationale_for = fail_rationale_for
        self.rationale = rationale
        self.chats: list[ChatRequest] = []
        self.scores: list[list[Message]] = []

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.chats.append(request)
        if self.fail_rationale_for and self.fail_rationale_for in request.messages[-1]["content"]:
            raise ProviderError("scripted", "injected failure")
        return ChatResponse(text=self.rationale)

    async def option_logprobs(
        self,
        messages: list[Message],
        labels: Sequence[str],
        *,
        floor: float = -20.0,
        top_k: int = 20,
    ) -> OptionLogprobs:
        self.scores.append(messages)
        bare = [label for label in labels if normalise_token(label) == label]
        options = {
            label: OptionLogprob(label=label, logprob=floor, source="floor") for label in labels
        }
        for label in bare:  # only the plain labels are "listed"; punctuated spellings are not
            value = -0.5 if label == bare[0] else -2.0
            options[label] = OptionLogprob(label=label, logprob=value, source="top_k")
        return OptionLogprobs(options=options, floor=floor, top_k=top_k)


@pytest.fixture(scope="module")
def problem():
    (traj,) = read_path(TRACE)
    return outcome_problem(traj, max_steps=3)


def test_each_distinct_state_is_scored_once_per_channel_and_permutation(problem) -> None:
    evaluator = Scripted()
    config = RunConfig(
        channels=("direct", "generated-rationale-128"), permutations=2, leak_policy="warn"
    )
    result = evaluate([problem], evaluator, config)
    states = len(problem.transitions) + 1
    assert result.costs.distinct_states == states
    assert result.costs.rationale_calls == len(evaluator.chats) == states
    assert result.costs.scoring_calls == len(evaluator.scores) == states * 2 * 2
    assert result.costs.naive_calls == 2 * 3 * (2 * 2 + 1)
    # the label mapping is the tail of the last message; everything before it is shared
    first, second = evaluator.scores[0][-1]["content"], evaluator.scores[1][-1]["content"]
    shared = first.index("Current physical option mapping")
    assert first[:shared] == second[:shared] and first != second
    assert len(result.steps) == 3 * 2 and all(r["channel"] for r in result.steps)
    by_key = {(r["step_id"], r["channel"]): r for r in result.steps}
    for (step, _channel), row in by_key.items():
        direct = by_key[(step, "direct")]
        assert row["effect_g_margin"] == pytest.approx(row["g_margin"] - direct["g_margin"])
        # spec §12/§13.1: the max-competitor variants are reported and compared too
        for name in ("g_margin_max", "perm_mean_g_margin_max"):
            assert row[f"effect_{name}"] == pytest.approx(row[name] - direct[name])
    effects = {(e["channel"], e["value"]) for e in result.channel_effects}
    assert ("generated-rationale-128", "perm_mean_g_margin_max") in effects
    for means in result.channel_means():
        own = [
            r["perm_mean_g_margin_max"] for r in result.steps if r["channel"] == means["channel"]
        ]
        assert means["mean_perm_mean_g_margin_max"] == pytest.approx(sum(own) / len(own))


def test_a_label_position_bias_shows_as_anisotropy_and_averages_out(problem) -> None:
    result = evaluate([problem], Scripted(), RunConfig(channels=("direct",), permutations=2))
    row = result.steps[0]
    assert row["anisotropy_before"] > 0.1  # the scripted evaluator always prefers label A
    assert row["perm_mean_g_margin"] == pytest.approx(0.0)  # states differ, beliefs do not


def test_failed_rationale_leaves_its_transitions_missing_not_crashed(problem) -> None:
    evaluator = Scripted(fail_rationale_for='"#1 ')
    config = RunConfig(channels=("direct", "generated-rationale-128"), permutations=2)
    result = evaluate([problem], evaluator, config)
    rationale_rows = [r for r in result.steps if r["channel"] == "generated-rationale-128"]
    # every state after step 1 lists "#1 ", so all three transitions lose their after state
    assert [r["missing"] for r in rationale_rows] == [True, True, True]
    assert all("missing_labels" in r["flags"] for r in rationale_rows)
    assert any("injected failure" in e for e in result.costs.errors)
    assert all(not r["missing"] for r in result.steps if r["channel"] == "direct")


def test_leaking_rationale_aborts_under_error_policy_and_is_flagged_under_warn(problem) -> None:
    leaky = "Option A is best"
    with pytest.raises(LeakageError, match="position"):
        evaluate(
            [problem],
            Scripted(rationale=leaky),
            RunConfig(channels=("generated-rationale-128",), permutations=1),
        )
    result = evaluate(
        [problem],
        Scripted(rationale=leaky),
        RunConfig(channels=("generated-rationale-128",), permutations=1, leak_policy="warn"),
    )
    assert all("rationale_leak" in r["flags"] for r in result.steps)


class Echo(Scripted):
    """Writes a rationale that names the state it was asked about (its first completed step)."""

    async def chat(self, request: ChatRequest) -> ChatResponse:
        content = request.messages[-1]["content"]
        marker = (
            content.split('"completed_steps": ["', 1)[-1][:12]
            if "completed_steps" in content
            else "empty"
        )
        return ChatResponse(text=f"about {marker} {len(content)}")


def test_swapped_channel_uses_another_states_own_rationale(problem) -> None:
    channels = ("generated-rationale-128", "swapped-rationale-128")
    result = evaluate([problem], Echo(), RunConfig(channels=channels, permutations=1))
    own = {s["state"]: s["rationale"] for s in result.states if s["channel"] == channels[0]}
    swapped = {s["state"]: s["rationale"] for s in result.states if s["channel"] == channels[1]}
    assert set(swapped.values()) <= set(own.values())
    assert all(swapped[state] != own[state] for state in own)
    assert result.costs.rationale_calls == len(own)  # the swapped channel costs no extra rationale


class QuestionEcho(Scripted):
    """Writes a rationale naming the question it was asked about."""

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.chats.append(request)
        question = request.messages[-1]["content"].split("Candidates (by id)")[0]
        return ChatResponse(text=f"about {hashlib.sha256(question.encode()).hexdigest()[:12]}")


def test_runs_of_two_tasks_never_share_a_rationale_of_their_empty_first_state() -> None:
    traces = [
        sorted((BENCH / "trajectories" / task).glob("*.json"))[0]
        for task in ("pallets__flask-5014", "psf__requests-1724")
    ]
    problems = [outcome_problem(read_path(t)[0], max_steps=1) for t in traces]
    config = RunConfig(channels=("generated-rationale-128",), permutations=1)
    result = evaluate(problems, QuestionEcho(), config)
    first = {s["trajectory_id"]: s["rationale"] for s in result.states if s["position"] == 0}
    # both runs start from the same state `{}`, asked under different questions
    assert len({s["text"] for s in result.states if s["position"] == 0}) == 1
    assert len(set(first.values())) == 2
    assert result.costs.rationale_calls == result.costs.distinct_states == 4


def test_candidate_only_channel_scores_one_state_and_slices_double_the_rows(problem) -> None:
    evaluator = Scripted()
    config = RunConfig(
        channels=("candidate-only-rationale",), permutations=2, slices=("full", "evidence-only")
    )
    result = evaluate([problem], evaluator, config)
    # no evidence in any state: one rationale and one scoring per permutation for everything
    assert result.costs.rationale_calls == 1
    assert result.costs.scoring_calls == 2
    assert {r["slice"] for r in result.steps} == {"full", "evidence-only"}
    assert len(result.steps) == 2 * len(problem.transitions)
    assert all(r["g_margin"] == 0 and r["surprise"] == 0 for r in result.steps)


def test_audit_samples_the_generated_128_rationale_against_direct(problem, tmp_path) -> None:
    # spec §9.1: the audit pairs the "report" run (label-free rationale, 128 tokens) with direct,
    # whatever order the channels were listed in
    channels = ("direct", "swapped-rationale-128", "generated-rationale-128")
    result = evaluate([problem], Scripted(), RunConfig(channels=channels, permutations=1))
    for selection in ("largest-gap", "random"):
        rows = result.audits[selection]
        assert rows and {r["channel"] for r in rows} == {"generated-rationale-128"}
        assert {r["baseline"] for r in rows} == {"direct"}
        # spec §9.4: the labeller finds both states' text and the rationales in states.jsonl
        texts = {(s["state"], s["channel"]): s for s in result.states}
        for r in rows:
            for side in ("state_before", "state_after"):
                state = texts[(r[side], "generated-rationale-128")]
                assert state["text"] and state["rationale"] == "resolved: unclear"
    assert {p["channel"] for p in result.paired_phases} == {"generated-rationale-128"}
    paths = write_outputs(result, tmp_path)
    assert paths["phases_paired.csv"].read_text().startswith("channel,baseline,slice,phase")
    # §9.3's pair of protocol counts, both, wherever a channel effect is written
    header = paths["channel_effects.csv"].read_text().splitlines()[0].split(",")
    assert {"protocol_damage_count", "protocol_repair_loss_count"} <= set(header)
    report = paths["report"].read_text()
    assert "## Most negative phases" in report and "paired by phase" in report


def test_reasoner_models_and_more_than_ten_candidates_are_refused(problem) -> None:
    from agentlens.errors import ConfigError
    from agentlens.stepvalue.candidates import fault_localisation_problem, fault_localisation_space

    class Reasoner(Scripted):
        name = "openai-compatible:https://api.deepseek.com/v1#deepseek-reasoner"

    with pytest.raises(ConfigError, match=r"reasoner.*e\.g\. deepseek:deepseek-chat"):
        evaluate([problem], Reasoner(), RunConfig(channels=("direct",), permutations=1))
    runs = [
        read_path(p)[0] for p in (BENCH / "trajectories" / "django__django-11066").glob("*.json")
    ]
    wide = fault_localisation_problem(runs[0], fault_localisation_space(runs, k=11), max_steps=1)
    assert len(wide.view.candidates) == 11
    with pytest.raises(ConfigError, match="11 candidates"):
        evaluate([wide], Scripted(), RunConfig(channels=("direct",), permutations=1))


class Floored(Scripted):
    """The last label never appears in the top-k list (failure injection)."""

    async def option_logprobs(self, messages, labels, *, floor=-20.0, top_k=20):
        result = await super().option_logprobs(messages, labels, floor=floor, top_k=top_k)
        last = [label for label in labels if normalise_token(label) == label][-1]
        result.options[last] = OptionLogprob(label=last, logprob=floor, source="floor")
        return result


def test_fallback_policy_floor_flags_and_error_stops(problem) -> None:
    from agentlens.stepvalue.runner import FloorError

    config = RunConfig(channels=("direct",), permutations=1)
    result = evaluate([problem], Floored(), config)
    assert all("used_floor_score" in r["flags"] for r in result.steps)
    with pytest.raises(FloorError, match="not-resolved"):  # identity labels: B = not-resolved
        evaluate(
            [problem],
            Floored(),
            RunConfig(channels=("direct",), permutations=1, fallback_policy="error"),
        )


def test_record_labels_and_the_numeric_scheme_are_the_physical_labels(tmp_path) -> None:
    import json

    from agentlens.stepvalue.candidates import explicit_problems

    rec = {
        "schema_version": "asv.v1",
        "trajectory_id": "t",
        "task": {
            "task_id": "t",
            "question": "Is the claim supported?",
            "candidate_space": {
                "type": "closed_set",
                "candidates": [
                    {"id": "supported", "text": "Supported", "label": "S"},
                    {"id": "refuted", "text": "Refuted", "label": "R"},
                    {"id": "nei", "text": "Not enough information"},  # third by position: C
                ],
                "gold_candidate_id": "refuted",
            },
        },
        "steps": [{"step_id": "s1", "index": 0, "state_after": {"evidence": "x"}}],
    }
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    (problem,) = explicit_problems(path)

    def mappings(evaluator: Scripted) -> list[list[str]]:
        tails = [m[-1]["content"].split("mapping:\n", 1)[1] for m in evaluator.scores]
        return [t.splitlines()[:-1] for t in tails]

    own = Scripted()
    evaluate([problem], own, RunConfig(channels=("direct",), permutations=3))
    # spec §2.1/§7: the record's labels [S, R, C] in identity; rotation k: labels[-k:] + labels[:-k]
    assert mappings(own)[:3] == [
        ["C = candidate_id: nei", "R = candidate_id: refuted", "S = candidate_id: supported"],
        ["C = candidate_id: supported", "R = candidate_id: nei", "S = candidate_id: refuted"],
        ["C = candidate_id: refuted", "R = candidate_id: supported", "S = candidate_id: nei"],
    ]
    numeric = Scripted()
    config = RunConfig(channels=("direct",), permutations=1, label_scheme="numeric")
    (traj,) = read_path(TRACE)
    evaluate([outcome_problem(traj, max_steps=1)], numeric, config)
    assert mappings(numeric)[0] == [
        "1 = candidate_id: resolved",
        "2 = candidate_id: not-resolved",
    ]


def _one_step_problem(path: Path, candidates: list[dict[str, str]], gold: str) -> Problem:
    """An asv.v1 record of one step over `candidates`, written to `path` and read back."""
    import json

    from agentlens.stepvalue.candidates import explicit_problems

    space = {"type": "closed_set", "candidates": candidates, "gold_candidate_id": gold}
    rec = {
        "schema_version": "asv.v1",
        "trajectory_id": "t",
        "task": {"task_id": "t", "question": "Which answer?", "candidate_space": space},
        "steps": [{"step_id": "s1", "index": 0, "state_after": {"evidence": "x"}}],
    }
    path.write_text(json.dumps(rec) + "\n")
    (problem,) = explicit_problems(path)
    return problem


def test_the_numeric_scheme_is_refused_past_nine_candidates(tmp_path) -> None:
    """With 10 candidates the numeric scheme labels one "10": two tokens on SmolLM2 ("1", "0"),
    so that candidate was scored at the floor (belief 0.0) in every state while "1" took its
    mass. The run is refused before any call, naming the option and the fix."""

    from agentlens.errors import ConfigError

    candidates = [{"id": f"c{i}", "text": f"answer {i}"} for i in range(1, 11)]
    problem = _one_step_problem(tmp_path / "ten.jsonl", candidates, gold="c10")
    numeric = Scripted()
    config = RunConfig(channels=("direct",), permutations=1, label_scheme="numeric")
    with pytest.raises(ConfigError, match=r"--label-scheme numeric .* use --label-scheme letters"):
        evaluate([problem], numeric, config)
    assert numeric.scores == []
    letters = RunConfig(channels=("direct",), permutations=1)
    assert evaluate([problem], Scripted(), letters).steps


@pytest.mark.llm
def test_an_own_label_no_token_spells_is_refused(tmp_path: Path, local_gguf_path: Path) -> None:
    """A record's own label `10` is two tokens to SmolLM2 run in-process: its candidate got
    belief 2e-8 in every state (the floor), the gold one included, and the run said nothing."""
    from agentlens.errors import ConfigError
    from agentlens.providers import get_provider

    candidates = [
        {"id": "a", "text": "answer a", "label": "A"},
        {"id": "b", "text": "answer b", "label": "10"},
    ]
    problem = _one_step_problem(tmp_path / "own.jsonl", candidates, gold="b")
    config = RunConfig(channels=("direct",), permutations=1)
    with pytest.raises(
        ConfigError, match="no token of its vocabulary spells the option label '10'"
    ):
        evaluate([problem], get_provider(f"llamacpp:{local_gguf_path}", cache=False), config)


def test_audit_samples_transitions_of_the_full_state_runs_only(problem) -> None:
    channels = ("direct", "generated-rationale-128")
    config = RunConfig(channels=channels, permutations=1, slices=("evidence-only", "full"))
    result = evaluate([problem], Scripted(), config, audit_n=100)
    for rows in result.audits.values():
        assert {r["slice"] for r in rows} == {"full"}
        assert len(rows) == len({r["step_id"] for r in rows}) == len(problem.transitions)


class Waiting(Scripted):
    """A call that takes a turn of the event loop, as a real one does: later calls queue."""

    async def chat(self, request: ChatRequest) -> ChatResponse:
        await asyncio.sleep(0)
        return await super().chat(request)


def test_a_leak_abort_leaves_no_unawaited_rationale_call_behind(problem) -> None:
    """The calls still queued when a leak aborts pass 1 are closed: no "coroutine ... was never
    awaited" warning reaches the user's terminal after the one-line error."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(LeakageError):
            evaluate(
                [problem],
                Waiting(rationale="Option A is best"),
                RunConfig(channels=("generated-rationale-128",), permutations=1),
            )
        gc.collect()
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []


def test_rationale_tokens_override_every_128_token_rationale(problem) -> None:
    evaluator = Scripted()
    channels = ("candidate-only-rationale", "generated-rationale-128", "generated-rationale-512")
    config = RunConfig(channels=channels, permutations=1, rationale_tokens=32)
    result = evaluate([problem], evaluator, config)
    # the 512-token ablation keeps its length; every 128-token rationale takes the override
    assert {c.max_tokens for c in evaluator.chats} == {32, 512}
    no_evidence = [c for c in evaluator.chats if "No evidence state is provided" in str(c.messages)]
    assert [c.max_tokens for c in no_evidence] == [32]
    assert result.channel_names() == [
        "candidate-only-rationale",
        "generated-rationale-32",
        "generated-rationale-512",
    ]


def test_a_label_marker_in_a_rationale_is_a_leak_the_policy_handles(problem) -> None:
    marked = '{"candidate_id": "resolved", "label": "unclear"}'
    config = RunConfig(channels=("direct", "generated-rationale-128"), permutations=1)
    with pytest.raises(LeakageError, match=r"rationale leaks \(marker\)"):
        evaluate([problem], Scripted(rationale=marked), config)
    evaluator = Scripted(rationale=marked)
    warned = RunConfig(channels=config.channels, permutations=1, leak_policy="warn")
    result = evaluate([problem], evaluator, warned)
    assert all(not r["missing"] for r in result.steps)
    rationale_rows = [r for r in result.steps if r["channel"] == "generated-rationale-128"]
    assert all("rationale_leak" in r["flags"] for r in rationale_rows)
    buffers = [
        m[-1]["content"] for m in evaluator.scores if "</RATIONALE_BUFFER>" in m[-1]["content"]
    ]
    assert buffers and all('"resolved", [MASKED] "unclear"' in b for b in buffers)
