"""`run --dump-prompts DIR`: the opening prompts of the simulated user and the built-in agent,
written without running anything, never carry a secret planted in the scenario's texts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from agentlens.demo.tiny_repo import DEMO_SCENARIO
from tests.cli.conftest import Run
from tests.scenarios.conftest import INSTRUCTION
from tests.stepvalue.test_dump_prompts import PLANTED, SECRETS


def scenario_file(folder: Path, name: str, **extra: object) -> Path:
    path = folder / f"{name}.json"
    path.write_text(json.dumps({**DEMO_SCENARIO, "name": name, "max_steps": 1, **extra}))
    return path


def test_dumped_run_prompts_hold_no_planted_secret(
    run_cli: Callable[..., Run], calc_project: Path, tmp_path: Path
) -> None:
    free = scenario_file(tmp_path, "free", user_instruction=f"{INSTRUCTION}\n{PLANTED}")
    fixed = scenario_file(
        tmp_path, "fixed", user_instruction=INSTRUCTION,
        first_user_message=f"Fix sub(). Use these:\n{PLANTED}", fixed_fst_user_message=True,
    )  # fmt: skip
    out, dump = tmp_path / "out", tmp_path / "prompts"
    result = run_cli(
        "run", str(free), str(fixed), "--project", str(calc_project),
        "--agent", "bash:openai:gpt-4.1", "--simulator", "openai:gpt-4.1-mini",
        "--persona", "helpful", "--out", str(out), "--dump-prompts", str(dump),
    )  # fmt: skip
    assert result.code == 0, result.out + result.err
    files = sorted(p.relative_to(dump).as_posix() for p in dump.rglob("*.json"))
    assert files == ["fixed_helpful/agent-first.json", "free_helpful/simulator-first.json"]
    docs = {f: json.loads((dump / f).read_text()) for f in files}
    text = json.dumps(docs)
    for kind, secret in SECRETS.items():
        assert secret not in text, kind
        assert secret[:12] not in text, kind
    simulator = docs["free_helpful/simulator-first.json"]["messages"]
    assert (
        "[REDACTED" in simulator[0]["content"] and INSTRUCTION.split()[0] in simulator[0]["content"]
    )
    assert (
        str(out / "sessions" / "free" / "helpful" / "attempt-1" / "repo") in simulator[0]["content"]
    )
    agent = docs["fixed_helpful/agent-first.json"]["messages"]
    assert (
        agent[1]["content"].startswith("Fix sub(). Use these:")
        and "[REDACTED" in agent[1]["content"]
    )
    assert not out.exists()  # nothing ran


def test_a_scenario_that_gives_the_simulator_no_task_is_warned_about(
    run_cli: Callable[..., Run], calc_project: Path, tmp_path: Path
) -> None:
    """A verify-only scenario (the README's `fix_sub`: verifiers, no `user_instruction`) leaves
    the simulated user only the scenario's name as its task; `run` says so, naming the fix."""
    bare = scenario_file(tmp_path, "bare")
    told = scenario_file(tmp_path, "told", user_instruction=INSTRUCTION)
    dump = tmp_path / "prompts"
    result = run_cli(
        "run", str(bare), str(told), "--project", str(calc_project),
        "--agent", "bash:openai:gpt-4.1", "--simulator", "openai:gpt-4.1-mini",
        "--out", str(tmp_path / "out"), "--dump-prompts", str(dump),
    )  # fmt: skip
    assert result.code == 0, result.out + result.err
    warnings = [line for line in result.err.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: scenario bare: no user_instruction (key, or user_instruction.txt beside the "
        "file) nor first_user_message: the simulated user's whole task is the name 'bare'"
    ]
    (bare_prompt,) = json.loads((dump / "bare_default" / "simulator-first.json").read_text())[
        "messages"
    ][:1]
    assert "<task_description>\nbare\n</task_description>" in bare_prompt["content"]
