"""Step-value cost against the real local model (SmolLM2-135M, llama.cpp).

Run by hand:  python benchmarks/stepvalue.py [--steps 3] [--permutations 4] [--server]

For each of two real trajectories (an AgentLens-Bench run with fault-localisation candidates and a
SWE-agent Java run with outcome candidates) and B permutations x 3 channels (direct,
generated-rationale-128, extractive-buffer), reports in the same run:

* evaluator calls and wall time per trajectory, against the naive count (2 states x calls per
  transition: no sharing of the after state of step t with the before state of step t+1);
* the prefix share: the fraction of each scoring prompt's characters shared with the previous
  prompt sent (what a prefix cache can reuse), for the mapping-last order against a mapping-first
  baseline, with both wall times;
* the response-cache pass: the same run again, served from a fresh SQLite cache.

Default backend: in-process llama.cpp (exact log-probs); `--server` starts `llama_cpp.server` on a
free loopback port and uses top-k log-probs over HTTP instead.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import BENCH, DATA  # noqa: E402
from tests.llm import MODEL_ALIAS, quantized_q4_0, shipped_gguf, start_llama_server  # noqa: E402

from agentlens.formats import read_path, read_paths  # noqa: E402
from agentlens.providers import LLMClient, ResponseCache  # noqa: E402
from agentlens.providers.registry import make_backend  # noqa: E402
from agentlens.stepvalue.config import RunConfig  # noqa: E402
from agentlens.stepvalue.evaluate import evaluate  # noqa: E402
from agentlens.stepvalue.model import Problem  # noqa: E402
from agentlens.stepvalue.plan import naive_calls, state_table  # noqa: E402
from agentlens.stepvalue.projection import MAX_STATE_CHARS  # noqa: E402
from agentlens.stepvalue.sources import build_problems  # noqa: E402

CHANNELS = ("direct", "generated-rationale-128", "extractive-buffer")


class Recorder:
    """Passes calls through and keeps the scoring prompts in the order they were sent."""

    def __init__(self, inner: LLMClient) -> None:
        self.inner = inner
        self.name = inner.name
        self.prompts: list[str] = []
        self.scoring_s = 0.0

    async def chat(self, request: Any) -> Any:
        return await self.inner.chat(request)

    async def option_logprobs(self, messages: Any, labels: Sequence[str], **kw: Any) -> Any:
        self.prompts.append("".join(m["content"] for m in messages))
        start = time.perf_counter()
        try:
            return await self.inner.option_logprobs(messages, labels, **kw)
        finally:
            self.scoring_s += time.perf_counter() - start


def prefix_share(prompts: Sequence[str]) -> float:
    shared = total = 0
    for prev, cur in zip(["", *prompts], prompts, strict=False):
        shared += len(os.path.commonprefix([prev, cur]))  # noqa: RUF071 (prompts, not paths)
        total += len(cur)
    return shared / total if total else 0.0


def problems(steps: int | None) -> list[Problem]:
    task = BENCH / "trajectories" / "psf__requests-1724"
    runs = [read_path(p)[0] for p in sorted(task.glob("*.json"))]
    passing = [r for r in runs if r.outcome.status == "passed"]
    fault = build_problems(passing[:1], "fault-localisation", runs=runs, max_steps=steps)
    java = DATA / "swe-agent-java" / "20240825_SWE-agent_gpt-4o-2024-05-13" / "trajs"
    traj = read_paths([java / "fasterxml__jackson-core-1142.traj"]).trajectories
    return fault + build_problems(traj, "outcome", max_steps=steps)


def one_run(model: str, problem: Problem, config: RunConfig, cache: Path | None) -> dict[str, Any]:
    client = LLMClient(
        make_backend(model),
        role="evaluator",
        cache=ResponseCache(cache) if cache else None,
        free=True,
    )
    recorder = Recorder(client)
    start = time.perf_counter()
    result = evaluate([problem], recorder, config)
    c = result.costs
    return {
        "calls": c.evaluator_calls,
        "rationale": c.rationale_calls,
        "scoring": c.scoring_calls,
        "naive": c.naive_calls,
        "states": c.distinct_states,
        "transitions": c.transitions,
        "cache_hits": c.cache_hits,
        "wall_s": time.perf_counter() - start,
        "prefix_share": prefix_share(recorder.prompts),
        "scoring_s": recorder.scoring_s,
    }


def report(
    name: str, main: dict[str, Any], first: dict[str, Any] | None, cached: dict[str, Any]
) -> None:
    print(f"\n{name}")
    print(f"  transitions {main['transitions']}, distinct states {main['states']}")
    print(
        f"  evaluator calls {main['calls']} ({main['rationale']} rationale + {main['scoring']} scoring) "
        f"vs naive {main['naive']}: {main['naive'] / main['calls']:.2f}x fewer"
    )
    print(
        f"  wall {main['wall_s']:.1f} s ({main['wall_s'] / main['calls']:.2f} s/call); "
        f"prefix share (mapping last) {main['prefix_share']:.1%}"
    )
    if first:
        print(
            f"  scoring time: mapping last {main['scoring_s']:.1f} s vs mapping first (baseline) "
            f"{first['scoring_s']:.1f} s, prefix share {first['prefix_share']:.1%}: "
            f"{first['scoring_s'] / main['scoring_s']:.2f}x"
        )
    print(
        f"  response-cache pass: {cached['cache_hits']}/{cached['calls']} from cache, wall {cached['wall_s']:.2f} s "
        f"({main['wall_s'] / max(cached['wall_s'], 1e-9):.0f}x faster)"
    )


def full_length_counts(permutations: int) -> None:
    """Calls for the whole trajectories, from the state tables alone (no model calls)."""
    print("\nfull-length trajectories (counts only, no model calls):")
    for problem in problems(None):
        states = len(state_table(problem, "full", MAX_STATE_CHARS).texts)
        n = len(problem.transitions)
        distinct_mappings = min(permutations, len(problem.view.candidates))  # rotations repeat
        calls = states * (len(CHANNELS) * distinct_mappings + 1)
        naive = naive_calls(n, permutations, 1, len(CHANNELS))
        print(
            f"  {problem.trajectory_id}: {n} transitions, {states} distinct states: "
            f"{calls} calls vs naive {naive} ({naive / calls:.2f}x fewer)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--permutations", type=int, default=4)
    parser.add_argument("--rationale-tokens", type=int, default=None)
    parser.add_argument(
        "--server", action="store_true", help="top-k over HTTP instead of in-process"
    )
    parser.add_argument("--no-order-baseline", action="store_true")
    args = parser.parse_args()
    full_length_counts(args.permutations)
    gguf = quantized_q4_0(shipped_gguf())
    proc, model = None, f"llamacpp:{gguf}"
    if args.server:
        proc, url = start_llama_server(gguf)
        model = f"openai-compatible:{url}#{MODEL_ALIAS}"
    try:
        base = {
            "channels": CHANNELS,
            "permutations": args.permutations,
            "leak_policy": "warn",
            "rationale_tokens": args.rationale_tokens,
        }
        print(
            f"evaluator {model}; B = {args.permutations}; channels {', '.join(CHANNELS)}; {args.steps} steps"
        )
        with tempfile.TemporaryDirectory() as tmp:
            for i, problem in enumerate(problems(args.steps)):
                cache = Path(tmp) / f"cache-{i}.sqlite"
                main_run = one_run(model, problem, RunConfig(**base), cache)
                cached = one_run(model, problem, RunConfig(**base), cache)
                # same cache: its rationales are reused, so only the scoring calls are compared
                first = (
                    None
                    if args.no_order_baseline
                    else one_run(model, problem, RunConfig(**base, order="mapping-first"), cache)
                )
                report(f"{problem.trajectory_id} ({problem.kind})", main_run, first, cached)
    finally:
        if proc:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
