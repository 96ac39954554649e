"""A fold (spec §2.1, §4.4): every scenario × persona, each retried up to `num_attempts` times
while it ends in an agent failure, under a dollar budget that counts only the simulated user's
spend (as the released runner does); once it is exceeded the remaining pairs are skipped. Pairs
may run several at once (`RunSettings.parallel`); a pair is also the unit to scale out.

Output folder:
    trajectories/<scenario>/<persona>.jsonl    the final attempt of each pair (canonical JSONL:
                                               `agentlens review/telemetry/score` read it)
    failed/<scenario>/<persona>.jsonl          pairs whose every attempt failed (left out)
    sessions/<scenario>/<persona>/attempt-<n>/ repo/ (the workspace), verify.json, trajectory.jsonl,
                                               and an external agent's own trace per turn
    run.json                                   the summary `FoldResult.summary()` prints
    verify.json                                the counted runs' formal results, as `agentlens
                                               verify --out` writes them (`compare --a-verify`)
"""

from __future__ import annotations

import asyncio
import math
import os
import re
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agentlens.errors import BudgetExceededError, ConfigError
from agentlens.formats.jsonl import dump_jsonl, load_jsonl
from agentlens.jsonio import dump, read_user_json
from agentlens.providers.client import LLMClient
from agentlens.redaction import maybe_redact
from agentlens.scenarios.mcp import mcp_config, missing_variables
from agentlens.scenarios.mcp_servers import LEGACY_SSE
from agentlens.scenarios.personas import RELEASED_FOLD, Persona, load_persona
from agentlens.scenarios.scenario import (
    Scenario,
    load_scenario,
    refuse_unknown_keys,
)
from agentlens.scenarios.session import SessionResult, run_session, setup_failure
from agentlens.scenarios.simulated_user import SimulatedUser, SimulatorSettings
from agentlens.scenarios.workspace import Workspace, prepare, run_preprocessors
from agentlens.seams import ScenarioAgent
from agentlens.verification import VERIFY_KIND, isolation
from agentlens.verification.sandbox import command_scope

SAFE_NAME = re.compile(r"[A-Za-z0-9._-]+")


class AgentFactory(Protocol):
    """Builds a fresh agent for one session, given the session folder (for its own traces) and,
    when `takes_mcp`, the scenario's MCP config file (`agentlens.scenarios.mcp`)."""

    takes_mcp: bool
    own_mcp_client: bool
    """Whether the agent talks to the servers through AgentLens's client (`mcp_client.py`)
    rather than its own (an agent CLI's)."""

    def __call__(self, folder: Path, mcp_config: Path | None = None) -> ScenarioAgent: ...


@dataclass
class Fold:
    scenarios: list[Scenario]
    personas: list[Persona]
    budget_dollars: float | None = 5.0
    attempts: int = 3


def load_fold(path: str | Path) -> Fold:
    """The released `workflows.json`: `scenario_paths` (folders holding `config.json`, relative
    to the file), `user_paths` (persona files), `budget_dollars_limit`, `num_attempts`."""
    path = Path(path)
    doc = read_user_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("scenario_paths"), list):
        raise ConfigError(f"{path}: a fold needs a 'scenario_paths' list")
    refuse_unknown_keys(path, doc, FOLD_KEYS, "fold")
    base = path.parent
    scenarios = [load_scenario(_scenario_file(base / str(p))) for p in doc["scenario_paths"]]
    users = doc.get("user_paths") or list(RELEASED_FOLD)
    if not isinstance(users, list):
        raise ConfigError(f"{path}: user_paths must be a list of persona files or names")
    personas = [load_persona(_persona_spec(base, str(u))) for u in users]
    return Fold(
        scenarios, personas, budget_dollars=_budget(path, doc), attempts=_attempts(path, doc)
    )


FOLD_KEYS = ("scenario_paths", "user_paths", "budget_dollars_limit", "num_attempts")


