"""Run settings, the evaluator seam the runner needs, and what a run cost."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from agentlens.errors import ConfigError
from agentlens.providers.types import ChatRequest, ChatResponse, Message, OptionLogprobs
from agentlens.stepvalue.belief import FLOOR
from agentlens.stepvalue.channels import DEFAULT_CHANNELS, Channel, get_channel
from agentlens.stepvalue.cost import CostWeights
from agentlens.stepvalue.metrics import EPSILON
from agentlens.stepvalue.model import Problem
from agentlens.stepvalue.permutations import LabelScheme, view_labels
from agentlens.stepvalue.projection import MAX_STATE_CHARS, SLICES, Slice
from agentlens.stepvalue.prompts import MAX_QUESTION_CHARS, DirectLayout, Order


class Evaluator(Protocol):
    """The part of `LLMClient` the runner uses."""

    @property
    def name(self) -> str: ...
    async def chat(self, request: ChatRequest) -> ChatResponse: ...
    async def option_logprobs(
        self,
        messages: list[Message],
        labels: Sequence[str],
        *,
        floor: float = ...,
        top_k: int = ...,
    ) -> OptionLogprobs: ...


@dataclass(frozen=True)
class RunConfig:
    channels: tuple[str, ...] = DEFAULT_CHANNELS
    permutations: int = 4
    slices: tuple[Slice, ...] = ("full",)
    rationale_tokens: int | None = None
    floor: float = FLOOR
    top_k: int = 20
    epsilon: float = EPSILON
    leak_policy: Literal["error", "warn"] = "error"
    fallback_policy: Literal["floor", "error"] = "floor"
    """A top-k label absent from the list: `floor` scores it at the floor and flags the step
    (the released tool's live setting); `error` stops the run (spec §5.1 step 5)."""
    seed: int = 7
    order: Order = "mapping-last"
    direct_layout: DirectLayout = "mapping-last"
    max_state_chars: int = MAX_STATE_CHARS
    max_question_chars: int = MAX_QUESTION_CHARS
    label_scheme: LabelScheme = "letters"
    lam: float = 0.0
    """λ of net_asv = ΔH − λ·C (spec §6.1); 0 reports net_asv = ΔH."""
    cost_weights: CostWeights = field(default_factory=CostWeights)
    concurrency: int = 1
    """States scored at once. 1 suits a single local model (each state's prompts then follow
    one another and share the cached prefix); raise it for remote APIs."""

    def validate(self) -> None:
        """Fail fast, with the valid choices, on an unknown channel or slice."""
        self.resolved_channels()
        unknown = [s for s in self.slices if s not in SLICES]
        if unknown:
            raise ConfigError(f"unknown slice {unknown[0]!r}; known slices: {', '.join(SLICES)}")
        if self.permutations < 1:
            raise ConfigError("permutations must be at least 1")

    def resolved_channels(self) -> list[Channel]:
        return [get_channel(name, self.rationale_tokens) for name in self.channels]

    def channels_resolved_names(self) -> list[str]:
        return [c.name for c in self.resolved_channels()]


@dataclass
class Rationale:
    text: str
    leaks: list[str]
    coverage: float
    from_cache: bool


@dataclass
class Costs:
    transitions: int = 0
    distinct_states: int = 0
    rationale_calls: int = 0
    scoring_calls: int = 0
    naive_calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    wall_s: float = 0.0
    errors: list[str] = field(default_factory=list)

    @property
    def evaluator_calls(self) -> int:
        return self.rationale_calls + self.scoring_calls


MAX_OPTIONS = 10
ONE_DIGIT_LABELS = 9


def check_scorable(evaluator_name: str, problems: Sequence[Problem], config: RunConfig) -> None:
    """Refuse what the forced-choice read-out cannot score (spec §4.2): more than 10 candidates
    (or more than the top-k list holds), and reasoner models, which return no log-probs."""
    if "reasoner" in evaluator_name.lower():
        raise ConfigError(
            f"evaluator {evaluator_name!r} is a reasoner model: it returns no log-probabilities; "
            "use a chat model (e.g. deepseek:deepseek-chat)"
        )
    limit = min(MAX_OPTIONS, config.top_k)
    for problem in problems:
        k = len(problem.view.candidates)
        if k > limit:
            raise ConfigError(
                f"{problem.trajectory_id}: {k} candidates, but one option label can be read for "
                f"at most {limit} (10 labels, top_k {config.top_k}); use fewer candidates"
            )
        _check_numeric_labels(problem, config.label_scheme)


def _check_numeric_labels(problem: Problem, scheme: LabelScheme) -> None:
    """The label is read from one token (spec §5): "10" is two to most tokenizers (SmolLM2's
    too), so its candidate would be scored at the floor in every state. A record's own labels
    replace the scheme's and are the record's choice."""
    k = len(problem.view.candidates)
    if scheme == "numeric" and k > ONE_DIGIT_LABELS and view_labels(problem.view) is None:
        raise ConfigError(
            f"{problem.trajectory_id}: {k} candidates, but --label-scheme numeric has one-digit "
            f'labels for only {ONE_DIGIT_LABELS} ("10" is not one token); use --label-scheme '
            f"letters or at most {ONE_DIGIT_LABELS} candidates"
        )
