from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from agentlens.formats import detect, read_path
from tests.conftest import FORMATS

ROOT = FORMATS / "inspect-ai"
FILES = sorted(ROOT.iterdir())
VERDICT = {"C": "passed", "I": "failed"}


def _samples(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".json":
        return json.loads(path.read_bytes()).get("samples") or []
    with zipfile.ZipFile(path) as archive:
        names = [n for n in archive.namelist() if n.startswith("samples/")]
        return [json.loads(archive.read(n)) for n in names]


def _by_task_id(path: Path) -> dict[str, Any]:
    return {t.task_id.rsplit("/", 1)[-1]: t for t in read_path(path)}


def test_all_files_are_found() -> None:
    assert len(FILES) == 7


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_one_trajectory_per_sample(path: Path) -> None:
    assert detect(path, path.read_bytes()[:65536]).name == "inspect-ai"
    samples = _samples(path)
    trajectories = _by_task_id(path)
    assert len(trajectories) == len(samples)
    for sample in samples:
        traj = trajectories[str(sample["id"])]
        calls = [
            c
            for m in sample["messages"]
            if m["role"] == "assistant"
            for c in m.get("tool_calls") or []
        ]
        orphans = [
            m for m in sample["messages"]
            if m["role"] == "tool" and m["tool_call_id"] not in {c["id"] for c in calls}
        ]  # fmt: skip
        assert len(traj.tool_steps) == len(calls) + len(orphans)
        errors = [m for m in sample["messages"] if m["role"] == "tool" and m.get("error")]
        assert sum(1 for s in traj.tool_steps if s.is_error) == len(errors)
        values = {s["value"] for s in (sample.get("scores") or {}).values()}
        expected = VERDICT.get(values.pop(), "unknown") if len(values) == 1 else "unknown"
        assert traj.outcome.status == expected


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_attachments_are_resolved(path: Path) -> None:
    trajectories = read_path(path)
    assert trajectories
    for traj in trajectories:
        texts = [traj.task or ""] + [s.text for s in traj.steps]
        texts += [s.observation or "" for s in traj.steps]
        assert not any(t.startswith("attachment://") for t in texts)


def test_browser_sample_observations_and_usage() -> None:
    path = ROOT / "2025-05-12T20-27-36-04-00_browser.json"
    (sample,) = _samples(path)
    (traj,) = read_path(path)
    results = {m["tool_call_id"]: m["content"] for m in sample["messages"] if m["role"] == "tool"}
    assert {s.call_id: s.observation for s in traj.tool_steps} == results
    models = [e for e in sample["events"] if e["event"] == "model"]
    usage = traj.usage_total()
    assert usage.prompt_tokens == sum(e["output"]["usage"]["input_tokens"] for e in models)
    assert usage.completion_tokens == sum(e["output"]["usage"]["output_tokens"] for e in models)
    assert traj.reported_usage is not None
    assert (
        traj.reported_usage.prompt_tokens
        == sample["model_usage"]["openai/gpt-4o-mini"]["input_tokens"]
    )
    assert traj.outcome.status == "passed" and traj.outcome.source == "inspect-score"
    header = json.loads(path.read_bytes())["eval"]
    assert traj.model == header["model"]
    assert traj.task_id == f"{header['task']}/{sample['id']}"


def test_scorer_model_calls_are_not_agent_usage() -> None:
    path = ROOT / "2025-05-12T20-28-26-04-00_security-guide.json"
    samples = _samples(path)
    assert samples
    for sample, traj in zip(samples, read_path(path), strict=True):
        answer = sample["output"]["usage"]
        assert traj.usage_total().prompt_tokens == answer["input_tokens"]
        assert traj.usage_total().completion_tokens == answer["output_tokens"]


def test_a_corrupt_eval_zip_is_a_trace_error(tmp_path: Path) -> None:
    from agentlens.errors import TraceError

    path = ROOT / "log_read_sample.eval"
    with zipfile.ZipFile(path) as archive:
        start = archive.getinfo("samples/1_epoch_1.json").header_offset + 100
    data = bytearray(path.read_bytes())
    data[start : start + 10] = b"\x00" * 10  # inside the sample's compressed bytes
    broken = tmp_path / "broken.eval"
    broken.write_bytes(bytes(data))
    with pytest.raises(TraceError, match="broken"):
        read_path(broken)


LIAR = """
import sys
from agentlens.errors import TraceError
from agentlens.formats import read_path

try:
    read_path(sys.argv[1])
except TraceError as exc:
    print(exc.reason)
# this process's own peak (`ru_maxrss` keeps the forking pytest's across exec)
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(int(peak.split()[1]) // 1024, "MiB")
"""


def _lying_eval(tmp_path: Path) -> Path:
    """A real `.eval` with one more sample that inflates to 400 MiB yet declares 100 bytes."""
    import struct

    liar = tmp_path / "liar.eval"
    liar.write_bytes((ROOT / "log_read_sample.eval").read_bytes())
    name = "samples/2_epoch_1.json"
    archive = zipfile.ZipFile(liar, "a", compression=zipfile.ZIP_DEFLATED)
    with archive, archive.open(name, "w") as member:
        for _ in range(25):
            member.write(b" " * (16 << 20))
    data = bytearray(liar.read_bytes())
    entry = data.rfind(b"PK\x01\x02")  # the last member's central directory entry
    assert data[entry + 46 : entry + 46 + len(name)] == name.encode()
    data[entry + 24 : entry + 28] = struct.pack("<I", 100)
    local = struct.unpack("<I", data[entry + 42 : entry + 46])[0]
    data[local + 22 : local + 26] = struct.pack("<I", 100)
    liar.write_bytes(bytes(data))
    return liar


def test_a_member_that_lies_about_its_size_is_inflated_no_further(tmp_path: Path) -> None:
    """`archive.read` inflated a member up to 2 GiB in one step before cutting it to its
    declared size: a 400 MiB bomb declaring 100 bytes took 400 MiB, whatever the input cap."""
    import os
    import subprocess
    import sys

    liar = _lying_eval(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    shown = subprocess.run([sys.executable, "-c", LIAR, str(liar)], capture_output=True,
                           text=True, env=env, timeout=120)  # fmt: skip
    reason, peak = shown.stdout.splitlines()
    assert reason.startswith("broken member samples/2_epoch_1.json: "), shown.stderr
    assert int(peak.split()[0]) < 200, peak
