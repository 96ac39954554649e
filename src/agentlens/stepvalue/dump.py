"""`stepvalue --dump-prompts DIR`: the exact prompts a run would send, written without calling a
model. The states come through the same read path, redaction and projection as a real run.

Pass 1 (the label-free rationale) and pass 2 of every channel that writes no rationale are
dumped exactly, for every permutation. A rationale channel's pass-2 prompt embeds the text the
evaluator writes in pass 1, so it cannot exist before the run; its pass-1 prompt is dumped.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from agentlens.errors import ConfigError
from agentlens.providers.prompt_dump import PlannedCall, dump_prompts
from agentlens.stepvalue.config import RunConfig
from agentlens.stepvalue.model import Problem
from agentlens.stepvalue.permutations import label_mapping, view_labels
from agentlens.stepvalue.prompts import rationale_messages, scoring_messages
from agentlens.stepvalue.runner import Runner

SCORING_TOKENS = 1
PROMPTS_ONLY = "prompts-only"
"""The evaluator's name when none is given: the prompts do not depend on the model."""


class _NoCalls:
    """Stands in for the evaluator while prompts are only planned: any call is a bug."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def chat(self, *_: Any, **__: Any) -> NoReturn:
        raise ConfigError("--dump-prompts calls no model")

    async def option_logprobs(self, *_: Any, **__: Any) -> NoReturn:
        raise ConfigError("--dump-prompts calls no model")


def planned_prompts(
    problems: Sequence[Problem], config: RunConfig, evaluator: str
) -> list[PlannedCall]:
    """Every distinct prompt of the run, named `<slice>.state-NNN.<channel>.<pass>`."""
    runner = Runner(_NoCalls(evaluator), problems, config)
    calls: list[PlannedCall] = []
    for slot in runner.slots():
        pi, which, pos = slot
        problem = problems[pi]
        for channel in runner.channels:
            evidence = runner.evidence(slot, channel)
            stem = f"{which}.state-{pos:03d}.{channel.name}"
            if channel.generates_rationale:
                messages = rationale_messages(problem.view, evidence, config.max_question_chars)
                tokens = channel.rationale_tokens or 0
                calls.append(
                    PlannedCall(problem.trajectory_id, f"{stem}.rationale", messages, None, tokens)
                )
                continue
            for k in range(config.permutations):
                ids = [c.id for c in problem.view.candidates]
                mapping = label_mapping(ids, k, config.label_scheme, view_labels(problem.view))
                messages = scoring_messages(
                    problem.view, evidence, None, mapping, direct=channel.direct,
                    order=config.order, question_limit=config.max_question_chars,
                    direct_layout=config.direct_layout,
                )  # fmt: skip
                calls.append(
                    PlannedCall(
                        problem.trajectory_id,
                        f"{stem}.score-perm{k}",
                        messages,
                        None,
                        SCORING_TOKENS,
                    )
                )
    return _distinct(calls)


def _distinct(calls: list[PlannedCall]) -> list[PlannedCall]:
    """One file per distinct prompt of a trajectory (a state shared by two steps is scored
    once, as in the run)."""
    seen: set[tuple[str, str]] = set()
    kept = []
    for call in calls:
        if (call.trajectory_id, call.sha256) not in seen:
            seen.add((call.trajectory_id, call.sha256))
            kept.append(call)
    return kept


def write_prompts(
    problems: Sequence[Problem], config: RunConfig, evaluator: str, directory: str | Path
) -> list[Path]:
    """The prompts as JSON files under `directory/<trajectory>/` (the format `review
    --dump-prompts` writes); returns their paths."""
    return dump_prompts(planned_prompts(problems, config, evaluator), directory)
