"""Scenario runs, here and on Ray: N pairs of the review demo's scenario (one user message each),
the test suite's scripted agent process (it fixes the bug with `sed`; `--agent-seconds` makes each
turn that much longer, as a real agent's is), and the local SmolLM2 model as the simulated user,
served by llama.cpp. Runs `agentlens run` as a user would, `--parallel P` in this process (the
baseline, measured in this run) and `--engine ray` with the same P on a local Ray, and prints the
wall times for N and 2N pairs, from which Ray's fixed cost (its start, the node check, the first
imports on each worker) and its cost per pair are told apart. On one machine Ray can only cost;
the point is to know how much, before a cluster spreads the pairs.

    python benchmarks/scenarios.py [--pairs 4] [--parallel 2] [--agent-seconds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.llm import start_llama_server  # noqa: E402

MODEL = Path.home() / ".cache/agentlens/test-models/SmolLM2-135M-Instruct.Q4_1.q4_0.gguf"
AGENT = ROOT / "tests" / "scenarios" / "scripted_agent.py"


def fold(folder: Path, pairs: int) -> Path:
    """A fold of the demo scenario with `pairs` personas (persona files, the default's words)."""
    from agentlens.demo.tiny_repo import DEMO_SCENARIO, create_repo
    from agentlens.scenarios.personas import BUILT_IN

    create_repo(folder / "calc")
    scenario = folder / "fix_sub"
    scenario.mkdir()
    config = {**DEMO_SCENARIO, "max_steps": 1, "project_path": "../calc",
              "user_instruction": "sub() adds instead of subtracting: have the agent fix it."}  # fmt: skip
    (scenario / "config.json").write_text(json.dumps(config))
    users = []
    for number in range(pairs):
        (folder / f"user{number}.txt").write_text(BUILT_IN["default"])
        users.append(f"user{number}.txt")
    spec = {"scenario_paths": ["fix_sub"], "user_paths": users, "budget_dollars_limit": None}
    (folder / "workflows.json").write_text(json.dumps(spec))
    return folder / "workflows.json"


def run(
    workflows: Path, out: Path, simulator: str, parallel: int, engine: str, delay: float
) -> float:
    agent = f"cmd:{sys.executable} {AGENT} fix {{message}} {{turn}}"
    command = [sys.executable, "-m", "agentlens", "run", str(workflows), "--agent", agent,
               "--simulator", simulator, "--out", str(out), "--parallel", str(parallel),
               "--engine", engine, "--no-cache", "--json"]  # fmt: skip
    env = os.environ | {"AGENTLENS_SCRIPTED_DELAY": str(delay)}
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - started
    summary = json.loads(done.stdout) if done.returncode == 0 else None
    if summary is None or summary["formal_passed"] != summary["runs"]:
        raise SystemExit(f"{engine}: exit {done.returncode}: {done.stderr[-800:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pairs", type=int, default=4, help="and twice as many, to split fixed costs"
    )
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--agent-seconds", type=float, default=2.0)
    args = parser.parse_args()
    sizes = (args.pairs, 2 * args.pairs)
    times: dict[tuple[str, int], float] = {}
    with tempfile.TemporaryDirectory(prefix="agentlens-bench-scenarios-") as tmp:
        folder = Path(tmp)
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        server, _ = start_llama_server(MODEL, alias="smol", port=port, log=folder / "llm.log")
        try:
            simulator = f"openai-compatible:http://127.0.0.1:{port}/v1#smol"
            warm = fold(folder / "warm-up", 2)  # the model's first calls are slow: not timed
            run(warm, folder / "out-warm-up", simulator, args.parallel, "local", 0)
            for pairs in sizes:
                workflows = fold(folder / f"fold-{pairs}", pairs)
                for engine in ("local", "ray"):
                    out = folder / f"out-{engine}-{pairs}"
                    times[engine, pairs] = run(
                        workflows, out, simulator, args.parallel, engine, args.agent_seconds
                    )
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(f"--parallel {args.parallel}, each agent turn +{args.agent_seconds:g} s")
    print(f"{'pairs':>5} {'local s':>8} {'ray s':>8} {'ray / local':>12}")
    for pairs in sizes:
        local, ray = times["local", pairs], times["ray", pairs]
        print(f"{pairs:5} {local:8.2f} {ray:8.2f} {ray / local:11.2f}x")
    low, high = sizes
    fixed = [times[e, low] - (times[e, high] - times[e, low]) for e in ("local", "ray")]
    marginal = [
        (times[e, high] - times[e, low]) / (high - low) * args.parallel for e in ("local", "ray")
    ]
    print(
        f"fixed cost (start, node check, first imports on each worker): local {fixed[0]:.2f} s, "
        f"ray {fixed[1]:.2f} s; each pair's own time on a worker slot: local {marginal[0]:.2f} s, "
        f"ray {marginal[1]:.2f} s ({marginal[1] - marginal[0]:+.2f} s a pair)"
    )


if __name__ == "__main__":
    main()
