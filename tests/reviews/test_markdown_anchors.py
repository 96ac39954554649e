"""Every link `review` Markdown writes (`[S3](#…)` evidence, `[R1](#…)` summary citations) lands on
an anchor of the same document, whatever the trajectory ids hold: a hostile id, two runs with the
same id. The reviews come from the real judge pipeline (scripted answers) on real bench runs."""

from __future__ import annotations

import asyncio
import copy
import re

from agentlens.formats.stream import read_paths
from agentlens.providers import LLMClient
from agentlens.reviews.documents import reviews_document
from agentlens.reviews.judge.judge import review_run
from agentlens.reviews.markdown import reviews_markdown
from tests.reviews.test_cli import TASK
from tests.reviews.test_documents import ANSWER
from tests.reviews.test_judge import ScriptedProvider
from tests.reviews.test_markdown_hostile import HOSTILE_ID

LINK_TARGET = re.compile(r"\]\(#([^)\s]*)\)")
ANCHOR = re.compile(r'<a id="([^"]*)"></a>')


def reviewed_document() -> dict[str, object]:
    trajs = read_paths([TASK]).trajectories[:2]
    provider = ScriptedProvider({"Pitfalls": ANSWER, "EndResult": ANSWER})
    reviews = asyncio.run(
        review_run(LLMClient(provider, cache=None), trajs, dimensions=["EndResult", "Pitfalls"])
    )
    doc = reviews_document("scripted", reviews)
    trajectories = doc["trajectories"]
    hostile = copy.deepcopy(trajectories[0])
    hostile["trajectory_id"] = HOSTILE_ID
    trajectories += [hostile, copy.deepcopy(trajectories[1])]  # the last: an id seen before
    ids = [t["trajectory_id"] for t in trajectories]
    doc["narratives"] = {
        "EndResult": {"text": "R1, R2 and R3 differ.", "unscored_reason": None,
                      "citations": {"R1": ids[0], "R2": ids[1], "R3": HOSTILE_ID}},
    }  # fmt: skip
    return doc


def test_every_link_lands_on_an_anchor_of_the_document() -> None:
    md = reviews_markdown(reviewed_document())
    targets, anchors = LINK_TARGET.findall(md), ANCHOR.findall(md)
    assert any(t.endswith("-S3") for t in targets)  # the evidence links are there
    assert "[R3](#" in md
    assert sorted(set(targets) - set(anchors)) == []
    assert len(anchors) == len(set(anchors))  # an anchor is one place


def test_anchors_are_safe_slugs_of_the_section_order() -> None:
    """The id is trace text: it never becomes an anchor, only the section's place does."""
    md = reviews_markdown(reviewed_document())
    assert all(re.fullmatch(r"t\d+(-S\d+)?", a) for a in ANCHOR.findall(md))
    section = md.split('<a id="t2"></a>', 1)[1].split("\n## ", 1)[0]
    assert "[S3](#t2-S3)" in section and '<a id="t2-S3"></a>' in section


def test_the_summary_says_the_score_scale() -> None:
    """`mean 0.50` and `ToolCalls: 0.5` stood with no scale: a reader could not tell 0.5 of 1
    (tolerable) from 0.5 of 5, or which end is good."""
    md = reviews_markdown(reviewed_document())
    table_end = md.index("| Pitfalls |")
    assert md.index("Each review scores 0, 0.5 or 1 (1 best)") > table_end
