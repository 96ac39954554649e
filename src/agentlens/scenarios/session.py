"""One scenario × persona run (spec §1.1, §4.3): the simulated user opens, the agent works, the
user answers, until a stop rule fires; then the formal checks run on the workspace.

Stop rules, checked in this order after each agent turn: the agent raised (5) or overran its
turn (4) or the scenario's clock (3); it did nothing at all, neither a tool call nor a message (6;
the released code's "no actions", read here as "no events" [unverified], so an agent that only
answers a question is not cut off); `max_steps` user messages were answered (2); the user called
`terminate_dialog` (1). After 3, 4 and 5 the simulator gets one more turn, logged only.

A simulator that will not open the dialog, or whose model call fails, makes a failed run (not the
agent's FAIL); so does a failed setup (`setup_failure`)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentlens.errors import AgentLensError, BudgetExceededError, ProviderError
from agentlens.list_text import counted
from agentlens.scenarios.agent_view import turn_view
from agentlens.scenarios.ide_errors import IdeReport, ide_errors
from agentlens.scenarios.scenario import Scenario, ScenarioResult, run_scenario
from agentlens.scenarios.simulated_user import NO_MESSAGE, SimulatedUser, transcript
from agentlens.scenarios.turns import AgentTurn, Stop, Termination, UserTurn
from agentlens.scenarios.workspace import Workspace, changes_since_base, replaced
from agentlens.seams import ScenarioAgent
from agentlens.trajectory import Agent, Outcome, Source, Step, Trajectory
from agentlens.verification import memory_group
from agentlens.verification.verifiers.base import VerifierResult

FORMAT = "agentlens-scenario"


@dataclass
class SessionResult:
    trajectory: Trajectory
    termination: Termination
    verification: ScenarioResult | None
    workspace: Workspace
    simulator_cost: float
    duration_s: float

    @classmethod
    def from_saved(cls, trajectory: Trajectory) -> SessionResult:
        """A finished run read back from its canonical JSONL (to resume a fold)."""
        meta = trajectory.metadata
        formal = meta.get("formal")
        return cls(
            trajectory,
            Termination(Stop(meta["termination"]), str(meta["termination_reason"])),
            ScenarioResult.from_dict(formal) if isinstance(formal, dict) else None,
            Workspace(Path(trajectory.source.path), str(meta.get("base_revision", ""))),
            float((meta.get("simulator") or {}).get("cost") or 0.0),
            float(meta.get("dialog_seconds") or 0.0),
        )

    @property
    def pair_simulator_cost(self) -> float:
        """The simulator spend of every attempt of this pair (equal to this run's when the
        first attempt did not fail)."""
        total = self.trajectory.metadata.get("pair_simulator_cost")
        return float(total) if isinstance(total, int | float) else self.simulator_cost

    @property
    def failed(self) -> bool:
        """An agent (or simulator) failure: retried, and left out of the pass-rate denominator."""
        return self.termination.stop.is_failed_run

    @property
    def verdict(self) -> str:
        """PASS, FAIL naming what failed, "not scored" naming the tool to install, or "failed
        run" (left out of the pass rate). A skipped check (its tool missing) failed nothing."""
        if self.verification is None:
            return "failed run"
        if not self.verification.scored:
            return self.verification.verdict
        if self.verification.passed:
            return "PASS"
        results = self.verification.results
        failing = [r.name or r.type for r in results if not (r.passed or r.skipped)]
        return f"FAIL ({', '.join(failing)})" if failing else "FAIL (no verifiers)"


@dataclass
class _Dialog:
    steps: list[Step] = field(default_factory=list)
    user_messages: int = 0
    final_user_turn: UserTurn | None = None
    next_response: int = 0
    ide_errors: IdeReport | None = None
    """Of the workspace after the last agent turn: the end state the judge is shown."""
    unlisted: list[str] = field(default_factory=list)
    """Why the changes could not be listed after a turn, one entry per such turn."""

    def add_user(self, text: str) -> None:
        self.steps.append(Step(index=0, kind="user", text=text, timestamp=datetime.now(UTC)))
        self.user_messages += 1

    def add_agent(self, turn: AgentTurn) -> None:
        """The turn's steps. `Step.turn` (one model response) is made unique in the dialog: an
        agent CLI counts from 0 on every call, which would merge its responses across user
        messages (telemetry would then time a response across the user's replies). A step
        without a time of its own gets the time its turn ended, when the runner saw it."""
        ended = datetime.now(UTC)
        base = self.next_response
        for step in turn.steps:
            if step.timestamp is None:
                step.timestamp = ended
            step.turn = base + (step.turn if step.turn is not None else 0)
            self.next_response = max(self.next_response, step.turn + 1)
        self.steps += turn.steps


