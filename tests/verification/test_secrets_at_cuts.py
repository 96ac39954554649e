"""A verifier keeps the end of its command's output (`output_tail`, a reason's quote) in a result
that is stored, reported and read by the judge; the sandbox keeps the last `output_bytes` of it.
Each is masked before it is cut: real command output with a key planted where the cut falls keeps
no part of the key."""

from __future__ import annotations

from pathlib import Path

from agentlens.demo.tiny_repo import create_repo
from agentlens.verification import sandbox
from agentlens.verification.isolation import Limits
from agentlens.verification.verifiers import run_verifier
from agentlens.verification.verifiers.base import OUTPUT_TAIL_CHARS, VerifyContext
from tests.secret_at_cut import kept_part_of_key, key_at_tail_cut, key_at_tail_cut_bytes

PYTEST_END = "\n========================= 1 failed, 2 passed in 0.31s =========================\n"


def test_a_secret_the_kept_end_of_a_commands_output_starts_in_is_masked(tmp_path: Path) -> None:
    keep = Limits().output_bytes
    (tmp_path / "build.log").write_bytes(key_at_tail_cut_bytes(keep))
    result = sandbox.run_command("cat build.log", tmp_path, timeout_s=30)
    assert result.output.startswith(f"[... first 2023 of {keep + 2023} bytes of output not kept]")
    assert "was [REDACTED:openai-key]\n" in result.output[:200]
    assert kept_part_of_key(result.output) == []


def test_a_secret_the_output_tail_of_a_result_starts_in_is_masked(tmp_path: Path) -> None:
    repo = create_repo(tmp_path / "calc")
    (repo / "build.log").write_text(key_at_tail_cut(OUTPUT_TAIL_CHARS))
    (repo / "tests.log").write_text(
        key_at_tail_cut(OUTPUT_TAIL_CHARS - len(PYTEST_END)) + PYTEST_END
    )
    build = {"type": "RunBuildSystemTaskVerifier", "command": "cat build.log"}
    tests = {"type": "RunTestsVerifier", "command": "cat tests.log; exit 1"}
    for spec in (build, tests):
        result = run_verifier(spec, VerifyContext(repo=repo))
        assert "was [REDACTED:openai-key]" in result.metrics["output_tail"], spec
        assert kept_part_of_key(result.metrics["output_tail"]) == [], spec
