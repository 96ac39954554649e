"""Judge pipeline without a model: compaction of the largest dev trajectory, prompt contents,
answer parsing (unscored is never 0), aggregation. A scripted provider supplies exact answers
that the real 135M model cannot be made to give (a valid review, a refusal)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from agentlens.formats.load import read_path
from agentlens.providers import ChatRequest, ChatResponse, LLMClient, TokenUsage
from agentlens.reviews import DIMENSIONS
from agentlens.reviews.judge.compact import compact, estimate_tokens
from agentlens.reviews.judge.judge import JudgeSettings, aggregate, review_trajectory
from agentlens.reviews.judge.parse import parse_review
from agentlens.reviews.judge.plan import run_summary
from agentlens.reviews.judge.prompt import ReviewContext, build_messages
from tests.conftest import BENCH


def largest_dev_trace() -> Path:
    return max((BENCH / "trajectories").glob("*/*.json"), key=lambda p: p.stat().st_size)


@pytest.fixture(scope="module")
def big():
    return read_path(largest_dev_trace())[0]


def cited_ids(text: str) -> set[int]:
    ids: set[int] = set()
    for a, b in re.findall(r"\[S(\d+)(?:–S(\d+))?\]", text):
        ids.update(range(int(a), int(b or a) + 1))
    return ids


@pytest.mark.parametrize("budget", [1500, 3000, 8000])
def test_compaction_keeps_every_step_id_within_budget(big, budget: int) -> None:
    raw = json.loads(largest_dev_trace().read_text())
    n_steps = len(raw["states"])  # the initial state becomes the task step S0
    result = compact(big, budget)
    assert result.steps == n_steps
    assert cited_ids(result.text) == set(range(n_steps))
    assert result.tokens <= budget
    assert result.original_tokens > 8000  # the full rendering does not fit any of these budgets


def kept_lines(text: str) -> dict[int, str]:
    """Step id -> its own line(s) (not folded into a range), from a compacted transcript."""
    lines: dict[int, str] = {}
    for block in re.split(r"\n(?=\[S\d)", text):
        found = re.match(r"\[S(\d+)\] ", block)
        if found:
            lines[int(found[1])] = block
    return lines


def test_compaction_cuts_the_rest_before_edits_tests_and_the_final_diff(big) -> None:
    """Issue 24: the order kept is the task, edits and their results, test runs and their
    results, the final diff, then the rest; every cut is marked."""
    from agentlens.reviews.judge.compact import is_test_run, last_diff_step

    text = compact(big, 1500).text
    assert text.startswith("[S0] user: ") and (big.task or "")[:60].strip() in text
    assert "[result cut]" in text  # at 1500 tokens some test runs lose their result, marked
    text = compact(big, 2000, task_elsewhere=True).text
    assert text.startswith("[S0] user: (the task, shown above)")
    kept = kept_lines(text)
    edits = [s.index for s in big.steps if s.category in ("edit", "create_file")]
    tests = [s.index for s in big.steps if is_test_run(s)]
    assert len(edits) == 14 and len(tests) >= 10
    for i in [*edits, *tests, last_diff_step(big.steps)]:
        assert i in kept, f"S{i} was folded"
    assert "folded" in text and "[cut]" in text  # the rest is folded; cuts are marked


def test_no_compaction_when_it_fits(big) -> None:
    result = compact(big, 10**6)
    assert result.tokens == result.original_tokens
    assert result.note.startswith("Full transcript: 101 steps")


def test_prompt_contents(big) -> None:
    transcript = compact(big, 2000)
    ctx = ReviewContext(
        final_diff="--- a/x.py\n+++ b/x.py\n",
        termination_reason="User decided to finish the dialog",
        process_evidence="Stage timeline: S1–S3 E",
    )
    for dim in DIMENSIONS:
        user = build_messages(big, dim, transcript, ctx)[1]["content"]
        assert f"performance dimension '{dim}' only" in user
        assert "<Score>0 or 0.5 or 1</Score>" in user
        assert "severity is absolute" in user  # spec §5.3
        assert "[S0] user:" in user and "Evidence: <step ids" in user
        assert "<termination_reason>User decided to finish the dialog</termination_reason>" in user
        assert "<process_evidence>\nStage timeline: S1–S3 E" in user
        assert "+++ b/x.py" in user
        assert ("<Focus>" in user) == (dim == "EndResult")
    assert "BurdenTotal" in build_messages(big, "Pitfalls", transcript, ctx)[1]["content"]


ANSWER = """<Review>
The agent fixed the bug but left stray files.
Aspect: stray files | Severity: medium | Evidence: S97, S99 and S250
Aspect: tests run | Severity: low | Evidence: steps 91-92
Pitfall: blind retry | Category: Tool/Harness | Severity: high | Frequency: repeated | Evidence: S93 | Mechanism: ignored error
Pitfall: leftovers | Category: Process/Interaction | Severity: low | Frequency: once | Evidence: S97 | Mechanism: no cleanup
BurdenTotal: 15
</Review>
<Score>0</Score> on reflection <Score>0.5</Score>"""


def test_parse_review_evidence_and_burden() -> None:
    parsed = parse_review(ANSWER, n_steps=101)
    assert parsed.score == 0.5  # the last <Score> wins
    first, second = parsed.evidence
    assert (first.aspect, first.severity, first.step_ids, first.unknown_step_ids) == (
        "stray files",
        "medium",
        [97, 99],
        [250],
    )
    assert second.step_ids == [91, 92]
    assert [(p.severity, p.repeated, p.category) for p in parsed.pitfalls] == [
        ("high", True, "Tool/Harness"),
        ("low", False, "Process/Interaction"),
    ]
    assert parsed.burden_total == 7 * 2 + 1 and parsed.stated_burden_total == 15


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("", "empty answer"),
        ("The agent did fine overall.", "no <Score> tag"),
        ("I'm unable to evaluate this transcript.", "refused"),
        ("<Score>0.7</Score>", "score '0.7' is not 0, 0.5 or 1"),
        ("<Score>high</Score>", "score 'high' is not 0, 0.5 or 1"),
    ],
)
def test_unparseable_answers_are_unscored_not_zero(answer: str, reason: str) -> None:
    parsed = parse_review(answer)
    assert parsed.score is None and parsed.unscored_reason == reason


@pytest.mark.parametrize(
    ("answer", "score"),
    [
        ("<Score>0.5 (tolerable)</Score>", 0.5),
        ("<Score>**1**</Score>", 1.0),
        ("<Score>0.5/1</Score>", 0.5),
        ("<Score>Score: 0</Score>", 0.0),
        ("<Score>1 - more than 90% of the requirements met.</Score>", 1.0),
        ("<Score>0.50</Score>", 0.5),
    ],
)
def test_score_is_the_leading_token_of_the_last_score_tag(answer: str, score: float) -> None:
    """Spec §5.3: a score of 0 / 0.5 / 1 followed by words or a "/1" is parsed, not unscored."""
    parsed = parse_review(answer)
    assert (parsed.score, parsed.unscored_reason) == (score, None)


@pytest.mark.parametrize(
    "answer", ["<Score>0 or 0.5 or 1</Score>", "<Score>0/0.5/1</Score>", "<Score>0.55</Score>"]
)
def test_echoed_format_line_or_other_numbers_stay_unscored(answer: str) -> None:
    assert parse_review(answer).score is None


class ScriptedProvider:
    """Exact answers by dimension, for a valid review and a refusal; records the prompts."""

    name = "scripted"
    supports_logprobs = False

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.prompts: list[str] = []

    async def chat(self, request: ChatRequest) -> ChatResponse:
        user = request.messages[-1]["content"]
        self.prompts.append(user)
        dim = re.search(r"dimension '(\w+)'", user)[1]  # type: ignore[index]
        return ChatResponse(
            text=self.answers.get(dim, ""), usage=TokenUsage(prompt_tokens=estimate_tokens(user))
        )

    async def option_logprobs(self, *args, **kw):  # pragma: no cover - not used
        raise NotImplementedError


def test_review_and_aggregate_with_scripted_answers(big) -> None:
    provider = ScriptedProvider(
        {
            "EndResult": "<Review>ok\nAspect: fix | Severity: low | Evidence: S100</Review><Score>1</Score>",
            "ToolCalls": "I can't help with that.",
            "Pitfalls": ANSWER,
        }
    )
    client = LLMClient(provider, role="judge", cache=None)
    review = asyncio.run(review_trajectory(client, big, settings=JudgeSettings(budget_tokens=1500)))
    # free text (the backend has no schema mechanism): parsed as released, never re-asked
    assert len(provider.prompts) == 5
    assert {r.mode for r in review.reviews.values()} == {"free text"}
    assert review.reviews["ToolCalls"].attempts == 1
    assert review.reviews["EndResult"].score == 1.0
    assert review.reviews["EndResult"].parsed.evidence[0].step_ids == [100]
    assert review.reviews["ToolCalls"].unscored_reason == "refused"
    assert review.reviews["Pleasantness"].unscored_reason == "empty answer"
    zero = LLMClient(ScriptedProvider({"EndResult": "<Score>0</Score>"}), cache=None)
    other = asyncio.run(review_trajectory(zero, big, dimensions=["EndResult"]))
    summary = aggregate([review, other], ["EndResult", "ToolCalls"])
    assert (summary["EndResult"].mean, summary["EndResult"].unscored_rate) == (0.5, 0.0)
    assert (
        summary["ToolCalls"].mean,
        summary["ToolCalls"].scored,
        summary["ToolCalls"].unscored_rate,
    ) == (None, 0, 1.0)


class SlowProvider:
    """Answers every chat after a short pause, so calls run one at a time queue for a slot."""

    name = "slow"
    supports_logprobs = False

    async def chat(self, request: ChatRequest) -> ChatResponse:
        await asyncio.sleep(0.05)
        return ChatResponse(text="<Score>1</Score>", usage=TokenUsage())

    async def option_logprobs(self, *args, **kw):  # pragma: no cover - not used
        raise NotImplementedError


def test_the_run_summary_says_how_long_a_call_waited_for_its_turn() -> None:
    """The line said `7578s queued in total; wall 554s`: a sum of waits over calls, longer than
    the run, that a user could not read. It says the mean wait and how many calls run at once."""
    client = LLMClient(SlowProvider(), role="judge", cache=None, max_concurrency=1, free=True)
    requests = [ChatRequest(messages=[{"role": "user", "content": f"q{i}"}]) for i in range(3)]

    async def ask_all() -> list[ChatResponse]:
        return await asyncio.gather(*(client.chat(r) for r in requests))

    client.run(ask_all())
    assert client.stats.queued_calls == 3 and client.stats.queued_s >= 0.1  # 0 + 0.05 + 0.1

    client.stats.queued_s, client.stats.queued_calls = 7578.0, 5  # the run the user reported
    line = run_summary(client, [], wall_s=554.0)
    assert "took 554s (0.0s per trajectory)" in line and "queued in total" not in line
    assert line.endswith(
        "1 call at a time: a call waited 1,516s on average for its turn (7,578s in all over 5 calls)"
    )
