"""Run a test suite in a scratch copy and parse its result: pytest, unittest, Maven Surefire,
Gradle, npm/jest, cargo test, go test. Passes iff the runner reported tests and no failures or
errors; optionally also requires a minimum line coverage (coverage.py / JaCoCo reports)."""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from typing import Any, ClassVar

from agentlens.verification.sandbox import CommandResult, run_in_scratch
from agentlens.verification.verifiers import coverage
from agentlens.verification.verifiers.base import (
    VerifierResult,
    VerifyContext,
    run_metrics,
    stopped_result,
)
from agentlens.verification.verifiers.test_output import get_parser
from agentlens.verification.verifiers.test_output.types import TestCounts
from agentlens.verification.verifiers.tools import ToolProbe, missing_tool, skipped

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
DEFAULT_COMMANDS: dict[str, list[str]] = {
    "pytest": ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
    "unittest": ["python", "-m", "unittest", "discover"],
    "maven": ["mvn", "-o", "-B", "test"],
    # A Gradle daemon would outlive the scratch copy (~250 MB, idle for hours).
    "gradle": ["gradle", "--offline", "--no-daemon", "test"],
    "jest": ["npx", "jest", "--ci"],
    "cargo": ["cargo", "test", "--offline"],
    "go": ["go", "test", "-v", "./..."],
}


@dataclass
class RunTestsVerifier:
    """Fields: `runner` (or the spec's `build_system_name`), `command[]`, `working_directory`,
    `timeout_ms`, `min_tests` (default 1), `min_coverage` (percent), `coverage_report` and
    `venv_path` (a virtualenv in the repository whose `bin/` goes first on PATH, as the released
    PythonRunTestsVerifier does with its default `.venv`)."""

    type_name: ClassVar[str] = "RunTestsVerifier"
    runner: str = "pytest"
    command: list[str] | str | None = None
    working_directory: str = "."
    timeout_ms: int | None = None
    min_tests: int = 1
    min_coverage: float | None = None
    coverage_report: str | None = None
    env: dict[str, str] | None = None
    venv_path: str | None = None

    def verify(self, ctx: VerifyContext) -> VerifierResult:
        command = self.command or DEFAULT_COMMANDS.get(self.runner.lower(), [])
        timeout = self.timeout_ms / 1000 if self.timeout_ms else ctx.timeout_s
        env = self._env(ctx)
        deadline = time.monotonic() + timeout
        run, reports = run_in_scratch(
            ctx.repo, command, timeout_s=timeout, workdir=self.working_directory, env=env,
            reports=True,
        )  # fmt: skip
        if stopped := stopped_result(self.type_name, self.runner, run):
            return stopped  # what a stopped run printed, or its reports, are no count
        counts = get_parser(self.runner)(ANSI.sub("", run.output), reports)
        probe = ToolProbe()
        if counts is None:
            probe = missing_tool(run, ctx.repo, env, self.working_directory, deadline=deadline)
        if probe.missing is not None:
            return skipped(self.type_name, probe.missing, {"exit_code": run.returncode})
        result = self._judge(run, counts)
        result.reason += probe.note()
        if self.min_coverage is not None and result.status == "pass":
            result = self._check_coverage(result, reports)
        result.metrics.update(run_metrics(run))
        return result

    def _env(self, ctx: VerifyContext) -> dict[str, str] | None:
        venv = (ctx.repo / self.venv_path).resolve() if self.venv_path else None
        if venv is None or not (venv / "bin").is_dir():
            return self.env
        path = os.pathsep.join(x for x in (str(venv / "bin"), os.environ.get("PATH", "")) if x)
        return {"VIRTUAL_ENV": str(venv), "PATH": path, **(self.env or {})}

    def _judge(self, run: CommandResult, counts: TestCounts | None) -> VerifierResult:
        if run.timed_out:
            return self._result("error", f"{self.runner} timed out after {run.duration_s:.0f}s")
        if counts is None:
            return self._result(
                "error", f"no {self.runner} result found in the output (exit code {run.returncode})"
            )
        metrics: dict[str, Any] = counts.to_dict()
        summary = (
            f"{counts.tests} tests: {counts.passed} passed, {counts.failures} failed, "
            f"{counts.errors} errors, {counts.skipped} skipped"
        )
        if not counts.ok:
            return self._result("fail", f"{summary} (failures + errors > 0)", metrics)
        if counts.tests < self.min_tests:
            return self._result("fail", f"{summary}; fewer than {self.min_tests} tests", metrics)
        if run.returncode not in (0, None):
            return self._result("fail", f"{summary}, but exit code {run.returncode}", metrics)
        return self._result("pass", summary, metrics)

    def _check_coverage(self, result: VerifierResult, reports: dict[str, str]) -> VerifierResult:
        found = coverage.from_reports(reports, self.coverage_report)
        if found is None:
            result.status, result.reason = "error", f"{result.reason}; no coverage report found"
            return result
        result.metrics.update(found.to_dict())
        verdict = f"line coverage {found.percent}% (min {self.min_coverage}%)"
        if found.percent < (self.min_coverage or 0):
            result.status = "fail"
        result.reason = f"{result.reason}; {verdict}"
        return result

    def _result(
        self, status: Any, reason: str, metrics: dict[str, Any] | None = None
    ) -> VerifierResult:
        return VerifierResult(self.type_name, status, reason, dict(metrics or {}))