async def run_session(
    scenario: Scenario,
    agent: ScenarioAgent,
    user: SimulatedUser,
    workspace: Workspace,
    *,
    session_id: str,
    metadata: dict[str, Any] | None = None,
) -> SessionResult:
    start, started_at = time.monotonic(), datetime.now(UTC)
    dialog = _Dialog()
    with memory_group.ungrouped_notes() as ungrouped:  # the agent's shell, its MCP servers
        try:
            termination = await _converse(scenario, agent, user, workspace, dialog, start)
        except BudgetExceededError:
            raise
        except ProviderError as exc:
            termination = Termination(Stop.SIMULATOR_ERROR, f"Simulated user failed: {exc}")
        # Nothing of the agent's runs while its work is checked: a stdio MCP server it was given
        # could rewrite the workspace, or its git config, between two of the checks' git calls
        await agent.aclose()
    trajectory = _trajectory(scenario, agent, user, workspace, dialog, termination, session_id)
    trajectory.metadata.update(metadata or {})
    trajectory.metadata["started_at"] = started_at.isoformat()
    trajectory.metadata["dialog_seconds"] = round(time.monotonic() - start, 3)
    verification = None
    if not termination.stop.is_failed_run:
        verification = await _verify(scenario, workspace, trajectory)
        verification.memory_limit = memory_group.joined_notes(
            [*ungrouped, verification.memory_limit]
        )
        trajectory.outcome = Outcome(
            status="passed" if verification.passed else "failed", source="formal-verification"
        )
        trajectory.metadata["formal"] = verification.to_dict()
    return SessionResult(
        trajectory,
        termination,
        verification,
        workspace,
        user.spent,
        time.monotonic() - start,
    )


async def _converse(
    scenario: Scenario,
    agent: ScenarioAgent,
    user: SimulatedUser,
    workspace: Workspace,
    dialog: _Dialog,
    start: float,
) -> Termination:
    try:
        opening = await asyncio.wait_for(user.first_message(scenario), _left(scenario, start))
    except TimeoutError:
        return Termination(Stop.SIMULATOR_ERROR, "Simulated user failed: no opening in time")
    if opening.terminate is not None:  # before the agent did anything: not the agent's run
        why = "gave no opening message" if opening.terminate == NO_MESSAGE else "would not start"
        return Termination(Stop.SIMULATOR_ERROR, f"Simulated user failed: it {why}")
    message = opening.text
    dialog.add_user(message)
    while True:
        turn = AgentTurn()
        stopped = await _agent_turn(scenario, agent, message, workspace, turn, start)
        dialog.add_agent(turn)
        if stopped is None and not turn.steps and not turn.reply:
            stopped = Termination(Stop.NO_ACTIONS, "The agent produced no actions")
        diff, dialog.ide_errors = await _changes(workspace, scenario.ide_errors, dialog.unlisted)
        view = turn_view(turn, diff, dialog.ide_errors)
        if stopped is not None:
            if stopped.stop.gets_final_user_turn:
                dialog.final_user_turn = await _final_turn(user, view)
            return stopped
        if dialog.user_messages >= scenario.max_steps:
            return Termination(Stop.MAX_USER_MESSAGES, "Reached the limit of user messages")
        try:  # the scenario's clock covers the simulator too
            answer = await asyncio.wait_for(
                user.reply(view, first_reply=dialog.user_messages == 1), _left(scenario, start)
            )
        except TimeoutError:
            return _scenario_timeout(scenario)
        if answer.terminate == NO_MESSAGE:
            return Termination(Stop.USER_FINISHED, "The simulated user gave no message")
        if answer.terminate is not None:
            return Termination(Stop.USER_FINISHED, "User decided to finish the dialog")
        message = answer.text
        dialog.add_user(message)


async def _verify(
    scenario: Scenario, workspace: Workspace, trajectory: Trajectory
) -> ScenarioResult:
    """The scenario's checks on the final workspace; a workspace the agent replaced by a link
    makes every check an error: a scored failure, not a failed run left out of the pass rate."""
    why = replaced(workspace)
    if not why:
        return await asyncio.to_thread(
            run_scenario, scenario, workspace.path, trajectory=trajectory, base_ref=workspace.base
        )
    results = [
        VerifierResult(str(spec.get("type")), "error", why, name=spec.get("name"))
        for spec in scenario.verifiers
    ]
    return ScenarioResult(scenario.name, results, 0.0)


def _left(scenario: Scenario, start: float) -> float:
    return max(scenario.scenario_timeout_seconds - (time.monotonic() - start), 0.0)


def _scenario_timeout(scenario: Scenario) -> Termination:
    seconds = f"{scenario.scenario_timeout_seconds:g}"
    return Termination(Stop.SCENARIO_TIMEOUT, f"Scenario timed out after {seconds}s")


