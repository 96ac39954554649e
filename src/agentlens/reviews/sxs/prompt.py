"""SxS prompts (spec §8.1): the task once, both trajectories (compacted; their first step points
to the task block instead of repeating it), both single-run reviews as the primary evidence, and
instructions to stay symmetric and not invent new aspects. For Pitfalls the judge is also given
the burden totals and the deterministic score it must print (spec §6). `structured` asks for the
JSON answer of `sxs.structured` instead of the tagged format (the rest of the prompt is the same)."""

from __future__ import annotations

from typing import Literal

from agentlens.redaction import clip_head
from agentlens.reviews.judge.compact import compact
from agentlens.reviews.judge.judge import DimensionReview
from agentlens.reviews.sxs.mapping import PitfallScore
from agentlens.reviews.sxs.structured import output_instructions, pitfalls_instruction
from agentlens.trajectory import Trajectory

TASK_CHARS = 1200

SYSTEM = (
    "You are a coding expert comparing two runs of AI coding agents on the same task. "
    "Be neutral and symmetric."
)
INSTRUCTIONS = """Compare Agent 1 and Agent 2 on the dimension '{dimension}' only.
Use the two reviews as the primary input, to avoid positional bias. Do not introduce new aspects
or revise the reviews; consult the trajectories only to verify. Keep a neutral, symmetric
narrative and never start with "Agent 1". Severity is relative: the same failure on both sides
is low."""
OUTPUT = """Answer in exactly this format:
<Comparison>
2-5 sentences.
Aspect: <what> | Winner: A1/A2/Tie | Severity: low/medium/high | Evidence: <step ids, e.g. A1 S3, A2 S7>
(1-6 such lines)
</Comparison>
<PairwiseScore>an integer from -5 to 5, negative when Agent 1 is better; |4-5| only for stark contrasts</PairwiseScore>"""


Presence = Literal["scored", "text"]
"""When a single-run review counts as present: `scored` (default; an unscored review is shown
as Unknown) or `text` (the released code: any non-empty review text, scored or not)."""


def has_review(review: DimensionReview | None, presence: Presence = "scored") -> bool:
    if review is None or review.parsed is None:
        return False
    return review.scored if presence == "scored" else bool(review.parsed.review.strip())


def review_text(review: DimensionReview | None, presence: Presence = "scored") -> str:
    if review is None or review.parsed is None or not has_review(review, presence):
        return "Unknown"
    score = review.score if review.score is not None else "unscored"
    return f"{review.parsed.review}\nScore: {score}"


def build_messages(
    dimension: str,
    traj_1: Trajectory,
    traj_2: Trajectory,
    review_1: DimensionReview | None,
    review_2: DimensionReview | None,
    *,
    budget_tokens: int,
    pitfalls: PitfallScore | None = None,
    presence: Presence = "scored",
    structured: bool = False,
) -> list[dict[str, str]]:
    r1, r2 = review_text(review_1, presence), review_text(review_2, presence)
    if "Unknown" in (r1, r2):
        r1 = r2 = "Unknown"  # spec §8.1: if either review is missing, both become Unknown
    half = budget_tokens // 2
    parts = [
        f"<task>\n{clip_head(traj_1.task or traj_2.task or '', TASK_CHARS)}\n</task>",
        f"<agent1_trajectory>\n{_transcript(traj_1, half)}\n</agent1_trajectory>",
        f"<agent2_trajectory>\n{_transcript(traj_2, half)}\n</agent2_trajectory>",
        f"<agent1_review>\n{r1}\n</agent1_review>",
        f"<agent2_review>\n{r2}\n</agent2_review>",
        INSTRUCTIONS.format(dimension=dimension),
    ]
    if pitfalls is not None and structured:
        parts.append(pitfalls_instruction(pitfalls.line))
    elif pitfalls is not None:
        parts.append(
            "Pitfalls score is fixed by the burden totals of the two reviews. Print this line "
            f"before the score and use its score:\n{pitfalls.line}"
        )
    parts.append(output_instructions() if structured else OUTPUT)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


def _transcript(traj: Trajectory, budget_tokens: int) -> str:
    return compact(traj, budget_tokens, task_elsewhere=True).text
