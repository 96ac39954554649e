"""What masking before a cut costs a whole fold: the built-in agent (its model scripted) runs
a command twice whose output is 1.7 or 2.7 MB of a real terminal recording (the Terminal-Bench `agent.log` in
../shared/data), so each output is cut to its last 1 MB by the shell, to 10,000 characters for
the agent's next request and for the simulator's view, and saved. Prints the best of N runs of
`run_fold` (process CPU and wall), with redaction on and off. Run it on two trees to compare:

    PYTHONPATH=src python benchmarks/cut_masking.py [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.secret_at_cut import AGENT_LOG  # noqa: E402

COMMANDS = {  # the kept last 1 MB: the recording's cheap end, or its costly start (apt's URLs)
    "cheap-end": "cat build.log",
    "costly-start": "cat build.log; head -c 1000000 build.log",
}


def replies(command: str) -> list[str]:
    return [
        f"THOUGHT: the build log.\n\n```bash\n{command}\n```",
        f"THOUGHT: once more.\n\n```bash\n{command}\n```",
        "The build log ends with the package installs.",
    ]


def one_fold(folder: Path, command: str) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one fold of one pair."""
    from tests.scenarios.helpers import Scripted

    from agentlens.demo.tiny_repo import create_repo
    from agentlens.providers import LLMClient
    from agentlens.providers.retry import RetryPolicy
    from agentlens.providers.types import ChatResponse
    from agentlens.scenarios import Fold, RunSettings, load_persona, run_fold
    from agentlens.scenarios.agents import BashAgent
    from agentlens.scenarios.scenario import Scenario

    project = create_repo(folder / "calc")
    (project / "build.log").write_bytes(AGENT_LOG.read_bytes())

    def agent(workdir: Path, mcp_config: Path | None = None) -> BashAgent:
        model = Scripted([ChatResponse(text=reply) for reply in replies(command)])
        return BashAgent(LLMClient(model, retry=RetryPolicy(max_attempts=1)))

    agent.takes_mcp = False  # type: ignore[attr-defined]
    agent.own_mcp_client = True  # type: ignore[attr-defined]
    user = Scripted(
        [ChatResponse(text="What does the build log end with?"), ChatResponse(text="Thanks.")]
    )
    scenario = Scenario("bench", [], max_steps=2, user_instruction="Ask how the build log ends.")
    fold = Fold([scenario], [load_persona("default")], attempts=1)
    simulator = LLMClient(user, retry=RetryPolicy(max_attempts=1))
    settings = RunSettings(
        make_agent=agent, simulator=simulator, out=folder / "out", project=project
    )
    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(run_fold(fold, settings))
    return time.process_time() - cpu, time.perf_counter() - wall


def best(runs: int, redact: bool, command: str) -> tuple[float, float]:
    os.environ["AGENTLENS_NO_REDACT"] = "0" if redact else "1"
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            times.append(one_fold(Path(folder), command))
    return min(t[0] for t in times), min(t[1] for t in times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    best(1, True, COMMANDS["cheap-end"])  # imports, compiled patterns
    for name, command in COMMANDS.items():
        on, off = best(runs, True, command), best(runs, False, command)
        print(json.dumps({"output": name, "runs": runs,
                          "redaction_on": {"cpu_s": round(on[0], 3), "wall_s": round(on[1], 3)},
                          "redaction_off": {"cpu_s": round(off[0], 3), "wall_s": round(off[1], 3)}}))  # fmt: skip


if __name__ == "__main__":
    main()
