"""One parser per test runner; `get_parser(name)` picks by runner name."""

from __future__ import annotations

import importlib

from agentlens.errors import ConfigError
from agentlens.verification.verifiers.test_output.types import OutputParser, TestCounts

PARSERS: dict[str, str] = {
    "pytest": "pytest",
    "unittest": "unittest",
    "maven": "surefire",
    "surefire": "surefire",
    "gradle": "gradle",
    "jest": "jest",
    "npm": "jest",
    "cargo": "cargo",
    "go": "gotest",
}


def get_parser(runner: str) -> OutputParser:
    module = PARSERS.get(runner.lower())
    if module is None:
        raise ConfigError(f"unknown test runner '{runner}'; known: {', '.join(sorted(PARSERS))}")
    parse: OutputParser = importlib.import_module(f"{__name__}.{module}").parse
    return parse


__all__ = ["PARSERS", "TestCounts", "get_parser"]
