"""The two-pass protocol over many trajectories (spec §4, §7, §8).

Pass 1 writes one label-free rationale per distinct (evidence, candidates, length), cached by
hash; pass 2 scores each distinct prompt once. Permutations of one state are sent back to back,
mapping last, so a prefix-caching server reuses the shared part. Beliefs are then assembled into
per-transition rows by `results.py`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from collections.abc import Coroutine, Sequence
from typing import Any

from agentlens.errors import AgentLensError, CapabilityError, ConfigError
from agentlens.providers.types import ChatRequest, Message
from agentlens.stepvalue.belief import Belief, belief_from_labels
from agentlens.stepvalue.channels import Channel, extractive_buffer
from agentlens.stepvalue.config import Costs, Evaluator, Rationale, RunConfig, check_scorable
from agentlens.stepvalue.labels import fold, requested
from agentlens.stepvalue.model import Problem
from agentlens.stepvalue.permutations import label_mapping, view_labels
from agentlens.stepvalue.plan import StateTable, naive_calls, state_table
from agentlens.stepvalue.projection import Slice, cut
from agentlens.stepvalue.prompts import (
    NO_EVIDENCE,
    rationale_messages,
    scoring_messages,
)
from agentlens.stepvalue.redaction import (
    LeakageError,
    mask_markers,
    rationale_coverage,
    rationale_leaks,
)

Slot = tuple[int, Slice, int]  # (problem index, slice, state position)
BeliefKey = tuple[int, Slice, str, int, int]  # (problem, slice, channel, position, permutation)


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


class FloorError(AgentLensError):
    """A candidate's label is missing from the top-k list under fallback policy `error`."""


