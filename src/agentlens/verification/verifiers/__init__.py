"""Formal verifiers, declared per scenario as `{"type": ..., fields}`. The registry maps the
spec's type names (and short snake-case aliases) to classes; `build_verifier` validates fields."""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import shlex
import time
from typing import Any

from agentlens.errors import ConfigError
from agentlens.verification.verifiers.base import Verifier, VerifierResult, VerifyContext

_M = "agentlens.verification.verifiers"
VERIFIERS: dict[str, str] = {
    "NoChangesVerifier": f"{_M}.repo_state:NoChangesVerifier",
    "YesChangesVerifier": f"{_M}.repo_state:YesChangesVerifier",
    "NewFileRegExpVerifier": f"{_M}.repo_state:NewFileRegExpVerifier",
    "ExactFileMatchVerifier": f"{_M}.repo_state:ExactFileMatchVerifier",
    "FileRegExpCountVerifier": f"{_M}.regex_count:FileRegExpCountVerifier",
    "JavaFileRegExpCountVerifier": f"{_M}.regex_count:JavaFileRegExpCountVerifier",
    "PythonFileRegExpCountVerifier": f"{_M}.regex_count:PythonFileRegExpCountVerifier",
    "ChatRegExpCountVerifier": f"{_M}.regex_count:ChatRegExpCountVerifier",
    "ChatOrToolRegExpCountVerifier": f"{_M}.regex_count:ChatOrToolRegExpCountVerifier",
    "RunTestsVerifier": f"{_M}.tests_run:RunTestsVerifier",
    "RunBuildSystemTaskVerifier": f"{_M}.build:RunBuildSystemTaskVerifier",
    "StaticAnalysisVerifier": f"{_M}.static_analysis:StaticAnalysisVerifier",
    "CommandVerifier": f"{_M}.static_analysis:CommandVerifier",
}
ALIASES: dict[str, str] = {
    "no_changes": "NoChangesVerifier",
    "yes_changes": "YesChangesVerifier",
    "new_file": "NewFileRegExpVerifier",
    "exact_file_match": "ExactFileMatchVerifier",
    "file_regex_count": "FileRegExpCountVerifier",
    "chat_regex_count": "ChatRegExpCountVerifier",
    "chat_or_tool_regex_count": "ChatOrToolRegExpCountVerifier",
    "tests": "RunTestsVerifier",
    "build": "RunBuildSystemTaskVerifier",
    "static_analysis": "StaticAnalysisVerifier",
    "command": "CommandVerifier",
    # The released Java/Python runners map onto the one test verifier with a runner name.
    "JavaRunTestsVerifier": "RunTestsVerifier",
    "PythonRunTestsVerifier": "RunTestsVerifier",
    "NoFileErrorsVerifier": "StaticAnalysisVerifier",
}
RENAMED_FIELDS = {"build_system_name": "runner"}


def build_verifier(spec: dict[str, Any]) -> Verifier:
    """Instantiate a verifier from its spec dict; unknown types or fields raise `ConfigError`."""
    spec = dict(spec)
    type_name = str(spec.pop("type", ""))
    spec.pop("name", None)
    canonical = ALIASES.get(type_name, type_name)
    target = VERIFIERS.get(canonical)
    if target is None:
        names = sorted([*VERIFIERS, *ALIASES])
        if not type_name:
            raise ConfigError(f"no 'type'; one of: {', '.join(names)}")
        close = difflib.get_close_matches(type_name, names, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(f"unknown verifier type '{type_name}'; {hint}known: {', '.join(names)}")
    module, _, attr = target.partition(":")
    cls = getattr(importlib.import_module(module), attr)
    spec = _adapt(type_name, cls, spec)
    try:
        verifier: Verifier = cls(**spec)
    except TypeError as exc:
        fields = [f.name for f in dataclasses.fields(cls)]
        unknown = [key for key in spec if key not in fields]
        if unknown:
            close = difflib.get_close_matches(unknown[0], fields, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                f"{type_name}: unknown field {unknown[0]!r}{hint}; fields: {', '.join(fields)}"
            ) from None
        raise ConfigError(f"verifier '{type_name}': {exc}; fields: {', '.join(fields)}") from exc
    return verifier


def run_verifier(spec: dict[str, Any], ctx: VerifyContext) -> VerifierResult:
    """Build and run one verifier; its time and name go on the result. Never raises for what
    the verifier meets."""
    verifier = build_verifier(spec)
    start = time.monotonic()
    try:
        result = verifier.verify(ctx)
    except Exception as exc:  # spec §3: an exception fails this verifier, not the whole run
        result = VerifierResult(verifier.type_name, "error", f"{type(exc).__name__}: {exc}")
    result.duration_s = time.monotonic() - start
    result.name = spec.get("name")
    return result


# The released JavaRunTestsVerifier's `command` holds build-tool arguments (default `["test"]`)
# run by Maven or Gradle; ours holds the whole command line, so the tool (offline, batch) goes
# first. Its `test_pattern` becomes `-Dtest=<pattern>` (Maven) or `--tests <pattern>` (Gradle).
BUILD_TOOLS = {"maven": ["mvn", "-o", "-B"], "gradle": ["gradle", "--offline", "--no-daemon"]}
TOOL_NAMES = {"mvn", "mvnw", "./mvnw", "gradle", "gradlew", "./gradlew"}


def _java_tests_command(spec: dict[str, Any]) -> list[str]:
    runner = str(spec.get("runner", "maven")).lower()
    tool = BUILD_TOOLS.get(runner)
    if tool is None:
        raise ConfigError(
            f"JavaRunTestsVerifier: build_system_name {runner!r}; use maven or gradle"
        )
    command = spec.get("command") or ["test"]
    args = shlex.split(command) if isinstance(command, str) else [str(x) for x in command]
    if args and args[0] not in TOOL_NAMES:
        args = [*tool, *args]
    pattern = spec.pop("test_pattern", None)
    if pattern:
        args += [f"-Dtest={pattern}"] if runner == "maven" else ["--tests", str(pattern)]
    return args


def _adapt(type_name: str, cls: type, spec: dict[str, Any]) -> dict[str, Any]:
    if cls.__name__ == "RunTestsVerifier":
        for old, new in RENAMED_FIELDS.items():
            if old in spec:
                spec[new] = spec.pop(old)
        if type_name == "JavaRunTestsVerifier":
            spec.setdefault("runner", "maven")
            spec["command"] = _java_tests_command(spec)
        if type_name == "PythonRunTestsVerifier":
            spec.setdefault("venv_path", ".venv")
        spec.pop("test_pattern", None)
        spec.pop("source_path", None)
        spec.pop("source_class_name", None)
    if type_name == "NoFileErrorsVerifier":
        langs = spec.pop("languages", None) or ["java"]
        spec.setdefault("tool", "javac" if "java" in [x.lower() for x in langs] else "ruff")
    return spec


__all__ = [
    "VERIFIERS", "Verifier", "VerifierResult", "VerifyContext", "build_verifier", "run_verifier",
]  # fmt: skip
