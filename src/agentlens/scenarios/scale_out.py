"""Scenario pairs as Ray tasks (`agentlens run --engine ray[:ADDRESS]`): a pair, its attempts
included, is the unit sent to a worker, since pairs run for minutes and share nothing.

The driver keeps everything that spans pairs (the order, the budget, resuming, the store, the
progress lines); a worker runs one pair as a local run would, writing its session folders into
the output folder, and sends back each attempt's trajectory. So every Ray node must see the
output folder, the projects, the scenario folders and the driver's working folder at the same
paths (a shared filesystem), and have the agent's program, its credentials and those of the
simulator's model: `check_nodes` asks each node before any pair starts. A pair whose worker dies
is kept as a failed run (`--resume` runs it again); the other pairs go on. Stopping the run
cancels the pairs in flight; each kills its agent's processes, as a local stop does."""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentlens import __version__
from agentlens.engine.ray_engine import lost_errors
from agentlens.errors import BudgetExceededError, ConfigError
from agentlens.formats.jsonl import JsonlReader, dump_jsonl
from agentlens.providers import get_provider
from agentlens.providers.config import ProvidersConfig
from agentlens.scenarios.fold import Fold, FoldResult, RunSettings, run_pair
from agentlens.scenarios.session import SessionResult, setup_failure
from agentlens.scenarios.workspace import Workspace
from agentlens.verification.isolation import Isolation
from agentlens.verification.isolation import current as isolation_policy
from agentlens.verification.isolation import set_default as set_isolation
from agentlens.verification.sandbox import command_scope

if TYPE_CHECKING:
    from agentlens.engine.ray_engine import RayEngine
    from agentlens.scenarios.personas import Persona
    from agentlens.scenarios.scenario import Scenario

STOP_WAIT_S = 30.0
"""How long a stopped run waits for its cancelled pairs to kill their agents."""
TICK_S = 0.2
"""A worker's event loop wakes this often, so Ray's cancel (an interrupt) is seen at once."""


@dataclass(frozen=True)
class PairJob:
    """All a worker needs to run one pair: no live clients, only what rebuilds them."""

    scenario: Scenario
    persona: Persona
    attempts: int
    settings: RunSettings
    """The driver's, with `simulator` left out (`simulator_spec` rebuilds it)."""
    simulator_spec: str
    providers: ProvidersConfig
    cache: bool
    cwd: str
    spent: float
    isolation: Isolation = field(default_factory=isolation_policy)
    """The driver's sandbox policy (`--no-sandbox`, a scenario's limits): workers follow it."""


@dataclass
class RayPairs:
    """Runs pairs on the Ray cluster of `engine`; `close` cancels what is still in flight."""

    engine: RayEngine
    simulator_spec: str
    providers: ProvidersConfig = field(default_factory=ProvidersConfig.load)
    cache: bool = True
    cwd: str = field(default_factory=os.getcwd)
    """The driver's working folder, which the workers take (relative paths then agree)."""
    _in_flight: set[Any] = field(default_factory=set)

    @property
    def workers(self) -> int:
        return self.engine.workers

    def check(self, fold: Fold, settings: RunSettings) -> None:
        """Every node sees the folders and has the agent's program (before any pair starts)."""
        agent = getattr(settings.make_agent, "program", None)
        folders = [settings.out, Path(self.cwd)]
        folders += [s.directory for s in fold.scenarios if s.directory is not None]
        if settings.project is not None:
            folders.append(settings.project)
        problems = check_nodes(self.engine, folders, agent)
        if problems:
            raise ConfigError(f"--engine {self.engine.name}: {problems[0]}")

    async def run(
        self, fold: Fold, settings: RunSettings, scenario: Scenario, persona: Persona, spent: float
    ) -> list[SessionResult]:
        """Every attempt of one pair, the last one being the pair's result."""
        import ray

        portable = replace(settings, simulator=None, pairs=None)  # type: ignore[arg-type]
        job = PairJob(
            scenario, persona, fold.attempts, portable, self.simulator_spec,
            self.providers, self.cache, self.cwd, spent,
        )  # fmt: skip
        ref = _remote(ray).remote(job)
        self._in_flight.add(ref)
        try:
            saved = await ref
        except asyncio.CancelledError:
            # an interrupt in the worker: its pair kills its agent's processes
            self.engine.cancel_unfinished([ref], force=False)
            raise  # still in flight: `close` waits for it
        except Exception as exc:
            self._in_flight.discard(ref)
            return [_failed(ray, settings, scenario, persona, exc)]
        self._in_flight.discard(ref)
        attempts = JsonlReader().read(Path(f"<pair {scenario.name}/{persona.name}>"), saved)
        return [SessionResult.from_saved(t) for t in attempts]

    def close(self) -> None:
        """Wait (a bounded time) for cancelled pairs to finish killing their agents, then close
        the engine (a Ray it started is shut down)."""
        if self._in_flight:
            import ray

            self.engine.cancel_unfinished(list(self._in_flight), force=False)
            ray.wait(list(self._in_flight), num_returns=len(self._in_flight), timeout=STOP_WAIT_S)
            self._in_flight.clear()
        self.engine.close()


