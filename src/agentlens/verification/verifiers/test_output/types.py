"""The counts every test-output parser returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Protocol


@dataclass
class TestCounts:
    """Totals of one test run. `passed` is derived when the runner does not print it."""

    __test__ = False  # not a pytest test class

    runner: str
    tests: int
    failures: int
    errors: int = 0
    skipped: int = 0
    source: str = "console"

    @property
    def passed(self) -> int:
        return self.tests - self.failures - self.errors - self.skipped

    @property
    def ok(self) -> bool:
        return self.failures + self.errors == 0

    def to_dict(self) -> dict[str, int | str]:
        return {**asdict(self), "passed": self.passed}

    def __add__(self, other: TestCounts) -> TestCounts:
        return TestCounts(
            self.runner,
            self.tests + other.tests,
            self.failures + other.failures,
            self.errors + other.errors,
            self.skipped + other.skipped,
            self.source,
        )


class OutputParser(Protocol):
    def __call__(self, output: str, reports: dict[str, str]) -> TestCounts | None:
        """Counts from console `output` and report files; None when nothing recognisable."""
        ...
