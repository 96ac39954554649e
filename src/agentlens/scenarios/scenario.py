"""Scenarios in YAML or JSON: a name, the verifiers (`{"type": ..., fields}`), the base revision
the agent started from and the per-verifier timeout (spec §2.3; default 300 s). The released
`config.json` shape is accepted as is. A scenario passes formally only if every verifier passes;
errors and timeouts count as failures (spec §3).

The collection fields (`project_path`, `max_steps`, the timeouts, the simulator's private
instruction and the optional fixed first message) are read here too, so one file drives both a
scenario run (`agentlens.scenarios`) and its formal checks. The instruction and the first message
come from the keys `user_instruction` / `first_user_message`, else from `user_instruction.txt` /
`first_user_message.md` beside the file, as in the released scenario folders."""

from __future__ import annotations

import difflib
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentlens.bounded_read import read_named
from agentlens.errors import AgentLensError, ConfigError
from agentlens.jsonio import read_user_json
from agentlens.list_text import counted
from agentlens.providers.config_yaml import read_yaml
from agentlens.scenarios.mcp_servers import McpServer, parse_servers
from agentlens.trajectory import Trajectory
from agentlens.verification import isolation, memory_group
from agentlens.verification.verifiers import build_verifier, run_verifier
from agentlens.verification.verifiers.base import VerifierResult, VerifyContext


@dataclass
class Scenario:
    name: str
    verifiers: list[dict[str, Any]]
    base_ref: str = "HEAD"
    verifier_timeout_seconds: float = 300.0
    tags: list[str] = field(default_factory=list)
    directory: Path | None = None
    """The scenario file's folder: `ExactFileMatchVerifier` looks for expected files there."""
    project_path: str | None = None
    max_steps: int = 10
    scenario_timeout_seconds: float = 1200.0
    agent_turn_timeout_seconds: float = 900.0
    user_instruction: str | None = None
    first_user_message: str | None = None
    fixed_first_message: bool = False
    preprocessors: list[dict[str, Any]] = field(default_factory=list)
    opened_files: list[str] = field(default_factory=list)
    ide_errors: str = "auto"
    """What stands in for the IDE's errors (`agentlens.scenarios.ide_errors`): auto, ruff, none."""
    mcp_servers: list[McpServer] = field(default_factory=list)
    sandbox: dict[str, Any] = field(default_factory=dict)
    """The `sandbox:` block: `network` (bool) and `Limits` fields (`memory_mb`, `cpu_s`,
    `processes`, `file_size_mb`, `output_bytes`, `disk_free_mb`) for the commands this
    scenario runs."""

    def sandbox_policy(self) -> isolation.Isolation:
        """The isolation its commands run under: the current policy with its `sandbox:` block."""
        return isolation.current().with_overrides(self.sandbox)

    """Handed to the agent as a config file (`agentlens.scenarios.mcp`)."""


