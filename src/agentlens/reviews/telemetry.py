"""Telemetry from trajectories (spec §11.1): per-turn and per-run time, cost, prompt / completion /
cached tokens, throughput, tool calls per run, parallel tool calls, per-tool success rates (worst
first), termination reasons and cache-hit ratio.

A *turn* is one model response: steps sharing `Step.turn`, or each step on its own when the
reader did not set turns. Turn time is the agent's response time: from the timestamp of the step
before the turn (a user message included) to the turn's last timestamp. A trajectory's agent
time is the sum of its turn times, so time the user (or simulated user) spends before replying
is not agent time (spec §11.1 `agent_time`, summed per chat); a turn stamped before the step it
answers has no time rather than a negative one. Parallel tool calls are the mean number of calls
per tool-calling response, pooled over the run's responses. A tool call fails by the house's one
rule (`step_failure.failed`): the reader's error flag, else the error markers of the result's own
report (code it only shows, such as the diff of SWE-agent's `submit`, is no error); the count of
such inferred verdicts is reported.

A model reply served from the response cache (the built-in agent marks its step
`raw.from_cache`) took no model time in this run: its turn has no time, and neither has its
trajectory (a sum without it would be a time nobody measured); `responses_from_cache` counts
them."""

from __future__ import annotations

from array import array
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from agentlens.step_failure import failed
from agentlens.trajectory import Step, Trajectory, stamps_before

TERMINATION_KEYS = ("termination_reason", "exit_status", "stop_reason", "finish_reason", "status")


@dataclass
class TurnTelemetry:
    turn: int
    time_s: float | None
    cost: float | None
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    tool_calls: int
    from_cache: bool = False


@dataclass
class TrajectoryTelemetry:
    trajectory_id: str
    task_id: str | None
    turns: list[TurnTelemetry]
    time_s: float | None
    cost: float | None
    prompt_tokens: int | None
    """None (with the other two counts) when the trace records no tokens: unknown, not 0."""
    completion_tokens: int | None
    cached_tokens: int | None
    tool_calls: int
    tools: dict[str, list[int]]  # name -> [successes, total]
    inferred_success: int
    termination_reason: str
    cache_hit_mean: float | None  # mean over calls of round(cached / (prompt + 1e-9), 3)
    model: str | None = None
    agent: str | None = None
    source_format: str | None = None
    cached_turns: int = 0
    """Turns whose model reply came from the response cache: no time for them or the run."""

    @property
    def throughput(self) -> float | None:
        if self.completion_tokens is None or not self.time_s:
            return None
        return self.completion_tokens / (self.time_s + 1e-9)

    @property
    def parallel_mean(self) -> float | None:
        with_tools = [t.tool_calls for t in self.turns if t.tool_calls]
        return float(np.mean(with_tools)) if with_tools else None


def _turns(steps: Sequence[Step]) -> list[list[Step]]:
    groups: dict[int, list[Step]] = defaultdict(list)
    for step in steps:
        if step.kind in ("user", "system"):
            continue
        groups[step.turn if step.turn is not None else 1_000_000 + step.index].append(step)
    return [groups[k] for k in sorted(groups, key=lambda k: groups[k][0].index)]


def served_from_cache(step: Step) -> bool:
    return isinstance(step.raw, dict) and step.raw.get("from_cache") is True


def termination_reason(traj: Trajectory) -> str:
    for source in (traj.metadata, traj.metadata.get("info") or {}):
        for key in TERMINATION_KEYS:
            value = source.get(key) if isinstance(source, dict) else None
            if isinstance(value, str) and value:
                return value
    return "unknown"


def trajectory_telemetry(traj: Trajectory) -> TrajectoryTelemetry:
    turns = []
    hits: list[float] = []
    stamp_before = stamps_before(traj.steps)
    for n, steps in enumerate(_turns(traj.steps)):
        stamps = [s.timestamp for s in steps if s.timestamp is not None]
        start = stamp_before.get(steps[0].index)
        time_s = (max(stamps) - start).total_seconds() if stamps and start else None
        cached = any(served_from_cache(s) for s in steps)
        if cached or (time_s is not None and time_s < 0):  # the clock went back: unknown
            time_s = None
        usages = [s.usage for s in steps if s.usage is not None]
        costs = [s.cost for s in steps if s.cost is not None]
        prompt = sum(u.prompt_tokens for u in usages)
        cached_tokens = sum(u.cached_tokens for u in usages)
        if prompt:
            hits.append(round(cached_tokens / (prompt + 1e-9), 3))
        turns.append(
            TurnTelemetry(
                n,
                time_s,
                sum(costs) if costs else None,
                prompt,
                sum(u.completion_tokens for u in usages),
                cached_tokens,
                sum(s.kind == "tool" for s in steps),
                cached,
            )
        )
    tools: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    inferred = 0
    for step in traj.tool_steps:
        name = step.tool_name or "unknown"
        tools[name][1] += 1
        tools[name][0] += not failed(step)
        inferred += step.is_error is None
    usage = traj.usage_known()
    turn_times = [t.time_s for t in turns if t.time_s is not None]
    cached_turns = sum(t.from_cache for t in turns)
    return TrajectoryTelemetry(
        trajectory_id=traj.id,
        task_id=traj.task_id,
        turns=turns,
        time_s=sum(turn_times) if turn_times and not cached_turns else None,
        cost=traj.cost_total(),
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        cached_tokens=usage.cached_tokens if usage else None,
        tool_calls=len(traj.tool_steps),
        tools=dict(tools),
        inferred_success=inferred,
        termination_reason=termination_reason(traj),
        cache_hit_mean=float(np.mean(hits)) if hits else None,
        model=traj.model,
        agent=" ".join(x for x in (traj.agent.name, traj.agent.version) if x) or None,
        source_format=traj.source.format,
        cached_turns=cached_turns,
    )


