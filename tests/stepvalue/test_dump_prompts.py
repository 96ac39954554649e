"""`stepvalue --dump-prompts DIR`: the exact prompts, written without a model, never carry a
secret planted in a real trajectory (the read path's redaction runs before the projection)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.cli.conftest import run_cli  # noqa: F401  (the fixture)
from tests.conftest import BENCH

TASK = BENCH / "trajectories" / "psf__requests-1724"
RUN = TASK / "psf__requests-1724-logs-gemini-2.5-pro-pass-24943628310_pta.json"
SECRETS = {
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "github": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "openai": "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe",
    "password": "hunter2-Corr3ct-Horse",
    "private-key": "MIIEowIBAAKCAQEA7bq98PlantedKeyBodyLine0123456789abcdef",
}
PLANTED = (
    f"export AWS_ACCESS_KEY_ID={SECRETS['aws']}\n"
    f"git remote set-url origin https://{SECRETS['github']}@github.com/psf/requests\n"
    f"OPENAI_API_KEY={SECRETS['openai']}\n"
    f"db password={SECRETS['password']}\n"
    f"-----BEGIN RSA PRIVATE KEY-----\n{SECRETS['private-key']}\n-----END RSA PRIVATE KEY-----\n"
)


def planted_trace(folder: Path) -> Path:
    """The real run with the secrets at the start of its first three tool responses and in the
    agent's first note."""
    doc = json.loads(RUN.read_bytes())
    states = sorted(doc["states"].values(), key=lambda s: int(s["step"]))
    for state in [s for s in states if s["observation"] != "<initial>"][:3]:
        entry = state["log_entry"]
        entry["response_preview"] = PLANTED + entry["response_preview"]
        entry["args"]["thought"] = PLANTED + entry["args"].get("thought", "")
    path = folder / RUN.name
    path.write_text(json.dumps(doc))
    return path


def test_dumped_stepvalue_prompts_hold_no_planted_secret(
    run_cli: Callable[..., Any],  # noqa: F811
    tmp_path: Path,
) -> None:
    trace, out = planted_trace(tmp_path), tmp_path / "prompts"
    result = run_cli(
        "stepvalue", str(trace), "--runs", str(TASK), "--candidates", "fault-localisation",
        "--evaluator", "llamacpp:/no/such/model.gguf", "--max-steps", "3",
        "--channels", "direct,generated-rationale-128", "-b", "2", "--dump-prompts", str(out),
    )  # fmt: skip
    assert result.code == 0, result.out + result.err
    files = sorted(out.rglob("*.json"))
    names = {f.name.split(".", 2)[2] for f in files}
    assert names == {
        "direct.score-perm0.json", "direct.score-perm1.json", "generated-rationale-128.rationale.json",
    }  # fmt: skip
    assert f"wrote {len(files)} prompts under {out}" in " ".join(result.out.split())
    text = "\n".join(f.read_text() for f in files)
    for kind, secret in SECRETS.items():
        assert secret not in text, kind
        assert secret[:12] not in text, kind  # not even half of one
    assert "[REDACTED" in text  # the planted lines did reach the prompts, masked
    doc = json.loads(files[0].read_text())
    assert doc["messages"][0]["role"] == "system" and doc["max_tokens"] in (1, 128)
    assert not (tmp_path / "stepvalue-out").exists()  # no run, no report


