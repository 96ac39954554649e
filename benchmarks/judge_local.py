"""Structured judge answers from the local SmolLM2-135M, measured (issue 24's done-means).

    python benchmarks/judge_local.py --backend inprocess --out judge-inprocess.json
    python benchmarks/judge_local.py --backend server --out judge-server.json

Ten AgentLens-Bench dev trajectories (the first run of each task, by file name) × the five
workflows dimensions, through `review_run` exactly as `agentlens review` calls it. Reports the
unscored rate, re-asks, retries, time queued, wall time per review, and the probability-weighted
scores with their spread. `server` starts `python -m llama_cpp.server` on 127.0.0.1."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

from agentlens.formats.load import read_path
from agentlens.providers import ProvidersConfig, RetryPolicy, get_provider
from agentlens.providers.bundled import bundled_gguf
from agentlens.reviews import DIMENSIONS
from agentlens.reviews.judge.judge import JudgeSettings, review_trajectory
from agentlens.reviews.judge.plan import review_context

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.llm import start_llama_server  # noqa: E402

DATA = Path(
    os.environ.get("AGENTLENS_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
TRAJECTORIES = DATA / "agentlens-bench-dev" / "trajectories"


def dev_trajectories(n: int) -> list:
    tasks = sorted(p for p in TRAJECTORIES.iterdir() if p.is_dir())[:n]
    return [read_path(sorted(task.glob("*.json"))[0])[0] for task in tasks]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=["inprocess", "server"], required=True)
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--trajectories", type=int, default=10)
    parser.add_argument("--budget-tokens", type=int, default=2000)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per attempt")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    model = args.model or bundled_gguf()
    proc = None
    if args.backend == "server":
        proc, _ = start_llama_server(model, port=args.port, n_ctx=8192, threads=1, timeout_s=300)
        name = f"openai-compatible:http://127.0.0.1:{args.port}/v1#smollm2-135m"
        concurrency = 1  # the Python server answers one request at a time
    else:
        name, concurrency = f"llamacpp:{model}", 4  # the backend itself queues to 1
    client = get_provider(
        name, role="judge", cache=False, max_concurrency=concurrency,
        config=ProvidersConfig(timeout_s=args.timeout),
        # the whole-call deadline (default 180 s) must not cut an attempt's own timeout short
        retry=RetryPolicy(timeout_s=args.timeout, total_s=3 * args.timeout),
    )  # fmt: skip
    settings = JudgeSettings(budget_tokens=args.budget_tokens)
    rows = []
    try:
        for traj in dev_trajectories(args.trajectories):
            started = time.perf_counter()
            review = asyncio.run(
                review_trajectory(
                    client,
                    traj,
                    dimensions=DIMENSIONS,
                    ctx=review_context(traj, None),
                    settings=settings,
                )
            )
            wall = time.perf_counter() - started
            for dim, r in review.reviews.items():
                dist = r.distribution.to_dict() if r.distribution else None
                rows.append({
                    "trajectory": traj.id, "dimension": dim, "score": r.score,
                    "unscored_reason": r.unscored_reason, "attempts": r.attempts, "mode": r.mode,
                    "distribution": dist, "usage": r.usage,
                })  # fmt: skip
            rows[-1]["review_wall_s"] = wall
            print(f"{traj.id}: {wall:.0f}s", [r.score for r in review.reviews.values()], flush=True)
            summary(rows, client, args.out)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)


def summary(rows: list[dict], client, out: Path) -> None:
    scored = [r for r in rows if r["score"] is not None]
    walls = [r["review_wall_s"] for r in rows if "review_wall_s" in r]
    dists = [r["distribution"] for r in rows if r["distribution"]]
    expected = [d["expected_score"] for d in dists if d["expected_score"] is not None]
    spreads = [d["spread"] for d in dists if d["spread"] is not None]
    doc = {
        "backend": client.name,
        "reviews": len(rows),
        "unscored_rate": round(1 - len(scored) / len(rows), 4),
        "re_asked": sum(r["attempts"] > 1 for r in rows),
        "retries": client.stats.retries,
        "retry_reasons": client.stats.retry_reasons,
        "queued_s": round(client.stats.queued_s, 1),
        "wall_s_per_trajectory_review": [round(w, 1) for w in walls],
        "wall_s_per_dimension_review_mean": round(sum(walls) / len(rows), 1) if rows else None,
        "scores": {s: sum(r["score"] == s for r in scored) for s in (0.0, 0.5, 1.0)},
        "with_distribution": len(dists),
        "expected_score_mean": round(statistics.mean(expected), 4) if expected else None,
        "spread_mean": round(statistics.mean(spreads), 4) if spreads else None,
        "unresolved_0_vs_0.5": sum(d["expected_score"] is None for d in dists),
        "rows": rows,
    }
    out.write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
