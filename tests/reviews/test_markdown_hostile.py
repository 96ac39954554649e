"""`review --md` renders trace text (the trajectory id) and model text (evidence aspects,
pitfall names) into Markdown, where raw HTML is live in most renderers: it goes in escaped,
and a step link's target stays one link however odd the id."""

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
    # in a link target the id is percent-encoded
    assert "[S3](#run%20%3Cimg%20src%3Dx%20onerror%3D%22alert%281%29%22%3E%20%29" in md
