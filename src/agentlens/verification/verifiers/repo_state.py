"""Repository-state verifiers: which files changed since the base revision, new files, exact
file contents. Paths are repository-relative posix paths; globs have the released verifiers'
Java semantics (`verifiers.globs`): `src/*` matches the files directly in `src/`, `src/**`
everything below it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from agentlens.list_text import counted, cut_name, first_few
from agentlens.verification.inside import read_text_inside
from agentlens.verification.verifiers.base import VerifierResult, VerifyContext
from agentlens.verification.verifiers.globs import glob_match


def _matches(path: str, globs: list[str]) -> bool:
    return any(glob_match(path, g) for g in globs)


def _listing(paths: list[str] | set[str], limit: int = 8) -> str:
    return first_few(sorted(paths), limit, cut_name)


@dataclass
class NoChangesVerifier:
    """Only allowed files changed, and nothing matching a forbidden glob. With forbidden globs but
    no allowed files or globs, every other change is allowed, as in the released verifier (a
    "do not touch pom.xml" check); with no rules at all, any change fails."""

    type_name: ClassVar[str] = "NoChangesVerifier"
    allowed_files: list[str] = field(default_factory=list)
    allowed_globs: list[str] = field(default_factory=list)
    forbidden_globs: list[str] = field(default_factory=list)

    def verify(self, ctx: VerifyContext) -> VerifierResult:
        changed = ctx.changed_files()
        forbidden = {p for p in changed if _matches(p, self.forbidden_globs)}
        allowed = set(self.allowed_files)
        forbidden_only = bool(self.forbidden_globs) and not (allowed or self.allowed_globs)
        unexpected = {
            p
            for p in changed - forbidden
            if not forbidden_only and p not in allowed and not _matches(p, self.allowed_globs)
        }
        metrics: dict[str, Any] = {
            "changed": len(changed),
            "forbidden_changed": sorted(forbidden),
            "unexpected_changed": sorted(unexpected),
        }
        if forbidden:
            reason = f"{counted(len(forbidden), 'forbidden file')} changed: {_listing(forbidden)}"
            return VerifierResult(self.type_name, "fail", reason, metrics)
        if unexpected:
            reason = f"{counted(len(unexpected), 'file')} changed outside the allowed set: {_listing(unexpected)}"
            return VerifierResult(self.type_name, "fail", reason, metrics)
        return VerifierResult(
            self.type_name, "pass", f"{counted(len(changed), 'changed file')}, all allowed", metrics
        )


@dataclass
class YesChangesVerifier:
    """Every target file changed, and each target glob matched at least one changed file."""

    type_name: ClassVar[str] = "YesChangesVerifier"
    target_files: list[str] = field(default_factory=list)
    target_globs: list[str] = field(default_factory=list)

    def verify(self, ctx: VerifyContext) -> VerifierResult:
        changed = ctx.changed_files()
        missing = [f for f in self.target_files if f not in changed]
        missing += [g for g in self.target_globs if not any(glob_match(p, g) for p in changed)]
        metrics = {"changed": len(changed), "unchanged_targets": missing}
        if missing:
            reason = f"{counted(len(missing), 'target')} not changed: {_listing(missing)}"
            return VerifierResult(self.type_name, "fail", reason, metrics)
        n = len(self.target_files) + len(self.target_globs)
        return VerifierResult(
            self.type_name,
            "pass",
            "the target changed" if n == 1 else f"all {n} targets changed",
            metrics,
        )


@dataclass
class NewFileRegExpVerifier:
    """Some file added since the base revision has a path matching `reg_exp_pattern`."""

    type_name: ClassVar[str] = "NewFileRegExpVerifier"
    reg_exp_pattern: str = ""

    def verify(self, ctx: VerifyContext) -> VerifierResult:
        pattern = re.compile(self.reg_exp_pattern)
        new = ctx.new_files()
        hits = sorted(p for p in new if pattern.search(p))
        metrics = {"new_files": len(new), "matching": hits}
        if hits:
            return VerifierResult(
                self.type_name,
                "pass",
                f"{'new file matches' if len(hits) == 1 else 'new files match'}: {_listing(hits)}",
                metrics,
            )
        reason = f"none of {counted(len(new), 'new file')} matches /{self.reg_exp_pattern}/"
        return VerifierResult(self.type_name, "fail", reason, metrics)


@dataclass
class ExactFileMatchVerifier:
    """Each `actual_file_path` (in the repository) equals its `expected_file_path`, looked up in
    the scenario's folder as the released verifier does, else in the repository (or absolute).
    As released: trailing whitespace of each line is ignored, `trim` strips the whole text's
    leading and trailing whitespace (not each line's indentation), `ignore_empty_lines` drops blank
    lines, and `check_other_files_unchanged` (default true) fails when any other file changed."""

    type_name: ClassVar[str] = "ExactFileMatchVerifier"
    file_matches: list[dict[str, str]] = field(default_factory=list)
    ignore_empty_lines: bool = False
    trim: bool = False
    check_other_files_unchanged: bool = True

    def verify(self, ctx: VerifyContext) -> VerifierResult:
        mismatched = []
        for pair in self.file_matches:
            actual = read_text_inside(ctx.repo, pair["actual_file_path"])
            expected = self._expected(ctx, pair["expected_file_path"])
            if expected is None or actual is None or self._norm(actual) != self._norm(expected):
                mismatched.append(pair["actual_file_path"])
        others: set[str] = set()
        if self.check_other_files_unchanged:
            targets = {p["actual_file_path"] for p in self.file_matches}
            others = ctx.changed_files() - targets
        metrics = {
            "files": len(self.file_matches),
            "mismatched": mismatched,
            "other_changed": sorted(others),
        }
        if mismatched:
            differ = "differs" if len(mismatched) == 1 else "differ"
            files = counted(len(self.file_matches), "file")
            reason = f"{len(mismatched)} of {files} {differ}: {_listing(mismatched)}"
            return VerifierResult(self.type_name, "fail", reason, metrics)
        if others:
            reason = f"files match, but other files changed: {_listing(others)}"
            return VerifierResult(self.type_name, "fail", reason, metrics)
        return VerifierResult(
            self.type_name, "pass", f"all {counted(len(self.file_matches), 'file')} match", metrics
        )

    @staticmethod
    def _expected(ctx: VerifyContext, path: str) -> str | None:
        """None: the repository's file links out of it (not to be read)."""
        if ctx.scenario_dir is not None and (ctx.scenario_dir / path).is_file():
            return (ctx.scenario_dir / path).read_text()
        if Path(path).is_absolute():  # the scenario's own choice
            return Path(path).read_text()
        if not (ctx.repo / path).exists():
            raise FileNotFoundError(f"no expected file {path} in the scenario or the repository")
        return read_text_inside(ctx.repo, path)

    def _norm(self, text: str) -> list[str]:
        if self.trim:
            text = text.strip()
        lines = [line.rstrip() for line in text.splitlines()]
        if self.ignore_empty_lines:
            lines = [line for line in lines if line]
        return lines
