"""The repo's scripts/ as modules, so tests pin what the labelled-set and profile scripts compute."""

from __future__ import annotations

import csv
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
ANNOTATIONS = Path(__file__).resolve().parent / "labelled_states" / "annotations.csv"


def script(name: str) -> ModuleType:
    """scripts/<name>.py, loaded once and kept in sys.modules so scripts can import each other."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def adjudicated_stages() -> dict[str, str]:
    """Each hand-labelled state's adjudicated stage (empty while not adjudicated)."""
    with ANNOTATIONS.open(newline="") as handle:
        return {row["state_id"]: row["adjudicated"] for row in csv.DictReader(handle)}