async def _changes(
    workspace: Workspace, ide_mode: str, unlisted: list[str]
) -> tuple[str, IdeReport | None]:
    """The diff and IDE errors for the simulator; an agent that broke the repository (`rm -rf
    .git`) gets a note instead (kept in `unlisted`), and the verifiers, which need git too,
    fail the run."""
    try:
        diff, changed = await asyncio.to_thread(changes_since_base, workspace)
    except AgentLensError as exc:
        unlisted.append(str(exc))
        unknown = None if ide_mode == "none" else IdeReport(note="the changes cannot be listed")
        return f"(the changes cannot be shown: {exc})", unknown
    return diff, await asyncio.to_thread(ide_errors, workspace.path, changed, ide_mode)


async def _final_turn(user: SimulatedUser, view: str) -> UserTurn:
    """The logged-only last turn; its failure must not change how the run ended."""
    try:
        return await user.final_turn(view)
    except ProviderError as exc:
        return UserTurn(terminate=f"(the last simulator call failed: {exc})")


async def _agent_turn(
    scenario: Scenario,
    agent: ScenarioAgent,
    message: str,
    workspace: Workspace,
    turn: AgentTurn,
    start: float,
) -> Termination | None:
    """Run one agent turn under the turn and scenario limits; a Termination if it ended the run."""
    left = scenario.scenario_timeout_seconds - (time.monotonic() - start)
    limit = min(scenario.agent_turn_timeout_seconds, max(left, 0.0))
    scenario_bound = left <= scenario.agent_turn_timeout_seconds
    try:
        await asyncio.wait_for(agent.turn(message, workspace.path, turn), limit)
    except TimeoutError:
        if scenario_bound:
            return _scenario_timeout(scenario)
        seconds = f"{scenario.agent_turn_timeout_seconds:g}"
        return Termination(
            Stop.AGENT_TURN_TIMEOUT, f"Waiting for the agent response timed out after {seconds}s"
        )
    except BudgetExceededError:
        raise
    except Exception as exc:  # spec §4.3 rule 5: any agent exception ends the run, recorded
        return Termination(Stop.AGENT_ERROR, f"Agent failed: {type(exc).__name__}: {exc}")
    return None


def _trajectory(
    scenario: Scenario,
    agent: ScenarioAgent,
    user: SimulatedUser,
    workspace: Workspace,
    dialog: _Dialog,
    termination: Termination,
    session_id: str,
) -> Trajectory:
    for index, step in enumerate(dialog.steps):
        step.index = index
    final = dialog.final_user_turn
    metadata: dict[str, Any] = {
        "scenario": scenario.name,
        "scenario_tags": list(scenario.tags),  # they choose the metric set `review` judges on
        "termination": str(termination.stop),
        "termination_reason": termination.reason,
        "user_messages": dialog.user_messages,
        "base_revision": workspace.base,
        "simulator": {
            "model": user.client.name,
            "temperature": user.settings.temperature,
            "calls": user.calls,
            "cost": round(user.spent, 6),
        },
        "simulator_transcript": transcript(user.last_request or user.messages),
    }
    if final is not None:
        metadata["final_user_turn"] = final.text or f"terminate_dialog: {final.terminate}"
    if dialog.ide_errors is not None:
        metadata["ide_errors"] = dialog.ide_errors.to_dict()
    if dialog.unlisted:
        metadata["changes_unlisted"] = _unlisted_line(dialog.unlisted)
    return Trajectory(
        id=session_id,
        task_id=scenario.name,
        task=next((s.text for s in dialog.steps if s.kind == "user"), None),
        agent=Agent(name=agent.name),
        model=agent.model,
        source=Source(format=FORMAT, path=str(workspace.path.resolve())),
        steps=dialog.steps,
        metadata=metadata,
    )


def _unlisted_line(unlisted: list[str]) -> str:
    """One line for the run: how many turns' changes the simulated user could not be shown,
    and the first reason (the others are most often the same)."""
    turns = counted(len(unlisted), "agent turn")
    return f"the changes could not be listed after {turns}; first: {unlisted[0]}"


def setup_failure(
    scenario: Scenario,
    workspace: Workspace,
    *,
    session_id: str,
    reason: str,
    metadata: dict[str, Any],
) -> SessionResult:
    """A run that never started: its workspace or a preprocessor failed (retried, left out)."""
    termination = Termination(Stop.SETUP_ERROR, f"Setup failed: {reason}")
    trajectory = Trajectory(
        id=session_id,
        task_id=scenario.name,
        source=Source(format=FORMAT, path=str(workspace.path.resolve())),
        metadata={
            "scenario": scenario.name,
            "scenario_tags": list(scenario.tags),
            "termination": str(termination.stop),
            "termination_reason": termination.reason,
            "user_messages": 0,
            **metadata,
        },
    )
    return SessionResult(trajectory, termination, None, workspace, 0.0, 0.0)
