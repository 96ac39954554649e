"""Build tasks: run a command (or build-system tasks) in a scratch copy; pass iff it exits 0 (the
released verifier passes when the tasks ran without an error) and, given `reg_exp_pattern`, its
output matches it exactly `num_expected` times (`strict_count`, default true as released) or at
least that often. The exit code counts with a pattern too: the agent's tests write part of the
output, and one printing `[INFO] BUILD SUCCESS` made a failed Maven build pass."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from agentlens.verification.sandbox import run_in_scratch
from agentlens.verification.verifiers.base import (
    VerifierResult,
    VerifyContext,
    run_metrics,
    stopped_result,
)

BUILD_TOOLS = {
    "maven": ["mvn", "-o", "-B"],
    "gradle": ["gradle", "--offline", "--no-daemon"],
    "npm": ["npm", "run"],
}


@dataclass
class RunBuildSystemTaskVerifier:
    """Fields: `command` (argv or shell string) or `build_system_name` + `tasks[]`, `path`
    (working directory), `reg_exp_pattern`, `strict_count`, `num_expected`, `timeout_ms`."""

    type_name: ClassVar[str] = "RunBuildSystemTaskVerifier"
    reg_exp_pattern: str | None = None
    command: list[str] | str | None = None
    build_system_name: str | None = None
    tasks: list[str] = field(default_factory=list)
    path: str = "."
    strict_count: bool = True
    num_expected: int = 1
    timeout_ms: int | None = None

    def verify(self, ctx: VerifyContext) -> VerifierResult:
        command = self.command or [*BUILD_TOOLS.get(self.build_system_name or "", []), *self.tasks]
        timeout = self.timeout_ms / 1000 if self.timeout_ms else ctx.timeout_s
        run, _ = run_in_scratch(ctx.repo, command, timeout_s=timeout, workdir=self.path)
        metrics = run_metrics(run)
        if run.timed_out:
            return VerifierResult(
                self.type_name, "error", f"timed out after {timeout:.0f}s", metrics
            )
        if stopped := stopped_result(self.type_name, "the build", run):
            return stopped
        if not self.reg_exp_pattern:
            ok = run.returncode == 0
            reason = f"exit code {run.returncode} (no pattern: passes iff 0)"
            return VerifierResult(self.type_name, "pass" if ok else "fail", reason, metrics)
        count = len(re.findall(self.reg_exp_pattern, run.output, re.MULTILINE))
        ok = count == self.num_expected if self.strict_count else count >= self.num_expected
        rule = "exactly" if self.strict_count else "at least"
        reason = f"/{self.reg_exp_pattern}/ matched {count}x in the output; expected {rule} {self.num_expected}"
        if run.returncode != 0:  # the output is partly the agent's: a test can print the pattern
            ok, reason = False, f"{reason}, but exit code {run.returncode}"
        return VerifierResult(
            self.type_name, "pass" if ok else "fail", reason, {**metrics, "count": count}
        )
