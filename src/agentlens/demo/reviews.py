"""The trajectory-reviews part of `agentlens demo`.

Two halves, and they are NOT the same run: (1) formal checks on a tiny git repository created at
run time (a Python package with a pytest suite and one bug) after a scripted edit that fixes it;
(2) the five LLM-judge reviews, QI and telemetry of a real AgentLens-Bench trace of a different
task (`psf__requests-1724`), judged by the local SmolLM2-135M model. The judge part needs the
local-model extra and is opt-in (`agentlens demo --llm`, `AGENTLENS_DEMO_REVIEWS=1`, or `with_llm=True`), so the default
demo stays quick and LLM-free; the section says how to enable it."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from agentlens.demo.context import DemoContext
from agentlens.demo.tiny_repo import DEMO_SCENARIO, apply_fix, create_repo
from agentlens.errors import AgentLensError
from agentlens.list_text import counted, first_few
from agentlens.providers import get_provider
from agentlens.providers.bundled import LOCAL_LLM_HINT as HINT
from agentlens.providers.bundled import bundled_gguf as local_gguf
from agentlens.reviews import DIMENSIONS
from agentlens.reviews.judge.judge import JudgeSettings, aggregate, review_trajectory
from agentlens.reviews.qi import QualityIndex, quality_index
from agentlens.reviews.telemetry import RunTelemetry
from agentlens.scenarios.scenario import Scenario, ScenarioResult, run_scenario
from agentlens.trajectory import Trajectory
from agentlens.verification.isolation import SandboxUnavailableError

DEMO_TASK = "psf__requests-1724"
OPT_IN = "AGENTLENS_DEMO_REVIEWS"


def demo_section(ctx: DemoContext) -> None:
    """`agentlens demo` section hook (ctx is the demo's `DemoContext`)."""
    with_llm = True if ctx.extras.get("llm") else None
    summary = run_review_demo(ctx.console, trajectories=ctx.trajectories, with_llm=with_llm)
    if summary.get("unscored"):  # as `agentlens review` does: a judge that did not answer is exit 1
        raise AgentLensError(
            f"{summary['unscored']} of {summary['reviews']} judge answers unscored; "
            "the table above gives each reason"
        )


def run_formal_demo(console: Console) -> ScenarioResult:
    with tempfile.TemporaryDirectory(prefix="agentlens-review-demo-") as tmp:
        repo = create_repo(Path(tmp) / "calc")
        apply_fix(repo)
        scenario = Scenario("fix_sub", list(DEMO_SCENARIO["verifiers"]))  # type: ignore[call-overload]
        result = run_scenario(scenario, repo)
    table = Table(title=f"formal checks, scripted fix of a tiny repo: {result.verdict}")
    for name in ("verifier", "status", "time", "reason"):
        table.add_column(name, overflow="fold")
    for r in result.results:
        table.add_row(r.type, r.status, f"{r.duration_s:.2f}s", r.reason)
    console.print(table)
    return result


def pick_trace(trajectories: Sequence[Trajectory]) -> Trajectory | None:
    runs = [t for t in trajectories if t.task_id == DEMO_TASK and t.outcome.status == "passed"]
    return min(runs, key=lambda t: (len(t.steps), t.id)) if runs else None


def run_review_demo(
    console: Console, *, trajectories: Sequence[Trajectory] = (), with_llm: bool | None = None
) -> dict[str, Any]:
    """Formal checks and telemetry always; the five judge reviews and the QI when asked for
    (`with_llm`, default: the `AGENTLENS_DEMO_REVIEWS=1` environment variable) and the local
    model is installed."""
    formal = _formal_unless_unsandboxable(console)
    summary: dict[str, Any] = {
        "formal_passed": formal.passed if formal is not None and formal.scored else None,
        "verifier_seconds": None if formal is None else formal.duration_s,
    }
    traj = pick_trace(trajectories)
    if traj is not None:
        _telemetry(console, traj)
    wanted = with_llm if with_llm is not None else os.environ.get(OPT_IN) == "1"
    gguf = local_gguf()
    if not wanted or gguf is None or traj is None:
        if traj is None:
            why = f"no passing {DEMO_TASK} run was read"
        elif gguf is None:
            why = f"needs the local model: {HINT}; then run `agentlens demo --llm`"
        else:
            why = f"run `agentlens demo --llm` to judge {traj.id} with the local model (minutes)"
        console.print(f"reviews: skipped ({why})", highlight=False, markup=False)
        return summary
    summary.update(_review(console, traj, gguf, formal))
    return summary


def _formal_unless_unsandboxable(console: Console) -> ScenarioResult | None:
    """The formal checks run the tiny repo's tests; where bubblewrap cannot run, the tour says
    so (the message names the install and `--no-sandbox`) and goes on, as for a missing model."""
    try:
        return run_formal_demo(console)
    except SandboxUnavailableError as exc:
        console.print(f"formal checks: skipped ({exc})", highlight=False, markup=False)
        return None


def _telemetry(console: Console, traj: Trajectory) -> None:
    tel = RunTelemetry.of([traj]).to_dict()
    rates = list(tel["tool_call_success_rates"].items())
    worst = first_few(rates, 2, lambda rate: f"{rate[0]} {rate[1]} ok")
    console.print(
        f"telemetry of {traj.id}: {counted(tel['tools_calls_total'], 'tool call')}, "
        f"{tel['completion_tokens']:,} generated tokens, cache-hit ratio {tel['cache_hit_ratio']}, "
        f"worst tools: {worst}",
        highlight=False,
    )


def qi_line(qi: QualityIndex) -> str:
    """`QI 58.33 = 100 × (…) / 6 = 58.33`, or why it is n/a: a Formal component left unscored
    points back at the formal checks, whose skipped check names what to install."""
    if qi.value is not None:
        return f"QI {qi.shown} = {qi.reason}"
    unscored_formal = qi.components.get("Formal") is None
    return f"QI {qi.reason}" + (
        " (the formal checks above were not scored)" if unscored_formal else ""
    )


def _review(
    console: Console, traj: Trajectory, gguf: Path, formal: ScenarioResult | None
) -> dict[str, Any]:
    client = get_provider(f"llamacpp:{gguf}", role="judge", cache=False)
    settings = JudgeSettings(budget_tokens=900, max_tokens=160)
    with console.status(f"judging {traj.id} on 5 dimensions with the local model"):
        review = client.run(review_trajectory(client, traj, settings=settings))
    table = Table(title=f"reviews of {traj.id} (a real trace; not the repo above)")
    for name in ("dimension", "score", "evidence lines", "step links"):
        table.add_column(name, overflow="fold")
    for dim in DIMENSIONS:
        r = review.reviews[dim]
        evidence = r.parsed.evidence if r.parsed else []
        score = f"{r.score}" if r.scored else f"unscored ({r.unscored_reason})"
        table.add_row(dim, score, str(len(evidence)), str(sum(len(e.step_ids) for e in evidence)))
    console.print(table)
    means = {d: s.mean for d, s in aggregate([review]).items()}
    formal_rate = float(formal.passed) if formal is not None and formal.scored else None
    qi = quality_index(formal_rate, means)
    console.print(qi_line(qi), highlight=False)
    for warning in qi.warnings:
        console.print(f"  warning: {warning}", highlight=False)
    console.print(
        f"judge prompt transcript ~{review.transcript_tokens} tokens (full ~{review.original_tokens}); "
        f"{client.stats.calls} judge calls",
        highlight=False,
    )
    unscored = sum(not r.scored for r in review.reviews.values())
    return {"qi": qi.value, "unscored": unscored, "reviews": len(review.reviews)}
