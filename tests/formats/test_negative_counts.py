"""A negative token count or cost is no usage at all: it would lower every total it joins
("tokens -5 in"). Whatever the reader, the file is one line naming it and where the number is;
the batch goes on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentlens.errors import TraceError
from agentlens.formats import read_path

SRC = str(Path(__file__).resolve().parents[2] / "src")
COPILOT = "formats/copilot-cli/events.jsonl"
GEMINI = "formats/gemini-cli-jsonl/session.jsonl"
MINI = "formats/mini-swe-agent-fixtures/local.traj.json"


def _edited(source: Path, target: Path, edit: object) -> Path:
    lines = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    for line in lines:
        edit(line)  # type: ignore[operator]
    target.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return target


def _copilot_input(line: dict) -> None:
    if line["type"] == "session.shutdown":
        line["data"]["modelMetrics"]["claude-sonnet-4.6"]["usage"]["inputTokens"] = -5


def _gemini_output(line: dict) -> None:
    if line.get("type") == "gemini":
        line["tokens"]["input"] = -1


@pytest.mark.parametrize(
    ("sample", "edit", "where"),
    [(COPILOT, _copilot_input, "reported_usage.prompt_tokens: -5"),
     (GEMINI, _gemini_output, "steps[2].usage.prompt_tokens: -1")],
)  # fmt: skip
def test_a_negative_token_count_is_the_files_error(
    data_dir: Path, tmp_path: Path, sample: str, edit: object, where: str
) -> None:
    path = _edited(data_dir / sample, tmp_path / Path(sample).name, edit)
    with pytest.raises(TraceError) as caught:
        read_path(path)
    assert caught.value.path == str(path)
    assert f"negative number at {where}" in caught.value.reason


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_real_files_read_as_before(data_dir: Path) -> None:
    """The unedited files' counts, from their own lines: Copilot's session total, and Gemini's
    last record of each message (thoughts are completion tokens)."""
    (shutdown,) = [r for r in _lines(data_dir / COPILOT) if r["type"] == "session.shutdown"]
    (metrics,) = shutdown["data"]["modelMetrics"].values()
    copilot = read_path(data_dir / COPILOT)[0].reported_usage
    assert copilot is not None
    counted = (copilot.prompt_tokens, copilot.completion_tokens, copilot.cached_tokens)
    usage = metrics["usage"]
    assert counted == (usage["inputTokens"], usage["outputTokens"], usage["cacheReadTokens"])
    last = {r["id"]: r["tokens"] for r in _lines(data_dir / GEMINI) if r.get("type") == "gemini"}
    gemini = read_path(data_dir / GEMINI)[0].usage_known()
    assert gemini is not None
    assert (gemini.prompt_tokens, gemini.completion_tokens, gemini.cached_tokens) == (
        sum(t["input"] for t in last.values()),
        sum(t["output"] + t["thoughts"] for t in last.values()),
        sum(t["cached"] for t in last.values()),
    )


def test_the_batch_goes_on_past_a_negative_count(data_dir: Path, tmp_path: Path) -> None:
    bad = _edited(data_dir / COPILOT, tmp_path / "events.jsonl", _copilot_input)
    env = {**os.environ, "PYTHONPATH": SRC}
    shown = subprocess.run(
        [sys.executable, "-m", "agentlens", "inspect", "--json", str(data_dir / MINI), str(bad)],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert shown.returncode == 1 and len(shown.stdout.splitlines()) == 1
    failed = [line for line in shown.stderr.splitlines() if line.startswith("failed:")]
    assert failed == [f"failed: {bad} [copilot-cli]: negative number at "
                      "reported_usage.prompt_tokens: -5"]  # fmt: skip
    assert "Traceback" not in shown.stderr