def _quantiles(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    q = np.quantile(values, [0.1, 0.5, 0.8, 1.0])
    return {
        "total": round(float(sum(values)), 4),
        **{f"q{p}": round(float(v), 4) for p, v in zip((10, 50, 80, 100), q, strict=True)},
    }


@dataclass
class RunTelemetry:
    trajectories: list[TrajectoryTelemetry] = field(default_factory=list)

    @classmethod
    def of(cls, trajs: Sequence[Trajectory]) -> RunTelemetry:
        return cls([trajectory_telemetry(t) for t in trajs])

    def parallel_mean(self) -> float | None:
        """Mean tool calls per tool-calling response, pooled over every response of the run."""
        calls = [u.tool_calls for t in self.trajectories for u in t.turns if u.tool_calls]
        return sum(calls) / len(calls) if calls else None

    def tool_success(self) -> dict[str, str]:
        """`TelemetryTotals.tool_success` of these trajectories."""
        return self._totals().tool_success()

    def to_dict(self) -> dict[str, Any]:
        return self._totals().to_dict()

    def metadata(self) -> dict[str, dict[str, int]]:
        """Trajectory counts per model, agent and input format (spec §11.1 run metadata; the
        plugin, dataset and config hashes of the released runner are not in traces)."""
        return cast(dict[str, dict[str, int]], self.to_dict()["run_metadata"])

    def _totals(self) -> TelemetryTotals:
        totals = TelemetryTotals()
        for t in self.trajectories:
            totals.add(t)
        return totals


class TelemetryTotals:
    """`RunTelemetry.to_dict`, gathered one trajectory at a time (a stream): sums, counts, and
    the time and price values the quantiles need (8 bytes each), never the trajectories."""

    def __init__(self) -> None:
        self.n = 0
        self.times, self.costs = array("d"), array("d")
        self.turn_times, self.turn_costs = array("d"), array("d")
        self.prompt = self.gen = self.cached = self.tool_calls = self.inferred = 0
        self.from_cache = 0
        self.gen_seconds = 0.0  # agent time of the runs whose completion tokens are known
        self.parallel_calls = self.parallel_turns = 0
        self.tools: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        self.terminations: Counter[str] = Counter()
        self.models: Counter[str] = Counter()
        self.agents: Counter[str] = Counter()
        self.formats: Counter[str] = Counter()

    def add(self, t: TrajectoryTelemetry) -> None:
        self.n += 1
        if t.time_s is not None:
            self.times.append(t.time_s)
            if t.completion_tokens is not None:
                self.gen_seconds += t.time_s
        if t.cost is not None:
            self.costs.append(t.cost)
        for turn in t.turns:
            if turn.time_s is not None:
                self.turn_times.append(turn.time_s)
            if turn.cost is not None:
                self.turn_costs.append(turn.cost)
            if turn.tool_calls:
                self.parallel_calls += turn.tool_calls
                self.parallel_turns += 1
        self.prompt += t.prompt_tokens or 0  # unknown adds nothing
        self.gen += t.completion_tokens or 0
        self.cached += t.cached_tokens or 0
        self.tool_calls += t.tool_calls
        self.inferred += t.inferred_success
        self.from_cache += t.cached_turns
        for name, (ok, total) in t.tools.items():
            self.tools[name][0] += ok
            self.tools[name][1] += total
        self.terminations[t.termination_reason] += 1
        self.models[t.model or "unknown"] += 1
        self.agents[t.agent or "unknown"] += 1
        self.formats[t.source_format or "unknown"] += 1

    def tool_success(self) -> dict[str, str]:
        """`"s/t"` per tool, sorted worst first by (fail + 1) / (total + 2) (spec §11.1); ties
        put the tool with more calls first, as the released report does, then by name."""

        def worst_first(name: str) -> tuple[float, int, str]:
            ok, total = self.tools[name]
            return -(total - ok + 1) / (total + 2), -total, name

        order = sorted(self.tools, key=worst_first)
        return {k: f"{self.tools[k][0]}/{self.tools[k][1]}" for k in order}

    def to_dict(self) -> dict[str, Any]:
        prompt, gen, cached = self.prompt, self.gen, self.cached
        parallel = self.parallel_calls / self.parallel_turns if self.parallel_turns else None
        return {
            "trajectories": self.n,
            "agent_time_s": {
                "chat": _quantiles(self.times),
                "response": _quantiles(self.turn_times),
            },
            "agent_price": {
                "chat": _quantiles(self.costs),
                "response": _quantiles(self.turn_costs),
            },
            "prompt_tokens": prompt,
            "completion_tokens": gen,
            "cached_tokens": cached,
            "cache_hit_ratio": round(cached / prompt, 4) if prompt else None,
            # over the runs that record tokens: a run that records none adds time, not tokens
            "gen_tokens_to_seconds_ratio": round(gen / self.gen_seconds, 3)
            if self.gen_seconds
            else None,
            "tools_calls_total": self.tool_calls,
            "tools_calls_per_chat_mean": round(self.tool_calls / self.n, 3) if self.n else None,
            "tool_calls_in_parallel_mean": round(parallel, 3) if parallel is not None else None,
            "tool_call_success_rates": self.tool_success(),
            "tool_success_inferred_from_output": self.inferred,
            **({"responses_from_cache": self.from_cache} if self.from_cache else {}),
            "termination_reason": dict(self.terminations.most_common()),
            "run_metadata": {
                "models": dict(sorted(self.models.items())),
                "agents": dict(sorted(self.agents.items())),
                "formats": dict(sorted(self.formats.items())),
            },
        }
