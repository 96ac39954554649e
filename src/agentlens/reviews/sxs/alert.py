"""The judge alert as the released evaluator computes it (spec §8.4): one more LLM call per
dimension summarises all comparisons `C<k>` and answers `<AlertFlag>true</AlertFlag>` iff some
aspect group has the same winner (not Tie) in at least 3 comparisons and at least one entry of
high severity. Used by `sxs --profile released`; the default applies that rule to the parsed
comparison lines without a second LLM call (`sxs.judge_alert`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agentlens.errors import ProviderError
from agentlens.providers import ChatRequest, LLMClient
from agentlens.reviews.sxs.parse import ParsedComparison

INSTRUCTIONS = """Above are {n} side-by-side comparisons C1 to C{n} of two agents on the dimension
'{dimension}'. Group their aspects into aspect groups. For each group give the winner (A1, A2 or
Tie), the comparisons it rests on as C<k>, and the highest severity among them. The alert flag is
true if and only if some group has the same winner (not Tie) in at least 3 comparisons and at
least one of its entries has high severity.
Answer in exactly this format:
<Comparison>
Aspect group: <name> | Winner: A1/A2/Tie | Comparisons: C<k>, C<k> | Severity: low/medium/high
(one line per group), then a short summary.
</Comparison>
<AlertFlag>true or false</AlertFlag>"""
FLAG = re.compile(r"<AlertFlag>\s*(true|false)\b", re.IGNORECASE)


@dataclass(frozen=True)
class LlmAlert:
    alert: bool
    reason: str


def comparisons_listing(keys: Sequence[str], comparisons: Sequence[ParsedComparison]) -> str:
    """`Comparison: C<k> (key)`, its text and `Score given`, as the released listing."""
    lines = []
    for k, (key, parsed) in enumerate(zip(keys, comparisons, strict=True), 1):
        lines.append(f"Comparison: C{k} ({key})")
        if parsed.comparison:
            lines.append(parsed.comparison)
        if parsed.score is not None:
            lines.append(f"Score given: {parsed.score}")
        lines.append("")
    note = "(Negative score favours Agent 1, positive -- Agent 2. Scores are from -5 to 5.)"
    return "\n".join(lines).strip() + f"\n\n{note}"


async def llm_judge_alert(
    client: LLMClient,
    dimension: str,
    keys: Sequence[str],
    comparisons: Sequence[ParsedComparison],
    *,
    max_tokens: int = 700,
) -> LlmAlert:
    """Ask for the alert flag; no flag in the answer (or a provider error) means no alert."""
    user = f"{comparisons_listing(keys, comparisons)}\n\n" + INSTRUCTIONS.format(
        n=len(keys), dimension=dimension
    )
    messages = [
        {"role": "system", "content": "You are a coding expert summarising agent comparisons."},
        {"role": "user", "content": user},
    ]
    try:
        answer = await client.chat(ChatRequest(messages=messages, max_tokens=max_tokens, seed=42))
    except ProviderError as exc:
        return LlmAlert(False, f"LLM judge alert: provider error ({exc}); no alert")
    found = FLAG.findall(answer.text)
    if not found:
        return LlmAlert(False, "LLM judge alert: no <AlertFlag> in the answer; no alert")
    flag = found[-1].lower() == "true"
    return LlmAlert(flag, f"LLM judge alert: AlertFlag {str(flag).lower()}")