class Runner:
    """Scores every distinct state of `problems` under every channel, slice and permutation."""

    def __init__(self, evaluator: Evaluator, problems: Sequence[Problem], config: RunConfig):
        config.validate()
        check_scorable(evaluator.name, problems, config)
        self.evaluator = evaluator
        self.problems = list(problems)
        self.config = config
        self.channels = config.resolved_channels()
        self.tables = {
            (pi, s): state_table(p, s, config.max_state_chars)
            for pi, p in enumerate(self.problems)
            for s in config.slices
        }
        self.rationales: dict[str, Rationale] = {}
        self.beliefs: dict[BeliefKey, Belief | None] = {}
        self.slot_rationale: dict[tuple[Slot, str], str] = {}
        self.costs = Costs()

    def table(self, slot: Slot) -> StateTable:
        return self.tables[(slot[0], slot[1])]

    def evidence(self, slot: Slot, channel: Channel) -> str:
        table = self.table(slot)
        if channel.evidence == "none":
            return NO_EVIDENCE
        if channel.evidence == "extract":
            policy = self.problems[slot[0]].redaction
            return cut(extractive_buffer(table.raw[slot[2]], policy), self.config.max_state_chars)
        return table.texts[slot[2]]

    def slots(self) -> list[Slot]:
        return [(pi, s, pos) for (pi, s), t in self.tables.items() for pos in range(len(t.texts))]

    async def run(self) -> None:
        start = time.perf_counter()
        await self._rationales()
        await self._scores()
        self.costs.wall_s = time.perf_counter() - start
        self._count()

    def _count(self) -> None:
        c, cfg = self.costs, self.config
        c.transitions = sum(len(p.transitions) for p in self.problems) * len(cfg.slices)
        c.distinct_states = sum(len(t.texts) for t in self.tables.values())
        gen = sum(1 for ch in self.channels if ch.generates_rationale)
        c.naive_calls = naive_calls(c.transitions, cfg.permutations, gen, len(self.channels))

    # pass 1 -------------------------------------------------------------------------------
    def _rationale_key(self, pi: int, evidence: str, tokens: int) -> str:
        """Spec §4.1 keys on the state, which there holds the question; here the question is in
        the prompt, so the key is the whole prompt: one rationale per question, never shared
        between tasks whose states render alike (every coding run starts from `{}`)."""
        view = self.problems[pi].view
        messages = rationale_messages(view, evidence, self.config.max_question_chars)
        return _digest([self.evaluator.name, "label-free", tokens, messages])

    async def _rationales(self) -> None:
        jobs: dict[str, tuple[int, str, int]] = {}
        for channel in self.channels:
            if not channel.generates_rationale:
                continue
            assert channel.rationale_tokens is not None
            for slot in self.slots():
                evidence = self.evidence(slot, channel)
                key = self._rationale_key(slot[0], evidence, channel.rationale_tokens)
                jobs.setdefault(key, (slot[0], evidence, channel.rationale_tokens))
                self.slot_rationale[(slot, channel.name)] = key
        await self._bounded([self._one_rationale(k, *job) for k, job in jobs.items()])
        self._swap()

    async def _bounded(self, work: list[Coroutine[Any, Any, None]]) -> None:
        """Run coroutines in order, at most `config.concurrency` at a time."""
        gate = asyncio.Semaphore(max(1, self.config.concurrency))

        async def one(coro: Coroutine[Any, Any, None]) -> None:
            try:
                async with gate:
                    await coro
            finally:  # cancelled in the queue (another call failed): never started, so close it
                coro.close()

        await asyncio.gather(*(one(c) for c in work))

    async def _one_rationale(self, key: str, pi: int, evidence: str, tokens: int) -> None:
        view = self.problems[pi].view
        request = ChatRequest(
            messages=rationale_messages(view, evidence, self.config.max_question_chars),
            max_tokens=tokens,
            temperature=0.0,
        )
        try:
            response = await self.evaluator.chat(request)
        except CapabilityError:
            raise
        except AgentLensError as exc:
            self.costs.errors.append(f"rationale: {exc}")
            return
        self._account(
            response.from_cache, response.usage.prompt_tokens, response.usage.cached_tokens
        )
        self.costs.rationale_calls += 1
        leaks = rationale_leaks(response.text)
        if leaks and self.config.leak_policy == "error":
            raise LeakageError(
                f"the evaluator's rationale leaks ({', '.join(leaks)}): {response.text[:120]!r}; "
                "use --leak-policy warn to flag such states instead"
            )
        ids = [c.id for c in view.candidates]
        self.rationales[key] = Rationale(
            response.text, leaks, rationale_coverage(response.text, ids), response.from_cache
        )

    def _swap(self) -> None:
        """Swapped channel: each slot takes the rationale of another trajectory's state at the same
        position (seed 7); with a single trajectory, another state of the same one."""
        rng = random.Random(self.config.seed)
        own = dict(self.slot_rationale)  # donors give their own rationale, never a swapped one
        for channel in self.channels:
            if not channel.swapped:
                continue
            for slot in self.slots():
                donor = self._donor(slot, rng)
                self.slot_rationale[(slot, channel.name)] = own[(donor, channel.name)]

    def _donor(self, slot: Slot, rng: random.Random) -> Slot:
        pi, which, pos = slot
        others = [q for q in range(len(self.problems)) if q != pi]
        if others:
            q = rng.choice(others)
            return (q, which, min(pos, len(self.tables[(q, which)].texts) - 1))
        positions = [j for j in range(len(self.tables[(pi, which)].texts)) if j != pos]
        return (pi, which, rng.choice(positions) if positions else pos)

    def buffer(self, slot: Slot, channel: Channel) -> str | None:
        if not channel.generates_rationale:
            return None
        rationale = self.rationales.get(self.slot_rationale[(slot, channel.name)])
        return mask_markers(rationale.text) if rationale else None

    def rationale_of(self, slot: Slot, channel: Channel) -> Rationale | None:
        key = self.slot_rationale.get((slot, channel.name))
        return self.rationales.get(key) if key else None

    # pass 2 -------------------------------------------------------------------------------
    async def _scores(self) -> None:
        groups: dict[str, list[tuple[str, list[Message], dict[str, str], list[BeliefKey]]]] = {}
        seen: dict[str, list[BeliefKey]] = {}
        for slot in self.slots():  # a state's channels next to each other: they share a prefix
            for channel in self.channels:
                self._plan_slot(slot, channel, groups, seen)
        await self._bounded([self._score_group(jobs) for jobs in groups.values()])

    def _plan_slot(
        self, slot: Slot, channel: Channel, groups: dict[str, Any], seen: dict[str, list[BeliefKey]]
    ) -> None:
        pi, which, pos = slot
        evidence, buffer = self.evidence(slot, channel), self.buffer(slot, channel)
        if channel.generates_rationale and buffer is None:
            return  # rationale failed: the slot stays missing
        view = self.problems[pi].view
        group = _digest([evidence, buffer, channel.direct, [c.id for c in view.candidates]])
        for k in range(self.config.permutations):
            mapping = label_mapping(
                [c.id for c in view.candidates], k, self.config.label_scheme, view_labels(view)
            )
            messages = scoring_messages(
                view,
                evidence,
                buffer,
                mapping,
                direct=channel.direct,
                order=self.config.order,
                question_limit=self.config.max_question_chars,
                direct_layout=self.config.direct_layout,
            )
            key = _digest(messages)
            target = (pi, which, channel.name, pos, k)
            if key in seen:
                seen[key].append(target)
                continue
            seen[key] = [target]
            groups.setdefault(group, []).append((key, messages, mapping, seen[key]))

    async def _score_group(
        self, jobs: list[tuple[str, list[Message], dict[str, str], list[BeliefKey]]]
    ) -> None:
        for _key, messages, mapping, targets in jobs:
            belief = await self._score(messages, mapping)
            for target in targets:
                self.beliefs[target] = belief

    async def _score(self, messages: list[Message], mapping: dict[str, str]) -> Belief | None:
        cfg = self.config
        labels = list(mapping)
        try:
            result = await self.evaluator.option_logprobs(
                messages, requested(labels), floor=cfg.floor, top_k=cfg.top_k
            )
        except CapabilityError:
            raise
        except AgentLensError as exc:
            self.costs.errors.append(f"scoring: {exc}")
            return None
        self.costs.scoring_calls += 1
        self._account(result.from_cache, result.usage.prompt_tokens, result.usage.cached_tokens)
        folded = fold(result.options, labels, cfg.floor)
        if result.top_k is None:
            self._check_spelled(folded.sources)
        belief = belief_from_labels(
            folded.logprobs,
            folded.sources,
            mapping,
            floor=cfg.floor,
            label_variants=folded.variants,
        )
        self._check_fallback(belief)
        return belief

    def _check_spelled(self, sources: dict[str, str]) -> None:
        """An evaluator read over its whole vocabulary (spec §5.2) that floors a label has no
        token spelling it: that candidate could never be chosen, in any state (a record's own
        label `10` is two tokens to SmolLM2)."""
        unspelled = [label for label, source in sources.items() if source == "floor"]
        if unspelled:
            raise ConfigError(
                f"{self.evaluator.name}: no token of its vocabulary spells the option label "
                f"{', '.join(map(repr, unspelled))}, so its candidate could never be chosen; "
                "give the candidates one-token labels (A, B, C, …: leave `label` out)"
            )

    def _check_fallback(self, belief: Belief) -> None:
        """Fallback policy `error` (§5.1 step 5): stop when no listed token spells a label."""
        cfg = self.config
        if not belief.used_floor or cfg.fallback_policy != "error":
            return
        ids = zip(belief.candidate_ids, belief.sources, strict=True)
        absent = [c for c, source in ids if source == "floor"]
        raise FloorError(
            f"{self.evaluator.name}: no top-{cfg.top_k} token spells the label of "
            f"{', '.join(absent)}; use --fallback-policy floor to score it at {cfg.floor:g}"
        )

    def _account(self, from_cache: bool, prompt_tokens: int, cached_tokens: int) -> None:
        self.costs.cache_hits += int(from_cache)
        self.costs.prompt_tokens += prompt_tokens
        self.costs.cached_tokens += cached_tokens