def _budget(path: Path, doc: dict[str, Any]) -> float | None:
    budget = doc.get("budget_dollars_limit", 5.0)
    if budget is None:
        return None
    if isinstance(budget, bool) or not isinstance(budget, int | float):
        raise ConfigError(
            f"{path}: budget_dollars_limit must be a number or null, not {budget!r:.40}"
        )
    if not math.isfinite(budget) or budget < 0:
        raise ConfigError(f"{path}: budget_dollars_limit must be at least 0, not {budget!r}")
    return float(budget)


def _attempts(path: Path, doc: dict[str, Any]) -> int:
    attempts = doc.get("num_attempts", 3)
    if isinstance(attempts, float) and attempts.is_integer():
        attempts = int(attempts)
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise ConfigError(
            f"{path}: num_attempts must be a whole number of at least 1, not {attempts!r:.40}"
        )
    return attempts


def _scenario_file(path: Path) -> Path:
    return path / "config.json" if path.is_dir() else path


def _persona_spec(base: Path, spec: str) -> str:
    """A built-in name, else a file relative to the fold; the released `users/default.txt` is
    used when present, our own wording of it otherwise."""
    if (base / spec).is_file():
        return str(base / spec)
    return Path(spec).stem if Path(spec).stem in ("default", "helpful", "toxic") else spec


@dataclass
class RunSettings:
    make_agent: AgentFactory
    simulator: LLMClient
    out: Path
    project: Path | None = None
    """Overrides each scenario's `project_path`."""
    run_name: str = "run"
    parallel: int = 1
    """Pairs run at once (each its own workspace, agent and dialog)."""
    resume: bool = False
    """Keep the pairs already in `out/trajectories/` (their simulator spend still counts)."""
    simulator_settings: SimulatorSettings = field(default_factory=SimulatorSettings)
    ignore_mcp: bool = False
    """Run scenarios that name MCP servers without handing them to the agent."""
    pairs: PairRunner | None = None
    """Runs each pair elsewhere (`scale_out.RayPairs`); None runs them in this process."""


class PairRunner(Protocol):
    """Runs whole pairs, attempts included, somewhere else (a Ray cluster: `scale_out.py`)."""

    @property
    def workers(self) -> int:
        """Pairs it can run at once (the default `parallel`)."""
        ...

    def check(self, fold: Fold, settings: RunSettings) -> None:
        """Refuse (ConfigError) what would fail there, before any pair starts."""
        ...

    async def run(
        self, fold: Fold, settings: RunSettings, scenario: Scenario, persona: Persona, spent: float
    ) -> list[SessionResult]:
        """Every attempt of the pair, the last being its result."""
        ...

    def close(self) -> None:
        """Wait for the pairs still in flight (cancelled by a stop) to end."""
        ...


@dataclass
class FoldResult:
    sessions: list[SessionResult] = field(default_factory=list)
    attempts: list[SessionResult] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    resumed: int = 0
    """Pairs read back from an earlier, interrupted run of the same output folder."""
    spent: float = 0.0
    budget_dollars: float | None = None

    @property
    def complete(self) -> bool:
        """Every pair ran and none failed: `agentlens run` exits 0."""
        return not self.skipped and not any(s.failed for s in self.sessions)

    def summary(self) -> dict[str, Any]:
        """Formal pass rate over the runs that did not fail (spec §4.4: failures leave the
        denominator), termination reasons, and what was retried or skipped."""
        # failed runs and runs whose checks could not run (a tool not installed) are not counted
        counted = [
            s
            for s in self.sessions
            if not s.failed and (s.verification is None or s.verification.scored)
        ]
        passed = sum(1 for s in counted if s.verification and s.verification.passed)
        return {
            "pairs": len(self.sessions) + len(self.skipped),
            "runs": len(self.sessions),
            "failed_runs": len(self.sessions) - len(counted),
            "formal_passed": passed,
            "formal_pass_rate": round(passed / len(counted), 4) if counted else None,
            "attempts": len(self.attempts),
            "resumed": self.resumed,
            "terminations": dict(Counter(str(s.termination.stop) for s in self.sessions)),
            "skipped_over_budget": [f"{a}/{b}" for a, b in self.skipped],
            "simulator_spend_dollars": round(self.spent, 6),
            "budget_dollars": self.budget_dollars,
            "sessions": [_session_line(s) for s in self.sessions],
        }

    def verify_document(self) -> dict[str, Any]:
        """The formal results of the runs the pass rate counts, as an `agentlens verify --out`
        file: `compare --a-verify OUT/verify.json` and `qi --verify` take a scenario run."""
        results = [
            {**s.verification.to_dict(), "trajectory_id": s.trajectory.id}
            for s in self.sessions
            if not s.failed and s.verification is not None
        ]
        return {"kind": VERIFY_KIND, "results": results}


