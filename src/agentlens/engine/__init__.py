"""Scale-out for the CPU-bound batch jobs (the `Engine` seam in `agentlens.seams`).

    get_engine("serial")         in process, the default
    get_engine("processes")      a local process pool, one worker per CPU; "processes:N" for N
    get_engine("ray")            a new local Ray; "ray:ADDRESS" joins that cluster, "ray:auto"
                                 the one named in $RAY_ADDRESS (never one found running)
    get_engine(None)             $AGENTLENS_ENGINE, else serial

`engine.map(fn, items)` returns one `Outcome` per item in input order; an item whose `fn` raises
gets `Outcome.error` and the rest still run. `fn` and the items must be picklable (a top-level
function, or a `functools.partial` of one) for every engine but serial.
"""

from __future__ import annotations

import importlib
import os

from agentlens.engine._base import SPECS
from agentlens.engine.outcome import Failure, Outcome, UnitError, WorkerLostError
from agentlens.errors import ConfigError
from agentlens.seams import Engine

__all__ = ["ENGINES", "Engine", "Failure", "Outcome", "UnitError", "WorkerLostError", "get_engine"]

ENV = "AGENTLENS_ENGINE"

ENGINES: dict[str, str] = {
    "serial": "agentlens.engine.serial:SerialEngine",
    "processes": "agentlens.engine.processes:ProcessEngine",
    "ray": "agentlens.engine.ray_engine:RayEngine",
}
"""Engine name -> "module:Class"; the class takes the text after "name:" (or None)."""


def get_engine(spec: str | None = None) -> Engine:
    """The engine for `spec` ("name" or "name:ARG"; a "package.module:Class" path also works)."""
    spec = (spec or os.environ.get(ENV) or "serial").strip()
    name, _, arg = spec.partition(":")
    if name in ENGINES:
        module, _, attr = ENGINES[name].partition(":")
        engine: Engine = getattr(importlib.import_module(module), attr)(arg or None)
        return engine
    if "." in name and arg:
        return _from_path(spec, name, arg)
    raise ConfigError(f"unknown engine {spec!r}; choose one of: {SPECS}")


def _from_path(spec: str, module: str, attr: str) -> Engine:
    try:
        engine: Engine = getattr(importlib.import_module(module), attr)()
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"engine {spec!r} cannot be loaded ({exc}); choose one of: {SPECS}"
        ) from exc
    return engine