def run_job(job: PairJob) -> bytes:
    """On a worker: the pair's attempts, as canonical JSONL (the driver reads them back)."""
    os.chdir(job.cwd)  # relative scenario and project paths mean what they meant to the driver
    set_isolation(job.isolation)  # a worker process serves one job at a time
    simulator = get_provider(
        job.simulator_spec, role="user_simulator", cache=job.cache, config=job.providers
    )
    settings = replace(job.settings, simulator=simulator)
    fold = Fold([job.scenario], [job.persona], budget_dollars=None, attempts=job.attempts)
    outcome = FoldResult()
    pair = run_pair(fold, settings, job.scenario, job.persona, outcome, job.spent)
    with command_scope() as commands:
        try:
            asyncio.run(_interruptible(pair))
        except BaseException:
            commands.stop()  # a verifier still running in a thread
            raise
    where = {"node": _node_address(), "pid": os.getpid()}
    for attempt in outcome.attempts:
        attempt.trajectory.metadata["ray"] = where
    saved = io.BytesIO()
    dump_jsonl([attempt.trajectory for attempt in outcome.attempts], saved)
    return saved.getvalue()


def _node_address() -> str:
    import ray

    return str(ray.util.get_node_ip_address())


async def _interruptible(pair: Coroutine[Any, Any, SessionResult]) -> SessionResult:
    """Ray cancels a task by interrupting its thread, which Python sees only between bytecodes:
    a loop asleep in `epoll` for a turn of minutes would not see it. A ticker keeps it awake;
    the interrupt then cancels the pair, which kills its agent's processes."""

    async def tick() -> None:
        while True:
            await asyncio.sleep(TICK_S)

    ticker = asyncio.ensure_future(tick())
    try:
        return await pair
    finally:
        ticker.cancel()


def check_nodes(engine: RayEngine, folders: list[Path], program: str | None) -> list[str]:
    """One line per problem a node has: a folder it does not see as the driver does (a marker
    file written here must be there), or the agent program missing from its PATH."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    out = folders[0]
    out.mkdir(parents=True, exist_ok=True)
    marker = out / f".agentlens-node-check-{uuid.uuid4().hex}"
    marker.write_text("")
    try:
        probe: Any = ray.remote(num_cpus=0, max_retries=0)(node_problems)
        paths = [str(folder.resolve()) for folder in folders]
        refs = {
            node["NodeManagerAddress"]: probe.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)
            ).remote(node["NodeManagerAddress"], paths, str(marker.resolve()), program, __version__)
            for node in ray.nodes()
            if node.get("Alive")
        }
        problems = []
        for address, ref in refs.items():
            try:
                problems += ray.get(ref)
            except ray.exceptions.RayTaskError as exc:  # e.g. an agentlens without this module
                cause = getattr(exc, "cause", None) or exc
                problems.append(
                    f"node {address} cannot run AgentLens ({type(cause).__name__}: "
                    f"{str(cause).strip().splitlines()[0] if str(cause).strip() else ''}); "
                    f"install agentlens {__version__} there"
                )
        return problems
    finally:
        marker.unlink(missing_ok=True)


def node_problems(
    node: str, folders: list[str], marker: str, program: str | None, version: str = __version__
) -> list[str]:
    """On one node: what it lacks to run pairs (the lines `check_nodes` reports)."""
    problems = []
    if version != __version__:  # the pairs would run another AgentLens than the driver's
        problems.append(f"node {node} has agentlens {__version__}, this machine {version}")
    if not os.path.isfile(marker):
        problems.append(
            f"node {node} does not see the output folder {os.path.dirname(marker)} as this "
            "machine does: every Ray node must share it (and the projects) at the same path"
        )
    for folder in folders[1:]:
        if not os.path.isdir(folder):
            problems.append(f"node {node} has no folder {folder}: share it at the same path")
    if program is not None and shutil.which(program) is None:
        problems.append(f"node {node} has no agent program {program!r} on its PATH")
    return problems


def _remote(ray: Any) -> Any:
    # one CPU a pair: the agent's own processes run on that node's cores
    return ray.remote(num_cpus=1, max_retries=0)(run_job)


def _failed(
    ray: Any, settings: RunSettings, scenario: Scenario, persona: Persona, exc: Exception
) -> SessionResult:
    """A pair that could not run to its end on Ray: a failed run, kept so `--resume` runs it
    again, while the other pairs go on. A spent budget is not a failure (the pair is skipped)."""
    if isinstance(exc, BudgetExceededError):
        raise exc
    if isinstance(exc, lost_errors(ray)):
        what = "the Ray worker running it died"
    elif isinstance(exc, ray.exceptions.RayTaskError):  # `run_job` raised: a node that differs
        what, exc = "it failed on its Ray worker", getattr(exc, "cause", None) or exc
    else:
        raise exc
    first = (str(exc).strip().splitlines() or [""])[0]
    folder = settings.out / "sessions" / scenario.name / persona.name
    return setup_failure(
        scenario,
        Workspace(folder, ""),
        session_id=f"{settings.run_name}/{scenario.name}/{persona.name}",
        reason=f"{what} ({type(exc).__name__}: {first})",
        metadata={"persona": persona.name, "attempt": 1},
    )
