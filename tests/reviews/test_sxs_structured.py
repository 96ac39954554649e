"""SxS answers in a schema: the pairwise schema, its parser, the one re-ask after a malformed
answer, the free-text path the released profile and `--free-text` keep, and the temperature every
SxS request states. A provider that records each request and answers scripted JSON stands in for
a model only to capture requests and inject malformed answers; the real model's structured
pairwise answers are in `test_local_model.py`."""

from __future__ import annotations

import asyncio
import json

import pytest

from agentlens.formats.stream import read_paths
from agentlens.providers import ChatRequest, LLMClient
from agentlens.reviews.judge.structured import CHARS_PER_TOKEN
from agentlens.reviews.sxs.judge_pairs import Sampling, run_sxs
from agentlens.reviews.sxs.pairing import Side, pair_runs
from agentlens.reviews.sxs.parse import parse_comparison
from agentlens.reviews.sxs.prompt import OUTPUT, build_messages
from agentlens.reviews.sxs.runs import SxsSettings, side_by_side
from agentlens.reviews.sxs.structured import (
    COMPARISON_CHARS,
    LINE_CHARS,
    pairwise_schema,
    pairwise_token_bound,
    parse_pairwise,
)
from tests.conftest import BENCH
from tests.reviews.test_structured_judge import RecordingProvider

VALID = json.dumps(
    {
        "comparison": "Both runs fixed the header; Agent 2 re-ran the failing test.",
        "lines": [
            {"aspect": "test runs", "winner": "A2", "severity": "medium", "evidence": "A2 S4"},
            {"aspect": "edits", "winner": "Tie", "severity": "low", "evidence": "A1 S2, A2 S2"},
        ],
        "score": 2,
    }
)


@pytest.fixture(scope="module")
def sides() -> tuple[Side, Side]:
    """One real task, run by two models: one pair."""
    trajs = read_paths([BENCH / "trajectories" / "psf__requests-1724"]).trajectories
    a = [t for t in trajs if t.model == "gpt-4.1"][:1]
    b = [t for t in trajs if t.model == "sonnet-4.5"][:1]
    paired = pair_runs(a, b, [], [])
    return paired.a, paired.b


def judge(sides, provider: RecordingProvider, **kw):
    client = LLMClient(provider, cache=None)
    return asyncio.run(run_sxs(client, *sides, dimensions=["ToolCalls"], **kw))["ToolCalls"]


def test_the_score_is_the_last_field_an_integer_from_minus_5_to_5() -> None:
    schema = pairwise_schema()
    assert list(schema["properties"]) == ["comparison", "lines", "score"]
    assert schema["required"] == ["comparison", "lines", "score"]
    assert schema["properties"]["score"] == {"type": "integer", "enum": list(range(-5, 6))}
    line = schema["properties"]["lines"]["items"]["properties"]
    assert line["winner"]["enum"] == ["A1", "A2", "Tie"]
    # the longest answer the schema allows still ends, with its score, inside the token bound
    longest = {
        "comparison": "x" * COMPARISON_CHARS,
        "lines": [
            {"aspect": "x" * LINE_CHARS, "winner": "Tie", "severity": "medium",
             "evidence": "x" * LINE_CHARS}
        ] * schema["properties"]["lines"]["maxItems"],
        "score": -5,
    }  # fmt: skip
    assert len(json.dumps(longest)) / CHARS_PER_TOKEN < pairwise_token_bound()


def test_a_schema_answer_parses_as_the_same_tagged_answer_does() -> None:
    parsed = parse_pairwise(VALID)
    assert (parsed.score, parsed.unscored_reason) == (2, None)
    assert [(x.aspect, x.winner, x.severity, x.evidence) for x in parsed.lines] == [
        ("test runs", "A2", "medium", "A2 S4"),
        ("edits", "Tie", "low", "A1 S2, A2 S2"),
    ]
    tagged = f"<Comparison>\n{parsed.comparison}\n</Comparison><PairwiseScore>2</PairwiseScore>"
    assert parse_comparison(tagged) == parsed
    assert parsed.comparison.splitlines()[1] == (
        "Aspect: test runs | Winner: A2 | Severity: medium | Evidence: A2 S4"
    )


