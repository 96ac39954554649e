"""Static analysis in a scratch copy: ruff, mypy, `javac -Xlint` (the spec's stand-in for IntelliJ
inspections, decision §13.6) and a generic command with an exit code and an output pattern."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import ClassVar

from agentlens.list_text import counted
from agentlens.verification.sandbox import run_in_scratch
from agentlens.verification.verifiers.base import (
    VerifierResult,
    VerifyContext,
    output_tail,
    run_metrics,
    stopped_result,
)
from agentlens.verification.verifiers.tools import missing_tool, skipped

RUFF_FINDING = re.compile(r"^\S+:\d+:\d+: [A-Z]+\d+", re.MULTILINE)
MYPY_ERROR = re.compile(r"^\S+:\d+: error:", re.MULTILINE)
MYPY_NOTE = re.compile(r"^\S+:\d+: (?:warning|note):", re.MULTILINE)
JAVAC_ERROR = re.compile(r"^\S+\.java:\d+: error:", re.MULTILINE)
JAVAC_WARNING = re.compile(r"^\S+\.java:\d+: warning:", re.MULTILINE)


@dataclass
class StaticAnalysisVerifier:
    """Fields: `tool` (ruff | mypy | javac), `path` (what to check, default `.`),
    `include_warnings` (warnings also fail), `args[]` (extra tool arguments), `timeout_ms`,
    `env` (e.g. a PATH that finds the tool). A tool not installed skips the check."""

    type_name: ClassVar[str] = "StaticAnalysisVerifier"
    tool: str = "ruff"
    path: str = "."
    include_warnings: bool = False
    args: list[str] = field(default_factory=list)
    timeout_ms: int | None = None
    env: dict[str, str] | None = None

    def verify(self, ctx: VerifyContext) -> VerifierResult:
        command = self._command()
        timeout = self.timeout_ms / 1000 if self.timeout_ms else ctx.timeout_s
        deadline = time.monotonic() + timeout
        run, _ = run_in_scratch(ctx.repo, command, timeout_s=timeout, env=self.env)
        metrics = run_metrics(run)
        if run.timed_out:
            return VerifierResult(self.type_name, "error", f"{self.tool} timed out", metrics)
        if stopped := stopped_result(self.type_name, self.tool, run):
            return stopped
        probe = missing_tool(run, ctx.repo, self.env, deadline=deadline)
        if probe.missing is not None:
            return skipped(self.type_name, probe.missing, metrics)
        errors, warnings = self._count(run.output)
        if run.returncode != 0 and errors == 0:
            # A non-zero exit without a single parsed error is a crash or a usage problem
            # (no sources, bad path, bad config), never a clean result.
            said = output_tail(run.output, 300)
            reason = (
                f"{self.tool} exited {run.returncode} without diagnostics: {said}{probe.note()}"
            )
            return VerifierResult(self.type_name, "error", reason, metrics)
        metrics.update(errors=errors, warnings=warnings)
        bad = errors + (warnings if self.include_warnings else 0)
        rule = "errors + warnings" if self.include_warnings else "errors"
        found = f"{counted(errors, 'error')}, {counted(warnings, 'warning')}"
        reason = f"{self.tool}: {found}; {rule} = {bad}"
        return VerifierResult(self.type_name, "fail" if bad else "pass", reason, metrics)

    def _command(self) -> list[str] | str:
        if self.tool == "ruff":
            return [
                "ruff",
                "check",
                "--no-cache",
                "--output-format",
                "concise",
                *self.args,
                self.path,
            ]
        if self.tool == "mypy":
            return ["python", "-m", "mypy", "--no-incremental", *self.args, self.path]
        if self.tool == "javac":
            # Compile every source below `path` into a throw-away directory.
            extra = " ".join(self.args)
            return (
                f"mkdir -p ../javac-out && find {self.path} -name '*.java' -print0 | "
                f"xargs -0 javac -Xlint:all -d ../javac-out {extra}"
            )
        raise ValueError(f"unknown static-analysis tool '{self.tool}' (ruff, mypy, javac)")

    def _count(self, output: str) -> tuple[int, int]:
        if self.tool == "ruff":
            return len(RUFF_FINDING.findall(output)), 0
        if self.tool == "mypy":
            return len(MYPY_ERROR.findall(output)), len(MYPY_NOTE.findall(output))
        return len(JAVAC_ERROR.findall(output)), len(JAVAC_WARNING.findall(output))


@dataclass
class CommandVerifier:
    """Generic: run `command`; pass iff the exit code is in `exit_codes` (default [0]), the output
    matches `output_pattern` if given, and does not match `forbidden_pattern` if given."""

    type_name: ClassVar[str] = "CommandVerifier"
    command: list[str] | str = ""
    exit_codes: list[int] = field(default_factory=lambda: [0])
    output_pattern: str | None = None
    forbidden_pattern: str | None = None
    working_directory: str = "."
    timeout_ms: int | None = None

    def verify(self, ctx: VerifyContext) -> VerifierResult:
        timeout = self.timeout_ms / 1000 if self.timeout_ms else ctx.timeout_s
        run, _ = run_in_scratch(
            ctx.repo, self.command, timeout_s=timeout, workdir=self.working_directory
        )
        metrics = run_metrics(run)
        if run.timed_out:
            return VerifierResult(
                self.type_name, "error", f"timed out after {timeout:.0f}s", metrics
            )
        if stopped := stopped_result(self.type_name, "the command", run):
            return stopped
        problems = []
        if run.returncode not in self.exit_codes:
            problems.append(f"exit code {run.returncode} not in {self.exit_codes}")
        if self.output_pattern and not re.search(self.output_pattern, run.output, re.MULTILINE):
            problems.append(f"output does not match /{self.output_pattern}/")
        if self.forbidden_pattern and re.search(self.forbidden_pattern, run.output, re.MULTILINE):
            problems.append(f"output matches forbidden /{self.forbidden_pattern}/")
        if problems:
            return VerifierResult(self.type_name, "fail", "; ".join(problems), metrics)
        return VerifierResult(
            self.type_name, "pass", f"exit code {run.returncode}, output as required", metrics
        )
