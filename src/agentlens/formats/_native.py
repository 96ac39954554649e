"""The compiled accelerators, when the install built them.

A few hot functions have a Cython twin (`*.pyx` in this folder, built by `setup.py`): the
pure-Python function stays the specification and the fallback, and a test holds the two equal on
real and generated input. `AGENTLENS_PURE_PYTHON=1` ignores the compiled ones, to compare or debug.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType


def pure_python() -> bool:
    return os.environ.get("AGENTLENS_PURE_PYTHON", "") not in ("", "0")


def compiled(name: str) -> ModuleType | None:
    """`agentlens.formats.<name>` when it was built and not switched off, else None."""
    if pure_python():
        return None
    try:
        return importlib.import_module(f"agentlens.formats.{name}")
    except ImportError:
        return None