@pytest.mark.parametrize(
    ("score", "expected"), [("-3", -3), ("−4", -4), (5.0, 5), (0, 0), ("+1", 1)]
)
def test_integer_scores_written_as_text_or_floats_are_read(score, expected) -> None:
    parsed = parse_pairwise(json.dumps({"comparison": "x", "lines": [], "score": score}))
    assert parsed.score == expected


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (
            '{"comparison": "x", "lines": [], "score": 7}',
            "score '7' is not an integer from -5 to 5",
        ),
        ('{"comparison": "x", "score": 2.5}', "score '2.5' is not an integer from -5 to 5"),
        ('{"comparison": "x", "score": true}', "score 'True' is not an integer from -5 to 5"),
        ('{"comparison": "x"}', "score 'None' is not an integer from -5 to 5"),
        ('{"comparison": "x", "score": "+-3"}', "score '+-3' is not an integer from -5 to 5"),
        ('{"comparison": "x", "score": "\u00b2"}', "score '\u00b2' is not an integer from -5 to 5"),
        ("[1, 2]", "malformed JSON (not an object)"),
        ("", "empty answer"),
    ],
)
def test_schema_answers_without_a_valid_score_are_unscored(answer: str, reason: str) -> None:
    parsed = parse_pairwise(answer)
    assert (parsed.score, parsed.unscored_reason) == (None, reason)


def test_a_cut_off_answer_is_unscored_as_malformed_json() -> None:
    parsed = parse_pairwise('{"comparison": "Both runs fix')
    assert parsed.score is None and parsed.unscored_reason.startswith("malformed JSON (")


def test_a_malformed_answer_is_asked_once_more(sides) -> None:
    provider = RecordingProvider(['{"comparison": "cut off', VALID])
    result = judge(sides, provider, swap=False)
    first, second = provider.requests
    assert first.json_schema == pairwise_schema() == second.json_schema
    assert first.max_tokens is not None and first.max_tokens >= pairwise_token_bound()
    assert second.messages[:2] == first.messages
    assert second.messages[2] == {"role": "assistant", "content": '{"comparison": "cut off'}
    reask = second.messages[3]["content"]
    assert reask.startswith("Your answer could not be used: malformed JSON")
    assert "'ToolCalls'" in reask and '"score" must be an integer from -5 to 5' in reask
    (cell,) = result.cells
    (parsed,) = cell.comparisons
    assert (cell.forward, parsed.attempts) == (2, 2)
    assert result.to_dict()["cells"][0]["comparisons"][0]["attempts"] == 2


def test_an_answer_never_valid_is_asked_twice_and_left_unscored(sides) -> None:
    provider = RecordingProvider(["not json"])
    result = judge(sides, provider)
    assert len(provider.requests) == 4  # two orders, one re-ask each, not more
    (cell,) = result.cells
    assert (cell.forward, cell.swapped, cell.score) == (None, None, None)
    assert [p.attempts for p in cell.comparisons] == [2, 2]
    assert all(p.unscored_reason.startswith("malformed JSON") for p in cell.comparisons)


def test_the_swapped_order_is_asked_in_the_schema_too_and_flipped_back(sides) -> None:
    provider = RecordingProvider([VALID])
    (cell,) = judge(sides, provider).cells
    assert [r.json_schema is not None for r in provider.requests] == [True, True]
    assert (cell.forward, cell.swapped, cell.score, cell.consistent) == (2, -2, 0.0, False)
    prompt = provider.requests[0].messages[-1]["content"]
    assert prompt.endswith("|4-5| only for stark contrasts.") and "<PairwiseScore>" not in prompt


@pytest.mark.parametrize(
    ("sampling", "temperatures"),
    [
        (None, [0.0, 0.0]),
        (Sampling(1, 0.3), [0.3, 0.3]),  # the role's temperature, in both orders
        (Sampling(2), [0.7] * 4),  # N samples at 0.7 unless the role says otherwise
        (Sampling(2, 0.2), [0.2] * 4),
    ],
)
def test_every_request_states_its_temperature(sides, sampling, temperatures) -> None:
    provider = RecordingProvider([VALID])
    judge(sides, provider, sampling=sampling)
    assert [r.temperature for r in provider.requests] == temperatures
    assert all("temperature" in json.loads(_wire(r)) for r in provider.requests)


