"""semantic_gold_gain (spec §6.4) on the closed {supported, refuted, NEI} set, by hand."""

from __future__ import annotations

import math

import pytest

from agentlens.stepvalue.belief import belief_from_probs
from agentlens.stepvalue.model import Candidate, EvalView
from agentlens.stepvalue.prompts import scoring_messages
from agentlens.stepvalue.semantic import closed_set_verdicts, insufficiency_id, semantic_gold_gain

FEVER = ("NOT ENOUGH INFO", "REFUTES", "SUPPORTS")


def test_closed_set_spellings_map_and_other_sets_do_not() -> None:
    assert closed_set_verdicts(FEVER) == {
        "NOT ENOUGH INFO": "nei",
        "REFUTES": "refuted",
        "SUPPORTS": "supported",
    }
    assert closed_set_verdicts(["supported", "refuted", "not_enough_information"]) is not None
    assert closed_set_verdicts(["supported", "refuted", "statins"]) is None
    assert closed_set_verdicts(["supported", "supports", "refuted"]) is None
    assert closed_set_verdicts(["supported", "refuted", "nei", "none-of-the-above"]) is None


def test_semantic_gain_is_distance_to_gold_before_minus_after() -> None:
    before = belief_from_probs(FEVER, [0.5, 0.3, 0.2])  # NEI, refuted, supported
    after = belief_from_probs(FEVER, [0.1, 0.1, 0.8])
    # E[emb] = Σ b·emb with NEI (0,0), refuted (−1,1), supported (1,1); gold = supported (1,1)
    x0, y0 = 0.2 - 0.3, 0.3 + 0.2
    x1, y1 = 0.8 - 0.1, 0.1 + 0.8
    d0, d1 = math.hypot(x0 - 1, y0 - 1), math.hypot(x1 - 1, y1 - 1)
    gain, reason = semantic_gold_gain(before, after, "SUPPORTS")
    assert gain == pytest.approx(d0 - d1) and gain > 0
    assert f"{d0:.4f}" in reason
    # towards NEI (gold at the origin) the distance is just the norm of E[emb]
    gain_nei, _ = semantic_gold_gain(before, after, "NOT ENOUGH INFO")
    assert gain_nei == pytest.approx(math.hypot(x0, y0) - math.hypot(x1, y1))


def test_semantic_gain_is_none_off_the_closed_set() -> None:
    ids = ("a", "b", "none-of-the-above")
    belief = belief_from_probs(ids, [0.2, 0.3, 0.5])
    assert semantic_gold_gain(belief, belief, "a")[0] is None


def test_direct_prompt_names_the_real_insufficiency_candidate() -> None:
    assert insufficiency_id(["x", "none-of-the-above"]) == "none-of-the-above"
    assert insufficiency_id(FEVER) == "NOT ENOUGH INFO"
    assert insufficiency_id(["resolved", "not-resolved"]) is None
    view = EvalView("Is the claim true?", tuple(Candidate(c, c.lower()) for c in FEVER))
    view = EvalView(view.question, view.candidates, insufficiency_id(FEVER))
    mapping = {"A": FEVER[0], "B": FEVER[1], "C": FEVER[2]}
    (_, user) = scoring_messages(view, "{}", None, mapping, direct=True)
    assert "choose NOT ENOUGH INFO." in user["content"]
    assert "not_enough_information" not in user["content"]


def test_two_verdict_sets_are_closed_sets_too() -> None:
    # the authors' code embeds any candidate set drawn from the three verdicts (spec §6.4)
    ids = ("supported", "refuted")
    assert closed_set_verdicts(ids) == {"supported": "supported", "refuted": "refuted"}
    assert insufficiency_id(ids) is None
    before, after = belief_from_probs(ids, [0.5, 0.5]), belief_from_probs(ids, [0.9, 0.1])
    # E[emb]: before (0, 1), after (0.8, 1); gold refuted at (−1, 1)
    gain, _ = semantic_gold_gain(before, after, "refuted")
    assert gain == pytest.approx(1.0 - 1.8)