@dataclass
class ScenarioResult:
    scenario: str
    results: list[VerifierResult]
    duration_s: float
    memory_limit: str = ""
    """Why some of its commands had no memory group (`memory_group.per_process_note`), if any."""

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)

    @property
    def scored(self) -> bool:
        """False when a check was skipped (its tool is not installed) and none failed: the
        verdict is unknown, so the scenario is left out of the formal pass rate."""
        return not any(r.skipped for r in self.results) or any(
            not (r.passed or r.skipped) for r in self.results
        )

    @property
    def verdict(self) -> str:
        if self.scored:
            return "PASS" if self.passed else "FAIL"
        tools = [str(r.metrics.get("missing_tool", r.type)) for r in self.results if r.skipped]
        return f"not scored ({counted(len(tools), 'check')} skipped: install {', '.join(dict.fromkeys(tools))})"

    @property
    def fraction_passed(self) -> float | None:
        """Side metric (spec §7, decision §13.3): share of the individual verifiers run (not
        skipped) that passed; None (n/a) when none ran."""
        run = [r for r in self.results if not r.skipped]
        return sum(r.passed for r in run) / len(run) if run else None

    def to_dict(self) -> dict[str, Any]:
        fraction = self.fraction_passed
        return {
            "scenario": self.scenario,
            "formal_verification_result": int(self.passed) if self.scored else None,
            "verifiers_passed_fraction": None if fraction is None else round(fraction, 4),
            "duration_s": round(self.duration_s, 3),
            "verifier_results": [r.to_dict() for r in self.results],
            **({} if isolation.current().enabled else {"warning": isolation.NO_SANDBOX_WARNING}),
            **({"memory_limit": self.memory_limit} if self.memory_limit else {}),
        }

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> ScenarioResult:
        """The inverse of `to_dict` (e.g. a saved run's `metadata.formal`)."""
        results = [
            VerifierResult(
                r["type"], r["status"], r["reason"], dict(r.get("metrics") or {}),
                float(r.get("duration_s", 0.0)), r.get("name"),
            )
            for r in doc["verifier_results"]
        ]  # fmt: skip
        duration = float(doc.get("duration_s", 0.0))
        return cls(str(doc["scenario"]), results, duration, str(doc.get("memory_limit") or ""))


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario file (`.yaml`, `.yml` or `.json`); problems raise `ConfigError`."""
    path = Path(path)
    doc = read_user_json(path) if path.suffix == ".json" else read_yaml(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("verifiers"), list):
        raise ConfigError(f"{path}: a scenario needs a 'verifiers' list")
    refuse_unknown_keys(path, doc, KNOWN_KEYS)
    for number, spec in enumerate(doc["verifiers"], 1):
        try:
            build_verifier(spec)  # validate early, before anything runs
        except ConfigError as exc:
            raise ConfigError(f"{path}: verifier {number}: {exc}") from None
    try:
        collection = _collection_fields(doc, path.parent)
        for key in ("name", "base_ref", "repo_hash", "project_path", "ide_errors"):
            _string(doc, key)
        tags = doc.get("tags") or []
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise ValueError(f"tags must be a list of strings, not {tags!r:.60}")
        timeout = _number(doc, "verifier_timeout_seconds", 300)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    return Scenario(
        name=str(
            doc.get("name") or (path.parent.name if path.name == "config.json" else path.stem)
        ),
        verifiers=doc["verifiers"],
        base_ref=str(doc.get("base_ref") or doc.get("repo_hash") or "HEAD"),
        verifier_timeout_seconds=timeout,
        tags=tags,
        directory=path.parent,
        **collection,
    )


def _string(doc: dict[str, Any], key: str) -> None:
    if doc.get(key) is not None and not isinstance(doc[key], str):
        raise ValueError(f"{key} must be a string, not {doc[key]!r:.60}")


IDE_ERROR_MODES = ("auto", "ruff", "none")
"""`ide_errors`: what stands in for the IDE's errors (`agentlens.scenarios.ide_errors`)."""

KNOWN_KEYS = {
    # spec §2.3 (the released config.json)
    "verifiers", "project_path", "opened_files", "tags", "language", "fixed_fst_user_message",
    "preprocessors", "mcp_servers", "repo_hash", "branch", "max_steps",
    "scenario_timeout_seconds", "agent_turn_timeout_seconds", "verifier_timeout_seconds",
    # ours: the files' text inline, a name, the base revision
    "name", "base_ref", "user_instruction", "first_user_message", "ide_errors", "sandbox",
}  # fmt: skip


def refuse_unknown_keys(
    path: Path, doc: dict[str, Any], known: Iterable[str], what: str = "scenario"
) -> None:
    """A misspelt key (`max_step`) would silently fall back to a default: refuse it, with the
    closest known key as a hint."""
    known = list(known)
    for key in doc:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{path}: unknown {what} key {key!r}{hint}")


def _number(doc: dict[str, Any], key: str, default: float) -> float:
    """A positive, finite number of seconds or steps."""
    value = doc.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key} must be a number, not {value!r:.60}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{key} must be a positive number, not {value!r}")
    return float(value)


