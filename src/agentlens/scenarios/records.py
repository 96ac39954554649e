"""The records a scenario run keeps in the store: `formal_passed`, `verifiers_passed`,
`termination`, `user_messages`, `steps` and `simulator_cost` per scenario × persona run; the formal
result and the duration as the body."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentlens.scenarios.fold import FoldResult
from agentlens.scenarios.session import SessionResult
from agentlens.store.model import Metric, Record, Run
from agentlens.store.records import trajectory_record


def scenario_records(sessions: Iterable[SessionResult]) -> list[Record]:
    """One record per scenario × persona run: formal pass (1/0, or none for a failed run), the
    share of verifiers passed, user messages, steps, and why the dialog stopped."""
    return [
        trajectory_record(s.trajectory, _scenario_metrics(s), _scenario_body(s)) for s in sessions
    ]


def _scenario_metrics(session: SessionResult) -> list[Metric]:
    meta, formal = session.trajectory.metadata, session.verification
    metrics = [
        Metric(
            name="formal_passed",
            value=None if formal is None or not formal.scored else float(formal.passed),
            label="failed run" if session.failed else None,
            reason=str(meta.get("termination_reason") or ""),
        ),
        Metric(name="termination", label=str(session.termination.stop)),
        Metric(name="user_messages", value=meta.get("user_messages")),
        Metric(name="steps", value=len(session.trajectory.steps)),
        Metric(name="simulator_cost", value=session.simulator_cost),
    ]
    if formal is not None:
        metrics.append(Metric(name="verifiers_passed", value=formal.fraction_passed))
    return metrics


def _scenario_body(session: SessionResult) -> dict[str, Any]:
    formal = session.verification
    return {"formal": formal.to_dict() if formal else None, "duration_s": session.duration_s}


SCENARIO_SCORER = "scenario/formal/1"


def scenario_run(result: FoldResult, label: str, agent: str, simulator: str) -> Run:
    """The store's run for a finished fold: its summary without the per-session lines (those
    are the records)."""
    summary = {k: v for k, v in result.summary().items() if k != "sessions"}
    return Run(
        kind="scenario",
        scorer=SCENARIO_SCORER,
        label=label,
        settings={"agent": agent, "simulator": simulator},
        summary=summary,
    )
