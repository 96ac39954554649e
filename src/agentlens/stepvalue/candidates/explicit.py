"""Explicit candidate sets: the open-QA setting, read from an `asv.v1` JSONL file."""

from __future__ import annotations

from pathlib import Path

from agentlens.stepvalue.model import Problem
from agentlens.stepvalue.schema import load_asv


def explicit_problems(path: str | Path) -> list[Problem]:
    """Every trajectory of an `asv.v1` file, with its own candidates and gold id."""
    return load_asv(path)
