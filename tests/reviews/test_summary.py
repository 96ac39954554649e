"""Run-level summaries (spec §5.5): aspect groups citing R<k>, capped at 400 words, citations
mapped to the reviewed trajectories and linked in the Markdown report. The reviews are real
dev-set trajectories judged by a scripted provider (exact answers the 135M model cannot give);
the local-model path is in test_local_model.py."""

from __future__ import annotations

import asyncio

from agentlens.formats.stream import read_paths
from agentlens.providers import LLMClient
from agentlens.reviews.documents import reviews_document
from agentlens.reviews.judge.judge import review_run
from agentlens.reviews.judge.summary import MAX_WORDS, summarize
from agentlens.reviews.markdown import reviews_markdown
from tests.conftest import BENCH
from tests.reviews.test_judge import ScriptedProvider

TASK = BENCH / "trajectories" / "psf__requests-1724"
REVIEW = "<Review>Retried a failing command.\nAspect: retry | Severity: high | Evidence: S2</Review><Score>0.5</Score>"


class SummaryProvider(ScriptedProvider):
    """Single-run answers by dimension; a fixed answer for the summary prompt."""

    def __init__(self, summary: str) -> None:
        super().__init__({"ToolCalls": REVIEW})
        self.summary = summary

    async def chat(self, request):  # type: ignore[no-untyped-def]
        if "aspect groups" in request.messages[-1]["content"]:
            self.prompts.append(request.messages[-1]["content"])
            from agentlens.providers import ChatResponse

            return ChatResponse(text=self.summary)
        return await super().chat(request)


def reviewed(provider: SummaryProvider):
    trajs = read_paths([TASK]).trajectories[:3]
    client = LLMClient(provider, cache=None)
    reviews = asyncio.run(review_run(client, trajs, dimensions=["ToolCalls"]))
    return client, reviews


def test_groups_and_citations_map_to_the_reviewed_trajectories() -> None:
    answer = (
        "<Summary>\nAspect group: blind retries | Reviews: R1, R3 | Both retried.\n"
        "Aspect group: none | Reviews: R9 | Bogus.\nRuns R1 and R2 retried; R9 is not a review.\n"
        "</Summary>"
    )
    provider = SummaryProvider(answer)
    client, reviews = reviewed(provider)
    narrative = asyncio.run(summarize(client, "ToolCalls", reviews))
    ids = [r.trajectory_id for r in reviews]
    assert narrative.citations == {1: ids[0], 2: ids[1], 3: ids[2]}
    assert narrative.unknown_citations == [9]
    assert [(g.name, g.reviews) for g in narrative.groups] == [
        ("blind retries", [1, 3]),
        ("none", []),
    ]
    assert "<R3>" in provider.prompts[-1] and "<R4>" not in provider.prompts[-1]
    doc = reviews_document("scripted", reviews)
    doc["narratives"] = {"ToolCalls": narrative.to_dict()}
    md = reviews_markdown(doc)
    assert "[R1](#t0)" in md and "[R3](#t2)" in md and "R9" in md and "[R9]" not in md
    assert f'<a id="t2"></a>{ids[2]}' in md


def test_prose_is_capped_at_400_words() -> None:
    prose = " ".join(f"w{i}" for i in range(MAX_WORDS + 100))
    provider = SummaryProvider(f"<Summary>\nAspect group: x | Reviews: R1 | y\n{prose}</Summary>")
    client, reviews = reviewed(provider)
    narrative = asyncio.run(summarize(client, "ToolCalls", reviews))
    assert narrative.truncated
    body = narrative.text.split("\n\n", 1)[1]
    assert len(body.split()) == MAX_WORDS


def test_answer_without_summary_is_reported_not_invented() -> None:
    client, reviews = reviewed(SummaryProvider("The runs were fine."))
    narrative = asyncio.run(summarize(client, "ToolCalls", reviews))
    assert (narrative.text, narrative.unscored_reason) == (None, "no <Summary> tag")


def test_repeated_tags_without_content_are_an_empty_summary() -> None:
    """SmolLM2-135M's real answer to the summary prompt (`review --summary` on two psf-1724
    traces) is the opening tag repeated; that is no summary, and tags are never rendered."""
    client, reviews = reviewed(SummaryProvider("<Summary>\n\n" * 40))
    narrative = asyncio.run(summarize(client, "ToolCalls", reviews))
    assert (narrative.text, narrative.unscored_reason) == (None, "empty <Summary>")
    answer = "<Summary>\nAspect group: <b>x</b> | Reviews: R1 | y\nSee R1.</Summary>"
    client, reviews = reviewed(SummaryProvider(answer))
    doc = reviews_document("scripted", reviews)
    doc["narratives"] = {
        "ToolCalls": asyncio.run(summarize(client, "ToolCalls", reviews)).to_dict()
    }
    md = reviews_markdown(doc)
    assert "&lt;b&gt;x&lt;/b&gt;" in md and "<b>" not in md and "[R1](#t0)" in md
