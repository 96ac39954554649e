"""`review --md` renders trace text (the trajectory id) and model text (evidence aspects,
pitfall names) into Markdown, where raw HTML is live in most renderers: it goes in escaped,
and a step link's target is the section's place, never the id."""

from __future__ import annotations

from agentlens.reviews.markdown import reviews_markdown

HOSTILE_ID = 'run <img src=x onerror="alert(1)"> ) [x](javascript:alert(2))'
ASPECT = "<script>alert(3)</script>"


def document() -> dict[str, object]:
    review = {
        "evidence": [{"aspect": ASPECT, "severity": "high", "step_ids": [3]}],
        "pitfalls": [
            {
                "name": "<b onmouseover=alert(4)>x</b>",
                "category": "<i>",
                "severity": "low",
                "repeated": False,
            }
        ],
    }
    reviews = {"Pitfalls": {"score": 1, "unscored_reason": None, "review": review}}
    return {"judge": "scripted", "summary": {},
            "trajectories": [{"trajectory_id": HOSTILE_ID, "reviews": reviews}]}  # fmt: skip


def test_hostile_ids_and_model_text_are_escaped() -> None:
    md = reviews_markdown(document())
    assert "<img" not in md and "<script" not in md and "<b " not in md and "<i>" not in md
    assert "&lt;img src=x onerror=" in md and "&lt;script&gt;alert(3)" in md
    assert "\\[x\\](javascript:" in md  # the id's link syntax is escaped: no link
    assert md.count("](javascript:") == md.count("\\](javascript:") == 1
    # a link target is the section's place, never the id
    assert "[S3](#t0-S3)" in md and '<a id="t0-S3"></a>S3: Pitfalls (&lt;script&gt;' in md


def test_a_summary_and_an_unscored_reason_are_escaped_too() -> None:
    """Model text in a dimension summary and in an unscored reason (up to 20 characters of the
    answer, or a server's error) is shown, not rendered; the summary's citations still link."""
    doc = document()
    doc["trajectories"][0]["reviews"]["EndResult"] = {  # type: ignore[index]
        "score": None, "unscored_reason": "<img src=//e.co>", "review": None,
    }  # fmt: skip
    doc["narratives"] = {
        "Pitfalls": {"text": "R1 did [x](javascript:alert(5))\n<b>bold</b>",
                     "citations": {"R1": HOSTILE_ID}, "unscored_reason": None},
        "EndResult": {"text": None, "citations": {}, "unscored_reason": "<img src=//f.co>"},
    }  # fmt: skip
    md = reviews_markdown(doc)
    assert "<img" not in md and "<b>" not in md
    assert "](javascript:alert(5))" not in md.replace("\\](javascript:alert(5))", "")
    assert "unscored (&lt;img src=//e.co&gt;)" in md
    assert "(no summary: &lt;img src=//f.co&gt;)" in md
    assert "[R1](#t0) did \\[x\\](javascript:alert(5))  \n&lt;b&gt;bold&lt;/b&gt;" in md


def test_evidence_citing_no_step_keeps_its_text_escaped() -> None:
    """`Evidence: 1` cites no step id: the line says so and keeps what the judge wrote."""
    doc = document()
    review = doc["trajectories"][0]["reviews"]["Pitfalls"]["review"]  # type: ignore[index]
    review["evidence"] = [
        {"aspect": "tests", "severity": "low", "evidence": "1 <b>x</b>", "step_ids": []},
        {"aspect": "edits", "severity": "low", "evidence": "", "step_ids": []},
    ]
    md = reviews_markdown(doc)
    assert "  - tests | low | no step cited: 1 &lt;b&gt;x&lt;/b&gt;\n" in md
    assert "  - edits | low | no step cited\n" in md