def _session_line(result: SessionResult) -> dict[str, Any]:
    meta = result.trajectory.metadata
    return {
        "id": result.trajectory.id,
        "termination": meta.get("termination"),
        "termination_reason": meta.get("termination_reason"),
        "user_messages": meta.get("user_messages"),
        "steps": len(result.trajectory.steps),
        "formal_passed": result.verification.passed if result.verification else None,
        "duration_s": round(result.duration_s, 2),
        **({"changes_unlisted": meta["changes_unlisted"]} if "changes_unlisted" in meta else {}),
    }


async def run_fold(
    fold: Fold,
    settings: RunSettings,
    on_session: Callable[[SessionResult], None] | None = None,
) -> FoldResult:
    """Every pair, `settings.parallel` at a time; results and skips in the fold's order. With
    pairs in flight, the budget is checked as each pair starts, so it may be overshot by what
    the pairs already running spend."""
    outcome = FoldResult(budget_dollars=fold.budget_dollars)
    pairs = [(s, p) for s in fold.scenarios for p in fold.personas]
    _check_pairs(pairs, settings)  # every problem a run would meet late, before any starts
    _check_out(settings)
    isolation.require()
    if settings.pairs is not None:
        settings.pairs.check(fold, settings)
    done: dict[int, SessionResult] = {}
    skipped: set[int] = set()
    gate = asyncio.Semaphore(max(settings.parallel, 1))

    async def one(index: int, scenario: Scenario, persona: Persona) -> None:
        async with gate:
            earlier = 0.0  # a resumed pair's spend before this run
            if settings.resume:
                kept, earlier = _resumed(settings.out, scenario, persona)
                if kept is not None:
                    done[index] = kept
                    outcome.resumed += 1
                    outcome.spent += earlier
                    return
                outcome.spent += earlier
            if fold.budget_dollars is not None and outcome.spent > fold.budget_dollars:
                skipped.add(index)
                return
            try:
                result = await _pair(fold, settings, scenario, persona, outcome, earlier)
            except BudgetExceededError:
                skipped.add(index)
                return
            done[index] = result
            _write_final(settings.out, result, scenario.name, persona.name)
            if on_session is not None:
                on_session(result)

    with command_scope() as commands:  # verifiers and preprocessors run in threads
        try:
            await asyncio.gather(*(one(i, s, p) for i, (s, p) in enumerate(pairs)))
        except asyncio.CancelledError:
            commands.stop()  # kill their commands; the threads cannot be cancelled
            raise
    outcome.sessions = [done[i] for i in sorted(done)]
    outcome.skipped = [(pairs[i][0].name, pairs[i][1].name) for i in sorted(skipped)]
    dump(outcome.summary(), settings.out / "run.json")
    dump(outcome.verify_document(), settings.out / "verify.json")
    return outcome


def _check_out(settings: RunSettings) -> None:
    """A second run into the same folder would mix its results with the first's."""
    used = [settings.out / name for name in ("trajectories", "failed", "sessions")]
    if not settings.resume and any(path.exists() for path in used):
        raise ConfigError(
            f"{settings.out} already holds a run: add --resume to finish it, or choose a new --out"
        )