def _collection_fields(doc: dict[str, Any], folder: Path) -> dict[str, Any]:
    """What a scenario run needs beyond the verifiers (spec §2.3 defaults)."""
    fields: dict[str, Any] = {
        "max_steps": _steps(doc),
        "scenario_timeout_seconds": _number(doc, "scenario_timeout_seconds", 1200),
        "agent_turn_timeout_seconds": _number(doc, "agent_turn_timeout_seconds", 900),
        "fixed_first_message": bool(doc.get("fixed_fst_user_message", False)),
        "user_instruction": _text(doc, "user_instruction", folder / "user_instruction.txt"),
        "first_user_message": _text(doc, "first_user_message", folder / "first_user_message.md"),
        "preprocessors": [dict(p) for p in doc.get("preprocessors") or []],
        "opened_files": [str(f) for f in doc.get("opened_files") or []],
        "ide_errors": str(doc.get("ide_errors", "auto")),
        "mcp_servers": parse_servers(doc.get("mcp_servers")),
        "sandbox": _sandbox(doc.get("sandbox")),
    }
    if doc.get("project_path"):
        fields["project_path"] = str(doc["project_path"])
    if fields["ide_errors"] not in IDE_ERROR_MODES:
        modes = ", ".join(IDE_ERROR_MODES)
        raise ValueError(f"ide_errors must be one of {modes}, not {fields['ide_errors']!r}")
    if fields["fixed_first_message"] and not fields["first_user_message"]:
        raise ValueError(
            "fixed_fst_user_message is set but there is no first_user_message "
            "(nor first_user_message.md beside the file)"
        )
    return fields


def _sandbox(block: Any) -> dict[str, Any]:
    if block is None:
        return {}
    if not isinstance(block, dict):
        raise ValueError(f"sandbox must be a mapping, not {block!r:.60}")
    for key, value in block.items():
        expected = bool if key == "network" else int
        if isinstance(value, bool) is not (expected is bool) or not isinstance(value, expected):
            raise ValueError(f"sandbox.{key} must be {expected.__name__}, not {value!r:.60}")
        if expected is int and value <= 0:
            raise ValueError(f"sandbox.{key} must be positive, not {value!r}")
    try:
        isolation.Isolation().with_overrides(block)
    except AgentLensError as exc:
        raise ValueError(str(exc)) from None
    return dict(block)


def _steps(doc: dict[str, Any]) -> int:
    value = doc.get("max_steps", 10)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"max_steps must be a number, not {value!r:.60}")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or value < 1:
        raise ValueError(f"max_steps must be a whole number of at least 1, not {value!r:.60}")
    return value


def _text(doc: dict[str, Any], key: str, beside: Path) -> str | None:
    if doc.get(key) is not None:
        return str(doc[key])
    if not beside.is_file():
        return None
    try:
        return read_named(beside).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{beside}: not UTF-8 text (offset {exc.start})") from None
    except OSError as exc:
        raise ValueError(f"{beside}: cannot read: {exc.strerror or exc}") from None


def run_scenario(
    scenario: Scenario,
    repo: Path,
    *,
    trajectory: Trajectory | None = None,
    base_ref: str | None = None,
    on_result: Callable[[VerifierResult], None] | None = None,
) -> ScenarioResult:
    """Run every verifier against the repository's final state; never raises for a bad outcome."""
    ctx = VerifyContext(
        repo=repo,
        base_ref=base_ref or scenario.base_ref,
        trajectory=trajectory,
        timeout_s=scenario.verifier_timeout_seconds,
        scenario_dir=scenario.directory,
    )
    isolation.require()
    start = time.monotonic()
    results = []
    with isolation.policy(scenario.sandbox_policy()), memory_group.ungrouped_notes() as notes:
        for spec in scenario.verifiers:
            result = run_verifier(spec, ctx)
            results.append(result)
            if on_result:
                on_result(result)
    duration = time.monotonic() - start
    return ScenarioResult(scenario.name, results, duration, memory_group.joined_notes(notes))
