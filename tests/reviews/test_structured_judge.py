"""Issue 24: structured judge answers, what the judge sees, and the score distribution.

The exact prompt sent is captured by a provider that records each request and answers a fixed
JSON review (it stands in for a model only to capture the request and inject malformed answers);
the real model's structured answers are in `test_local_model.py`."""

from __future__ import annotations

import asyncio
import json
import math
import re
from pathlib import Path

import pytest

from agentlens.formats.load import read_path
from agentlens.providers import ChatRequest, ChatResponse, LLMClient, TokenUsage
from agentlens.providers.prompt_dump import dump_prompts, prompt_hash
from agentlens.providers.types import TokenLogprob
from agentlens.reviews import DIMENSIONS
from agentlens.reviews.judge.compact import estimate_tokens, is_test_run, last_diff_step
from agentlens.reviews.judge.judge import JudgeSettings, TrajectoryReview, review_trajectory
from agentlens.reviews.judge.plan import (
    estimate,
    planned_calls,
    review_context,
    unscored_dimensions,
)
from agentlens.reviews.judge.score_probs import score_distribution
from agentlens.reviews.judge.structured import answer_schema, parse_structured
from tests.reviews.test_judge import kept_lines, largest_dev_trace

VALID = json.dumps(
    {
        "review": "The agent edited table.py and ran its tests.",
        "evidence": [{"aspect": "edit", "severity": "low", "evidence": "S18, S86"}],
        "score": "0.5",
    }
)


class RecordingProvider:
    """Records every request; answers from `answers` in turn (the last one repeats)."""

    name = "recording"
    supports_logprobs = False
    supports_json_schema = True

    def __init__(self, answers: list[str]) -> None:
        self.answers = answers
        self.requests: list[ChatRequest] = []

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        text = self.answers[min(len(self.requests) - 1, len(self.answers) - 1)]
        return ChatResponse(text=text, usage=TokenUsage(prompt_tokens=1, completion_tokens=1))

    async def option_logprobs(self, *args, **kw):  # pragma: no cover - not used
        raise NotImplementedError


@pytest.fixture(scope="module")
def big():
    return read_path(largest_dev_trace())[0]


def test_the_prompt_sent_keeps_edits_tests_and_the_final_diff_within_2000_tokens(big) -> None:
    provider = RecordingProvider([VALID])
    client = LLMClient(provider, cache=None)
    settings = JudgeSettings(budget_tokens=2000)
    review = asyncio.run(
        review_trajectory(
            client, big, dimensions=["EndResult"], ctx=review_context(big, None), settings=settings
        )
    )
    (request,) = provider.requests
    user = request.messages[1]["content"]
    transcript = re.search(r"<transcript>\n(.*)\n</transcript>", user, re.DOTALL)[1]  # type: ignore[index]
    assert estimate_tokens(transcript) <= 2000
    kept = kept_lines(transcript)
    edits = [s.index for s in big.steps if s.category in ("edit", "create_file")]
    tests = [s.index for s in big.steps if is_test_run(s)]
    diff_step = last_diff_step(big.steps)
    for i in [*edits, *tests, diff_step]:
        assert i in kept and "→" in kept[i], f"S{i}: {kept.get(i)}"  # its own line and result
    assert "+warnings.warn(" in kept[18]  # the edit's added line, not its old text
    # the final diff and the outcome come from the trajectory (no --repo given)
    assert f"Final diff:\n(the output of S{diff_step} `cd /testbed && git diff" in user
    assert "diff --git a/astropy/table/table.py b/astropy/table/table.py" in user
    assert "Recorded outcome: failed (from file)" in user
    # the issue once: S0 points to the <task> block
    assert user.count((big.task or "")[100:200]) == 1
    assert "[S0] user: (the task, shown above)" in transcript
    # a schema answer, asked through the backend's schema mechanism, with its hash stored
    assert request.json_schema == answer_schema("EndResult") and request.max_tokens >= 500
    r = review.reviews["EndResult"]
    assert (r.score, r.mode, r.attempts) == (0.5, "schema", 1)
    assert r.prompt_sha256 == prompt_hash(request.messages)
    assert r.parsed.evidence[0].step_ids == [18, 86]


def test_dump_prompts_writes_what_would_be_sent_and_the_estimate_counts_it(
    big, tmp_path: Path
) -> None:
    provider = RecordingProvider([VALID])
    client = LLMClient(provider, cache=None)
    settings = JudgeSettings(budget_tokens=2000)
    ctx = review_context(big, None)
    calls = planned_calls([big], lambda _t: DIMENSIONS, {big.id: ctx}, settings, True)
    written = dump_prompts(calls, tmp_path)
    assert len(written) == 5 and not provider.requests  # nothing sent
    review = asyncio.run(review_trajectory(client, big, ctx=ctx, settings=settings))
    sent = {prompt_hash(r.messages) for r in provider.requests}
    dumped = {json.loads(p.read_text())["prompt_sha256"] for p in written}
    assert dumped == sent == {r.prompt_sha256 for r in review.reviews.values()}
    doc = json.loads((tmp_path / big.id / "Pitfalls.json").read_text())
    assert doc["json_schema"]["properties"]["pitfalls"]["maxItems"] == 3
    guess = estimate(calls, "gpt-5.4", client.prices, free=False)
    assert guess.calls == len(provider.requests) == 5
    assert guess.cost is not None and guess.price_as_of
    unknown = estimate(calls, "gpt-5.5", client.prices, free=False)
    assert unknown.cost is None and "cost unknown" in unknown.line()