def _resumed(out: Path, scenario: Scenario, persona: Persona) -> tuple[SessionResult | None, float]:
    """A pair an earlier run finished, and what the simulator spent on it. A pair that failed
    there is run again (a simulator outage, say): None, with its earlier spend."""
    for failed in (False, True):
        path = _final_path(out, scenario.name, persona.name, failed=failed)
        if path.is_file():
            saved = SessionResult.from_saved(load_jsonl(path)[0])
            return (saved if not failed else None), saved.pair_simulator_cost
    return None, 0.0


def _check_pairs(pairs: list[tuple[Scenario, Persona]], settings: RunSettings) -> None:
    """Names become folder names, so they must be plain and unique; projects must exist."""
    seen: set[tuple[str, str]] = set()
    for scenario, persona in pairs:
        for kind, name in (("scenario", scenario.name), ("persona", persona.name)):
            if not SAFE_NAME.fullmatch(name) or name in (".", ".."):
                raise ConfigError(
                    f"{kind} name {name!r} cannot name a folder: use letters, digits, '._-'"
                )
        if (scenario.name, persona.name) in seen:
            raise ConfigError(
                f"scenario {scenario.name!r} with persona {persona.name!r} is given twice"
            )
        seen.add((scenario.name, persona.name))
        project = _project(settings, scenario)
        if not project.is_dir():
            raise ConfigError(f"scenario {scenario.name!r}: project folder {project} not found")
        if scenario.mcp_servers and not settings.ignore_mcp:
            _check_mcp(scenario, settings.make_agent)


def _check_mcp(scenario: Scenario, make_agent: AgentFactory) -> None:
    """A scenario run without the MCP servers it names would be judged on a task its agent could
    not do: refuse, unless asked (`--ignore-mcp`), and before any pair starts."""
    names = ", ".join(s.name for s in scenario.mcp_servers)
    if not make_agent.takes_mcp:
        raise ConfigError(
            f"scenario {scenario.name!r} gives its agent MCP servers ({names}), but this agent "
            "cannot take them: a cmd: agent takes them where its command names {mcp_config} "
            "(claude: --mcp-config {mcp_config}); or add --ignore-mcp to run without them"
        )
    legacy = [s.name for s in scenario.mcp_servers if s.spec.get("type") == "sse"]
    if legacy and make_agent.own_mcp_client:
        raise ConfigError(
            f"scenario {scenario.name!r}: the built-in agent cannot reach {', '.join(legacy)}: "
            f"{LEGACY_SSE}"
        )
    missing = missing_variables(scenario.mcp_servers, os.environ)
    if missing:
        raise ConfigError(
            f"scenario {scenario.name!r}: MCP placeholders not set in the environment: "
            f"{', '.join(missing)}"
        )


async def _pair(
    fold: Fold,
    settings: RunSettings,
    scenario: Scenario,
    persona: Persona,
    outcome: FoldResult,
    spent: float,
) -> SessionResult:
    """One pair here, or on the runner that takes whole pairs elsewhere."""
    if settings.pairs is None:
        return await run_pair(fold, settings, scenario, persona, outcome, spent)
    attempts = await settings.pairs.run(fold, settings, scenario, persona, spent)
    outcome.attempts += attempts
    outcome.spent += sum(attempt.simulator_cost for attempt in attempts)
    return attempts[-1]


async def run_pair(
    fold: Fold,
    settings: RunSettings,
    scenario: Scenario,
    persona: Persona,
    outcome: FoldResult,
    spent: float = 0.0,
) -> SessionResult:
    """Attempts until one does not fail; `spent` is what earlier runs of the pair cost."""
    result: SessionResult | None = None
    for attempt in range(1, max(fold.attempts, 1) + 1):
        folder = settings.out / "sessions" / scenario.name / persona.name / f"attempt-{attempt}"
        result = await _run_attempt(settings, scenario, persona, folder, attempt)
        outcome.attempts.append(result)
        outcome.spent += result.simulator_cost
        spent += result.simulator_cost
        if not result.failed:
            break
    assert result is not None
    result.trajectory.metadata["pair_simulator_cost"] = round(spent, 6)  # every attempt, ever
    return result