def test_asv_question_and_candidate_texts_are_masked(
    run_cli: Callable[..., Any],  # noqa: F811
    tmp_path: Path,
) -> None:
    """An asv.v1 file's task question and candidate texts are user text too: the secrets planted
    in them never reach a prompt."""
    frozen, out = tmp_path / "run.asv.jsonl", tmp_path / "prompts"
    result = run_cli(
        "stepvalue", "adapt", str(RUN), "--runs", str(TASK), "--candidates",
        "fault-localisation", "--max-steps", "2", "-o", str(frozen),
    )  # fmt: skip
    assert result.code == 0, result.out + result.err
    record = json.loads(frozen.read_text())
    record["task"]["question"] = PLANTED + record["task"]["question"]
    for candidate in record["task"]["candidate_space"]["candidates"]:
        candidate["text"] += f" (token {SECRETS['github']}, key {SECRETS['openai']})"
    frozen.write_text(json.dumps(record) + "\n")
    for layout in ("mapping-last", "options"):
        result = run_cli(
            "stepvalue", "--candidates", str(frozen), "--evaluator", "llamacpp:/no/such/model.gguf",
            "--direct-layout", layout, "-b", "1", "--dump-prompts", str(out / layout),
        )  # fmt: skip
        assert result.code == 0, result.out + result.err
    text = "\n".join(f.read_text() for f in sorted(out.rglob("*.json")))
    for kind, secret in SECRETS.items():
        assert secret[:12] not in text, kind
    assert "(token [REDACTED" in text  # the candidate texts did reach the prompts, masked


def test_the_help_names_the_files_the_dump_writes(
    run_cli: Callable[..., Any],  # noqa: F811
    tmp_path: Path,
) -> None:
    """`--help` said `<state>.<channel>.<pass>.json`; the files are
    `<slice>.state-NNN.<channel>.<rationale|score-permK>.json`."""
    out = tmp_path / "prompts"
    result = run_cli(
        "stepvalue", str(RUN), "--runs", str(TASK), "--candidates", "fault-localisation",
        "--evaluator", "llamacpp:/no/such/model.gguf", "--max-steps", "1",
        "--channels", "direct,generated-rationale-128", "-b", "1", "--dump-prompts", str(out),
    )  # fmt: skip
    assert result.code == 0, result.out + result.err
    names = {f.name for f in out.rglob("*.json")}
    assert "full.state-000.direct.score-perm0.json" in names
    assert "full.state-000.generated-rationale-128.rationale.json" in names
    shown = "".join(run_cli("stepvalue", "evaluate", "--help").out.split())  # wrapped anywhere
    assert "DIR/<trajectory>/<slice>.state-NNN.<channel>.<rationale|score-permK>.json" in shown


def test_prompts_are_dumped_without_an_evaluator(
    run_cli: Callable[..., Any],  # noqa: F811
    tmp_path: Path,
) -> None:
    """The docs say `--dump-prompts` works without a model, but `--evaluator` was required: the
    prompts do not depend on it, so the dump without one is the dump with one."""
    args = (
        "stepvalue", str(RUN), "--runs", str(TASK), "--candidates", "fault-localisation",
        "--max-steps", "2", "--channels", "direct,generated-rationale-128", "-b", "2",
    )  # fmt: skip
    bare = run_cli(*args, "--dump-prompts", str(tmp_path / "bare"))
    assert bare.code == 0, bare.out + bare.err
    named = run_cli(
        *args,
        "--evaluator",
        "llamacpp:/no/such/model.gguf",
        "--dump-prompts",
        str(tmp_path / "named"),
    )
    assert named.code == 0, named.out + named.err

    def dumped(folder: Path) -> dict[str, str]:
        return {str(f.relative_to(folder)): f.read_text() for f in sorted(folder.rglob("*.json"))}

    assert dumped(tmp_path / "bare") and dumped(tmp_path / "bare") == dumped(tmp_path / "named")


def test_a_run_without_an_evaluator_is_a_usage_error(
    run_cli: Callable[..., Any],  # noqa: F811
    tmp_path: Path,
) -> None:
    result = run_cli(
        "stepvalue", str(RUN), "--runs", str(TASK), "--candidates", "fault-localisation",
        "--out", str(tmp_path / "sv"),
    )  # fmt: skip
    assert result.code == 2
    assert "Missing option '--evaluator'" in result.err and "--dump-prompts" in result.err
    assert not (tmp_path / "sv").exists()