def _wire(request: ChatRequest) -> str:
    """What the llama.cpp server receives (`openai-compatible:`)."""
    from agentlens.providers.openai_compatible import OpenAICompatibleProvider

    provider = OpenAICompatibleProvider("x", base_url="http://127.0.0.1:9/v1", model="smollm2")
    return json.dumps(provider._chat_body(request))


@pytest.mark.parametrize(
    "settings",
    [SxsSettings(profile="released"), SxsSettings(free_text=True)],
    ids=["released", "free-text"],
)
def test_the_released_profile_and_free_text_keep_the_tagged_answer(sides, settings) -> None:
    provider = RecordingProvider(
        ["<Comparison>Same.</Comparison><PairwiseScore>-1</PairwiseScore>"]
    )
    trajs = [list(s.trajectories.values()) for s in sides]
    found = side_by_side(
        LLMClient(provider, cache=None), ("a", "b"), (trajs[0], trajs[1]), ([], []),
        metric_set="workflows", dimensions=("ToolCalls",), settings=settings,
    )  # fmt: skip
    comparisons = [r for r in provider.requests if "<agent1_trajectory>" in str(r.messages)]
    assert len(comparisons) == 2 and all(r.json_schema is None for r in comparisons)
    assert all(r.messages[-1]["content"].endswith(OUTPUT) for r in comparisons)
    (cell,) = found.results["ToolCalls"].cells
    assert (cell.forward, cell.swapped) == (-1, 1)
    assert (found.to_dict()["answers"], found.to_dict()["temperature"]) == ("free text", 0.0)


def test_the_free_text_prompt_is_unchanged(sides) -> None:
    a, b = (next(iter(s.trajectories.values())) for s in sides)
    tagged = build_messages("ToolCalls", a, b, None, None, budget_tokens=800)
    schema = build_messages("ToolCalls", a, b, None, None, budget_tokens=800, structured=True)
    body, instructions = tagged[1]["content"].rsplit("\n\n", 1)
    assert instructions == OUTPUT and "JSON" not in tagged[1]["content"]
    assert schema[1]["content"].startswith(body) and schema[0] == tagged[0]


def test_a_pitfalls_answer_is_not_asked_again_for_the_score_the_mapping_fixes() -> None:
    """The burden totals fix a Pitfalls score, so the judge's own score is never used: an object
    answer that writes the quoted line as its score (as a backend that does not hold the model
    to the schema lets through) used to be asked once more, a second call for nothing."""
    from agentlens.reviews.judge.judge import review_run
    from tests.reviews.test_judge import ANSWER, ScriptedProvider

    trajs = read_paths([BENCH / "trajectories" / "psf__requests-1724"]).trajectories
    a = [t for t in trajs if t.model == "gpt-4.1"][:1]
    b = [t for t in trajs if t.model == "sonnet-4.5"][:1]
    reviewer = LLMClient(ScriptedProvider({"Pitfalls": ANSWER}), cache=None)
    reviews = [asyncio.run(review_run(reviewer, run, dimensions=["Pitfalls"])) for run in (a, b)]
    paired = pair_runs(a, b, *reviews)
    line = "Totals: A1=15, A2=15, Delta=0 => Score=0"
    echoed = json.dumps(
        {"comparison": f"{line}. Both retried blindly.", "lines": [], "score": line}
    )
    provider = RecordingProvider([echoed])
    client = LLMClient(provider, cache=None)
    result = asyncio.run(run_sxs(client, paired.a, paired.b, dimensions=["Pitfalls"]))["Pitfalls"]
    assert len(provider.requests) == 2  # one per order, no re-ask
    (cell,) = result.cells
    assert cell.pitfalls is not None and cell.pitfalls.line == line
    assert (cell.forward, cell.swapped) == (0, 0)
    assert [p.attempts for p in cell.comparisons] == [1, 1]
    # an answer that is no JSON object is still asked once more: its comparison feeds the alert
    provider = RecordingProvider(['{"comparison": "cut off', echoed])
    client = LLMClient(provider, cache=None)
    result = asyncio.run(run_sxs(client, paired.a, paired.b, dimensions=["Pitfalls"], swap=False))
    assert len(provider.requests) == 2 and result["Pitfalls"].cells[0].comparisons[0].attempts == 2