async def _run_attempt(
    settings: RunSettings, scenario: Scenario, persona: Persona, folder: Path, attempt: int
) -> SessionResult:
    """One attempt, its commands (agent, MCP servers, verifiers) under the scenario's sandbox."""
    with isolation.policy(scenario.sandbox_policy()):
        return await _attempt(settings, scenario, persona, folder, attempt)


async def _attempt(
    settings: RunSettings, scenario: Scenario, persona: Persona, folder: Path, attempt: int
) -> SessionResult:
    session_id = f"{settings.run_name}/{scenario.name}/{persona.name}"
    metadata: dict[str, Any] = {"persona": persona.name, "attempt": attempt}
    try:
        workspace = await asyncio.to_thread(
            prepare, _project(settings, scenario), folder / "repo", leave_out=settings.out
        )
        await asyncio.to_thread(run_preprocessors, workspace, scenario.preprocessors)
    except (ConfigError, OSError) as exc:
        return _saved_attempt(
            folder,
            setup_failure(
                scenario, Workspace(folder / "repo", ""), session_id=session_id,
                reason=str(exc), metadata=metadata,
            ),
        )  # fmt: skip
    with _mcp_file(settings, scenario, workspace.path, metadata) as mcp:
        agent = settings.make_agent(folder, mcp)
        user = SimulatedUser(
            settings.simulator,
            persona,
            scenario,
            agent_name=agent.name,
            project=str(workspace.path),
            session_key=f"{session_id}#{attempt}",
            settings=settings.simulator_settings,
        )
        try:
            result = await run_session(
                scenario, agent, user, workspace, session_id=session_id, metadata=metadata
            )
        finally:
            await agent.aclose()
    return _saved_attempt(folder, result)


def _mcp_file(
    settings: RunSettings, scenario: Scenario, workdir: Path, metadata: dict[str, Any]
) -> AbstractContextManager[Path | None]:
    """The attempt's MCP config, when its agent takes one; which servers it got goes on record."""
    if scenario.mcp_servers:
        key = "mcp_servers_ignored" if settings.ignore_mcp else "mcp_servers"
        metadata[key] = [s.name for s in scenario.mcp_servers]
    if not settings.make_agent.takes_mcp:
        return nullcontext()
    return mcp_config([] if settings.ignore_mcp else scenario.mcp_servers, workdir.resolve())


def _saved_attempt(folder: Path, result: SessionResult) -> SessionResult:
    """Saved redacted: the session's own texts (the simulated user's, the verifiers') never went
    through the read path's redaction that the agent's trace did."""
    folder.mkdir(parents=True, exist_ok=True)
    result.trajectory = maybe_redact(result.trajectory)
    # the agent could write in this folder: what it left under these names is not followed
    dump_jsonl([result.trajectory], isolation.reclaim(folder / "trajectory.jsonl"))
    if result.verification is not None:
        dump(result.verification.to_dict(), isolation.reclaim(folder / "verify.json"))
    return result


def _project(settings: RunSettings, scenario: Scenario) -> Path:
    if settings.project is not None:
        return settings.project
    if scenario.project_path and scenario.directory is not None:
        return (scenario.directory / scenario.project_path).resolve()
    raise ConfigError(f"scenario {scenario.name!r} names no project_path; give --project")


def _final_path(out: Path, scenario: str, persona: str, *, failed: bool) -> Path:
    """Runs that still failed after every attempt go to `failed/`: spec §4.4 leaves them out, so
    `agentlens review OUT/trajectories` must not see them."""
    return out / ("failed" if failed else "trajectories") / scenario / f"{persona}.jsonl"


def _write_final(out: Path, result: SessionResult, scenario: str, persona: str) -> None:
    target = _final_path(out, scenario, persona, failed=result.failed)
    other = _final_path(out, scenario, persona, failed=not result.failed)
    other.unlink(missing_ok=True)  # a resumed pair that failed before and passes now
    target.parent.mkdir(parents=True, exist_ok=True)
    dump_jsonl([result.trajectory], target)