def test_a_malformed_answer_is_asked_once_more() -> None:
    traj = read_path(largest_dev_trace())[0]
    provider = RecordingProvider(['{"review": "cut off', VALID])
    client = LLMClient(provider, cache=None)
    review = asyncio.run(review_trajectory(client, traj, dimensions=["ToolCalls"]))
    first, second = provider.requests
    assert second.messages[:2] == first.messages
    assert second.messages[2] == {"role": "assistant", "content": '{"review": "cut off'}
    assert second.messages[3]["content"].startswith("Your answer could not be used: malformed JSON")
    r = review.reviews["ToolCalls"]
    assert (r.score, r.attempts) == (0.5, 2)
    never = RecordingProvider(["not json"])
    again = asyncio.run(
        review_trajectory(LLMClient(never, cache=None), traj, dimensions=["ToolCalls"])
    )
    assert len(never.requests) == 2  # one re-ask, not more
    assert again.reviews["ToolCalls"].score is None
    assert unscored_dimensions([again]) == ["ToolCalls"]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ('{"review": "x", "evidence": [], "score": "0.7"}', "score '0.7' is not 0, 0.5 or 1"),
        ("[1, 2]", "malformed JSON (not an object)"),
        ("", "empty answer"),
    ],
)
def test_structured_answers_without_a_valid_score_are_unscored(answer: str, reason: str) -> None:
    parsed = parse_structured(answer)
    assert parsed.score is None and parsed.unscored_reason == reason


def tokens(*spec: tuple[str, dict[str, float]]) -> list[TokenLogprob]:
    """Generated tokens with their alternatives given as probabilities."""
    return [
        TokenLogprob(
            token=tok, logprob=math.log(alts[tok]), top=[(t, math.log(p)) for t, p in alts.items()]
        )
        for tok, alts in spec
    ]


def test_probability_weighted_score_by_the_chain_rule() -> None:
    """After `"score": "`, P("1") = 0.2 and P("0") = 0.6 (0.2 elsewhere); after the "0",
    P(".") = 0.75 and P('"') = 0.25: renormalised over valid values, P(0) = 0.1875,
    P(0.5) = 0.5625, P(1) = 0.25, so E = 0.53125 and the spread is its standard deviation."""
    answer = tokens(
        ('{"', {'{"': 1.0}),
        ("score", {"score": 1.0}),
        ('":', {'":': 1.0}),
        (' "', {' "': 1.0}),
        ("0", {"0": 0.6, "1": 0.2, "x": 0.2}),
        (".", {".": 0.75, '"': 0.25}),
        ("5", {"5": 1.0}),
        ('"}', {'"}': 1.0}),
    )
    dist = score_distribution(answer)
    assert dist is not None
    assert dist.probabilities == pytest.approx({"0": 0.1875, "0.5": 0.5625, "1": 0.25})
    assert dist.expected == pytest.approx(0.53125) and dist.valid_mass == pytest.approx(0.8)
    var = 0.1875 * 0.53125**2 + 0.5625 * 0.03125**2 + 0.25 * 0.46875**2
    assert dist.spread == pytest.approx(math.sqrt(var))


def test_the_distribution_and_prompt_hash_survive_the_reviews_file(tmp_path: Path) -> None:
    from agentlens.jsonio import dump
    from agentlens.reviews.documents import load_reviews, reviews_document
    from agentlens.reviews.judge.judge import aggregate
    from agentlens.reviews.markdown import reviews_markdown

    traj = read_path(largest_dev_trace())[0]
    answer = tokens(('{"score": "', {'{"score": "': 1.0}), ("0", {"0": 0.8, "1": 0.2}),
                    ('"}', {'"}': 0.5, ".": 0.5}))  # fmt: skip

    class WithLogprobs(RecordingProvider):
        async def chat(self, request: ChatRequest) -> ChatResponse:
            reply = await super().chat(request)
            reply.logprobs = answer
            return reply

    provider = WithLogprobs([VALID])
    review = asyncio.run(
        review_trajectory(LLMClient(provider, cache=None), traj, dimensions=["ToolCalls"])
    )
    assert provider.requests[0].top_logprobs == 20
    doc = reviews_document("recorded", [review])
    assert doc["summary"]["ToolCalls"]["weighted_mean"] == pytest.approx(0.2 + 0.8 * 0.5 * 0.5)
    dump(doc, tmp_path / "r.json")
    (again,) = load_reviews(tmp_path / "r.json")
    r, before = again.reviews["ToolCalls"], review.reviews["ToolCalls"]
    assert r.prompt_sha256 == before.prompt_sha256 and r.mode == "schema"
    assert r.distribution is not None and r.distribution.to_dict() == before.distribution.to_dict()
    assert (
        aggregate([again])["ToolCalls"].weighted_mean
        == doc["summary"]["ToolCalls"]["weighted_mean"]
    )
    assert "(probability-weighted 0.40, spread" in reviews_markdown(doc)


