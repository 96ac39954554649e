"""Label-token normalisation (spec §5.1 step 2, §5.2): tokens such as "A." or " B：" count for
their label; checked against the spec's formula worked out here, and on the real local model."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest

from agentlens.providers.openai_wire import options_from_top_k
from agentlens.stepvalue.belief import belief_from_labels
from agentlens.stepvalue.labels import fold, normalise_token, requested, spellings

FLOOR = -20.0
# a first-token top-k list as an API returns it (DeepSeek/GPT tokenizers merge "A." and "B："):
TOP_K = [
    ("A", -0.4),
    (" A", -3.0),
    ("A.", -2.5),
    ("B：", -4.0),
    (" B)", -5.0),
    ("(C", -6.0),  # "(" is not stripped: not C
    ("C", -31.0),  # below the floor: clamped to it
    ("The", -1.2),
]


def spec_scores(labels: list[str]) -> dict[str, float]:
    """§5.1 steps 2-5 as written: strip whitespace then ".):：", keep label tokens, logsumexp of
    max(logprob, floor) per label, the floor for a label with no token."""
    kept: dict[str, list[float]] = {label: [] for label in labels}
    for token, logprob in TOP_K:
        name = token.strip().strip(".):：")
        if name in kept:
            kept[name].append(max(logprob, FLOOR))
    return {
        label: math.log(sum(math.exp(v) for v in values)) if values else FLOOR
        for label, values in kept.items()
    }


def test_spellings_all_normalise_back_to_their_label() -> None:
    for label in ("A", "J", "10"):
        names = spellings(label)
        assert names[0] == label and len(set(names)) == len(names)
        assert {normalise_token(" " + n + " ") for n in names} == {label}


def test_top_k_tokens_with_punctuation_count_for_their_label() -> None:
    labels = ["A", "B", "C", "D"]
    mapping = dict(zip(labels, ["c1", "c2", "c3", "c4"], strict=True))
    folded = fold(options_from_top_k(TOP_K, requested(labels), FLOOR), labels, FLOOR)
    belief = belief_from_labels(
        folded.logprobs, folded.sources, mapping, floor=FLOOR, label_variants=folded.variants
    )
    expected = spec_scores(labels)
    assert belief.scores == pytest.approx([expected[label] for label in labels])
    total = sum(math.exp(v) for v in expected.values())
    assert belief.probs == pytest.approx([math.exp(expected[lb]) / total for lb in labels])
    assert belief.sources == ("top_k", "top_k", "top_k", "floor")  # C listed (clamped); D absent
    # asking the provider for the bare labels alone (whitespace-only matching) misses "A." and "B："
    bare = options_from_top_k(TOP_K, labels, FLOOR)
    assert bare["A"].logprob < expected["A"] - 0.05 and bare["B"].source == "floor"


@pytest.mark.llm
def test_exact_read_out_sums_every_vocabulary_spelling(local_gguf_path: Path) -> None:
    from agentlens.providers import get_provider

    client = get_provider(f"llamacpp:{local_gguf_path}", cache=False)
    messages = [{"role": "user", "content": "Answer with one option label. A = yes, B = no."}]
    labels = ["A", "B"]
    plain = asyncio.run(client.option_logprobs(messages, labels))
    every = asyncio.run(client.option_logprobs(messages, requested(labels)))
    folded = fold(every.options, labels, FLOOR)
    for label in labels:
        spelled = [every.options[s].logprob for s in spellings(label)]
        found = [
            v
            for s, v in zip(spellings(label), spelled, strict=True)
            if every.options[s].source == "exact"
        ]
        # the folded value is the logsumexp over all spellings the vocabulary has
        assert folded.logprobs[label] == pytest.approx(math.log(sum(math.exp(v) for v in found)))
        assert folded.logprobs[label] >= plain.options[label].logprob - 1e-9
        assert folded.sources[label] == "exact"
