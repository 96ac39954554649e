"""The compiled accelerators, when the install built them (`setup.py`).

A few hot functions have a Cython twin (`*.pyx` in this folder): the pure-Python function stays
the specification and the fallback, and a test holds the two equal on real and generated input.
A few modules are also compiled as they are, as `<module>_compiled`. `AGENTLENS_PURE_PYTHON=1`
ignores both kinds, to compare or to debug.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])


def pure_python() -> bool:
    return os.environ.get("AGENTLENS_PURE_PYTHON", "") not in ("", "0")


def twin(python: F, module: ModuleType | None, name: str) -> F:
    """`module.<name>`, the compiled twin of `python`, when `module` was built; else `python`."""
    return python if module is None else cast(F, getattr(module, name))


def compiled_copy(module: ModuleType) -> ModuleType:
    """`module` compiled from its own source (`<module>_compiled`) when built, else itself."""
    return compiled(f"{module.__name__.rsplit('.', 1)[-1]}_compiled") or module


def compiled(name: str) -> ModuleType | None:
    """`agentlens.formats.<name>` when it was built and not switched off, else None."""
    if pure_python():
        return None
    try:
        return importlib.import_module(f"agentlens.formats.{name}")
    except ImportError:
        return None


ACCELERATORS = {
    "_shell_accel": "shell-command classifier",
    "_mini_swe_agent_accel": "mini-swe-agent steps",
    "_openhands_legacy_compiled": "OpenHands legacy converter",
}


def status() -> str:
    """One line: which accelerators this install runs, or why it runs none."""
    if pure_python():
        return "pure Python (AGENTLENS_PURE_PYTHON is set)"
    built = [what for name, what in ACCELERATORS.items() if compiled(name) is not None]
    if not built:
        return "pure Python (no accelerator was built: reinstall with a C compiler to build them)"
    missing = len(ACCELERATORS) - len(built)
    return f"compiled: {', '.join(built)}" + (f" ({missing} not built)" if missing else "")