CHOSE_0 = tokens(('{"score": "', {'{"score": "': 1.0}), ("0", {"0": 0.8, "1": 0.2}),
                 ('"}', {'"}': 0.5, ".": 0.5}))  # fmt: skip
CHOSE_1 = tokens(('{"score": "', {'{"score": "': 1.0}), ("1", {"1": 0.5, "0": 0.5}),
                 ('"}', {'"}': 1.0}))  # fmt: skip
SCORED_1 = VALID.replace('"score": "0.5"', '"score": "1"')


def reviewed_with_logprobs(answer: str, logprobs: list[TokenLogprob]) -> TrajectoryReview:
    class WithLogprobs(RecordingProvider):
        async def chat(self, request: ChatRequest) -> ChatResponse:
            reply = await super().chat(request)
            reply.logprobs = logprobs
            return reply

    traj = read_path(largest_dev_trace())[0]
    client = LLMClient(WithLogprobs([answer]), cache=None)
    return asyncio.run(review_trajectory(client, traj, dimensions=["EndResult"]))


def test_the_weighted_mean_names_the_reviews_it_leaves_out() -> None:
    """A review whose judge chose "1" gives a range, not a value: the dimension's weighted mean
    is over the others, and the JSON and the Markdown say how many it is over and why."""
    from agentlens.reviews.documents import reviews_document
    from agentlens.reviews.markdown import reviews_markdown

    doc = reviews_document(
        "recorded",
        [reviewed_with_logprobs(VALID, CHOSE_0), reviewed_with_logprobs(SCORED_1, CHOSE_1)],
    )
    summary = doc["summary"]["EndResult"]
    assert summary["scored"] == 2
    assert summary["weighted_mean"] == pytest.approx(0.2 + 0.8 * 0.5 * 0.5)
    assert summary["weighted_mean_of"] == 1
    assert summary["weighted_mean_reason"] == "mean of 1 of 2 scored reviews; 1 gave a range"
    assert (
        "EndResult probability-weighted mean 0.40: mean of 1 of 2 scored reviews; 1 gave a range"
        in reviews_markdown(doc)
    )


def test_the_markdown_says_why_there_is_no_weighted_mean() -> None:
    """Every scored review gave a range: the JSON said "mean of 0 of 2 …" and the Markdown
    said nothing; it now prints the same reason."""
    from agentlens.reviews.documents import reviews_document
    from agentlens.reviews.markdown import reviews_markdown

    ranged = reviewed_with_logprobs(SCORED_1, CHOSE_1)
    doc = reviews_document("recorded", [ranged, ranged])
    summary = doc["summary"]["EndResult"]
    assert summary["weighted_mean"] is None
    assert summary["weighted_mean_reason"] == "mean of 0 of 2 scored reviews; 2 gave a range"
    assert (
        "EndResult: no probability-weighted mean: mean of 0 of 2 scored reviews; 2 gave a range"
        in reviews_markdown(doc)
    )


def test_an_unobserved_split_gives_a_range_not_a_guess() -> None:
    answer = tokens(
        ('{"score": "', {'{"score": "': 1.0}),
        ("1", {"1": 0.5, "0": 0.5}),
        ('"}', {'"}': 1.0}),
    )
    dist = score_distribution(answer)
    assert dist is not None and dist.expected is None and dist.spread is None
    assert dist.expected_range == pytest.approx((0.5, 0.75))
    assert dist.probabilities == pytest.approx({"1": 0.5, "0 or 0.5": 0.5})


def test_openai_strict_mode_gets_the_schema_without_length_bounds() -> None:
    """OpenAI's strict mode refuses string-length bounds; a grammar server, asked with
    `json_object` + schema after refusing the strict style, keeps them (they bound the answer)."""
    from agentlens.providers.openai_compatible import OpenAICompatibleProvider

    provider = OpenAICompatibleProvider("x", base_url="http://127.0.0.1:9/v1", model="gpt-4.1")
    request = ChatRequest(messages=[], json_schema=answer_schema("Pitfalls"), top_logprobs=20)
    strict = provider._chat_body(request)
    assert "maxLength" not in json.dumps(strict["response_format"])
    assert strict["response_format"]["json_schema"]["strict"] is True
    assert (strict["logprobs"], strict["top_logprobs"]) == (True, 20)
    provider._json_object = True
    loose = provider._chat_body(request)["response_format"]
    assert loose == {"type": "json_object", "schema": answer_schema("Pitfalls")}
