"""The scenario-run part of `agentlens demo --llm`: the built-in shell agent on the local model
works on the review demo's tiny git project while the same model plays the user, for two user
messages; then the formal checks run. SmolLM2-135M does not fix the bug, so expect FAIL: the
section shows the pipeline (dialog, stop rule, verifiers), not a capable agent."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console

from agentlens.demo.context import DemoContext
from agentlens.demo.tiny_repo import DEMO_SCENARIO, create_repo
from agentlens.providers import get_provider
from agentlens.providers.bundled import LOCAL_LLM_HINT, bundled_gguf
from agentlens.scenarios import Fold, RunSettings, load_persona, run_fold
from agentlens.scenarios.agents import BashAgentSettings, agent_factory
from agentlens.scenarios.scenario import Scenario

INSTRUCTION = "sub() in calc/ops.py adds instead of subtracting. Get the agent to fix it."


def demo_section(ctx: DemoContext) -> None:
    """`agentlens demo` section hook (ctx is the demo's `DemoContext`)."""
    gguf = bundled_gguf()
    if not ctx.extras.get("llm") or gguf is None:
        why = LOCAL_LLM_HINT if gguf is None else "add --llm: the local model plays both parts"
        ctx.console.print(f"scenario run: skipped ({why})", highlight=False, markup=False)
        return
    run_scenario_demo(ctx.console, gguf)


def run_scenario_demo(console: Console, gguf: Path) -> dict[str, Any]:
    model = f"llamacpp:{gguf}"
    scenario = Scenario(
        "fix_sub",
        list(DEMO_SCENARIO["verifiers"]),  # type: ignore[call-overload]
        max_steps=2,
        user_instruction=INSTRUCTION,
    )
    bash = BashAgentSettings(max_actions_per_turn=3, context_chars=6000, max_tokens=200)
    simulator = get_provider(model, role="user_simulator", cache=False)
    with tempfile.TemporaryDirectory(prefix="agentlens-scenario-demo-") as tmp:
        settings = RunSettings(
            make_agent=agent_factory(f"bash:{model}", bash_settings=bash, cache=False),
            simulator=simulator,
            out=Path(tmp) / "out",
            project=create_repo(Path(tmp) / "calc"),
            run_name="demo",
        )
        fold = Fold([scenario], [load_persona("default")], attempts=1)
        with console.status("scenario run: local shell agent + simulated user (local model)"):
            result = simulator.run(run_fold(fold, settings))
    session = result.sessions[0]
    meta = session.trajectory.metadata
    verdict = "failed run" if session.verification is None else session.verification.verdict
    tools = sum(1 for s in session.trajectory.steps if s.kind == "tool")
    console.print(
        f"scenario run fix_sub / default: {meta['user_messages']} user messages, {tools} shell "
        f"commands, ended: {meta['termination_reason']}; formal checks {verdict} "
        f"({session.duration_s:.0f} s)",
        highlight=False,
        markup=False,
    )
    return {"termination": meta["termination"], "verdict": verdict, "tools": tools}
