"""Closed-set candidates and `semantic_gold_gain` (spec §6.4).

A candidate set is the closed fact-checking set when its ids name distinct verdicts (all three, or
two of them: the authors' code accepts any subset), in any spelling below (ids are lower-cased
and every run of non-alphanumerics becomes "_"):

| verdict | ids accepted | embedding |
|---|---|---|
| supported | supported, supports, support, entailment, entailed, true | (1, 1) |
| refuted | refuted, refutes, refute, contradiction, contradicted, false | (−1, 1) |
| NEI | nei, not_enough_info, not_enough_information, notenoughinfo, insufficient, insufficient_evidence, neutral | (0, 0) |

`semantic_gold_gain = ‖E_b⁻[emb] − emb(g)‖ − ‖E_b⁺[emb] − emb(g)‖` (Euclidean): positive when the
expected verdict moved towards the gold. Any other candidate set (open QA, coding) gets None.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from agentlens.stepvalue.belief import Belief

OPEN_QA_INSUFFICIENCY = "none-of-the-above"
SPELLINGS = {
    "supported": ("supported", "supports", "support", "entailment", "entailed", "true"),
    "refuted": ("refuted", "refutes", "refute", "contradiction", "contradicted", "false"),
    "nei": (
        "nei",
        "not_enough_info",
        "not_enough_information",
        "notenoughinfo",
        "insufficient",
        "insufficient_evidence",
        "neutral",
    ),
}
EMBEDDING = {"supported": (1.0, 1.0), "refuted": (-1.0, 1.0), "nei": (0.0, 0.0)}
_VERDICT = {spelling: verdict for verdict, names in SPELLINGS.items() for spelling in names}


def normalise(candidate_id: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", candidate_id.lower()).strip("_")


def closed_set_verdicts(candidate_ids: Sequence[str]) -> dict[str, str] | None:
    """Candidate id -> verdict when every id is a distinct verdict of {supported, refuted, NEI}
    (all three, or two of them, as the authors' code accepts any subset); else None."""
    verdicts = {c: _VERDICT.get(normalise(c)) for c in candidate_ids}
    found = [v for v in verdicts.values() if v is not None]
    if len(candidate_ids) < 2 or len(found) != len(candidate_ids) or len(set(found)) != len(found):
        return None
    return {c: v for c, v in verdicts.items() if v is not None}


def insufficiency_id(candidate_ids: Sequence[str]) -> str | None:
    """The candidate that means "the evidence does not decide" (decision §13.10): the open-QA
    `none-of-the-above`, or the NEI verdict of a closed set."""
    if OPEN_QA_INSUFFICIENCY in candidate_ids:
        return OPEN_QA_INSUFFICIENCY
    verdicts = closed_set_verdicts(candidate_ids)
    if verdicts:
        return next((c for c, v in verdicts.items() if v == "nei"), None)
    return None


def _distance_to_gold(belief: Belief, verdicts: dict[str, str], gold: str) -> float:
    x = sum(
        p * EMBEDDING[verdicts[c]][0]
        for c, p in zip(belief.candidate_ids, belief.probs, strict=True)
    )
    y = sum(
        p * EMBEDDING[verdicts[c]][1]
        for c, p in zip(belief.candidate_ids, belief.probs, strict=True)
    )
    gx, gy = EMBEDDING[verdicts[gold]]
    return math.hypot(x - gx, y - gy)


def semantic_gold_gain(before: Belief, after: Belief, gold: str) -> tuple[float | None, str]:
    """Distance of the expected embedding to the gold's, before minus after; None off the set."""
    verdicts = closed_set_verdicts(before.candidate_ids)
    if verdicts is None:
        return None, "semantic_gold_gain: not a closed {supported, refuted, NEI} set"
    d0 = _distance_to_gold(before, verdicts, gold)
    d1 = _distance_to_gold(after, verdicts, gold)
    return d0 - d1, f"semantic_gold_gain = {d0:.4f} − {d1:.4f} = {d0 - d1:.4f}"
