"""Integration check: every trajectory file in the shared data is read with the right format.

Every file under the four folders must match a row of EXPECTED (first match wins), so a new file
without a row fails here. A row with `None` is not a trajectory (a sidecar, a report, a merged
PTA, a list of predictions): walking a directory must skip it and reading it must not yield
trajectories. Terminal-Bench v1 run directories are recordings, not structured trajectories.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

import pytest

from agentlens.errors import UnknownFormatError
from agentlens.formats import detect, read_path, read_paths
from agentlens.formats.load import HEAD_BYTES, is_sidecar
from tests.conftest import DATA

ROOTS = ("formats", "swe-agent-java", "mini-swe-agent-swebv", "agentlens-bench-dev")
NOT_CONFORMANT = {"formats/atif-like-openagents/trajectory.json"}  # read best-effort, warned
EXPECTED: list[tuple[str, str | None]] = [
    # AgentLens-Bench dev
    ("agentlens-bench-dev/trajectories/*/*_pta.json", "agentlens-bench"),
    ("agentlens-bench-dev/ground_truth/*_merged_pta.json", None),
    ("agentlens-bench-dev/*", None),
    # SWE-agent
    ("swe-agent-java/*/trajs/*.traj", "swe-agent"),
    ("swe-agent-java/*", None),
    ("formats/swe-agent/*__all_preds.jsonl", None),
    ("formats/swe-agent/*.traj", "swe-agent"),
    ("formats/swe-agent/*.md", None),
    # mini-swe-agent
    ("mini-swe-agent-swebv/trajs/*/*.traj.json", "mini-swe-agent"),
    ("mini-swe-agent-swebv/*", None),
    ("formats/mini-swe-agent-fixtures/*.traj.json", "mini-swe-agent"),
    ("formats/mini-swe-agent-fixtures/results.json", None),
    # ATIF and Harbor
    ("formats/atif-harbor-golden/tests/golden/*/*.traces.json", "openai-messages"),
    ("formats/atif-harbor-golden/tests/golden/*/*.json", "atif"),
    ("formats/atif-harbor-golden/docs/rfcs/*/gemini-cli-trajectory.json", "gemini-cli"),
    ("formats/atif-harbor-golden/docs/rfcs/*/mini-swe-agent-trajectory.json", "mini-swe-agent"),
    ("formats/atif-harbor-golden/docs/rfcs/*/openhands_trajectory.json", "openhands-events"),
    ("formats/atif-harbor-golden/docs/rfcs/*.md", None),
    ("formats/atif-like-openagents/trajectory.json", "atif"),
    ("formats/atif-like-openagents/*", None),
    # OpenHands
    ("formats/openhands/legacy-replay-trajs/*.json", "openhands-events"),
    ("formats/openhands/eval-output/*.jsonl", "openhands-eval"),
    ("formats/openhands/benchmarks-v1-output/*.jsonl", "openhands-eval"),
    ("formats/openhands/eval-output/swe_bench_example_model_output.json", None),
    ("formats/openhands/sdk-fixtures/goal_events.jsonl", "openhands-v1"),
    ("formats/openhands/sdk-fixtures/*_base_state.json", None),
    # CLI agents
    ("formats/claude-code/*.jsonl", "claude-code"),
    ("formats/claude-code/*.md", None),
    ("formats/codex/*/stream/*.jsonl", "codex-exec"),
    ("formats/codex/*rollout-*.jsonl", "codex-rollout"),
    ("formats/codex/*", None),
    ("formats/gemini-cli/*.json", "gemini-cli"),
    ("formats/gemini-cli-jsonl/session.jsonl", "gemini-cli-jsonl"),
    ("formats/copilot-cli/events.jsonl", "copilot-cli"),
    ("formats/grok-cli/updates.jsonl", "grok-cli"),
    ("formats/*/vibecodingtracker.expected.json", None),
    ("formats/grok-cli/*.json", None),
    ("formats/inspect-ai/*", "inspect-ai"),
    ("formats/openai-messages/*.json", "openai-messages"),
    # recordings and provenance
    ("formats/terminal-bench-leaderboard/*", None),
    ("formats/*", None),
]


def _all_files() -> list[str]:
    found = []
    for root in ROOTS:
        for dirpath, _, names in os.walk(DATA / root):
            found += [str((Path(dirpath) / n).relative_to(DATA)) for n in names]
    return sorted(found)


FILES = _all_files()


def _expected(relative: str) -> str | None:
    for pattern, fmt in EXPECTED:
        if fnmatch.fnmatch(relative, pattern):
            return fmt
    raise AssertionError(f"{relative}: no row in EXPECTED; add one")


def test_every_file_is_covered_by_the_table() -> None:
    for relative in FILES:
        _expected(relative)


TRAJECTORY_FILES = [f for f in FILES if _expected(f) is not None]


def test_trajectory_counts_match_the_data_readme() -> None:
    def count(root: str) -> int:
        return sum(f.startswith(root + "/") for f in TRAJECTORY_FILES)

    assert (count("agentlens-bench-dev"), count("swe-agent-java")) == (399, 25)
    assert count("mini-swe-agent-swebv") == 6


@pytest.mark.parametrize("relative", TRAJECTORY_FILES)
def test_trajectory_file_is_read_with_its_format(relative: str) -> None:
    path = DATA / relative
    fmt = _expected(relative)
    head = path.read_bytes()[:HEAD_BYTES]
    assert detect(path, head).name == fmt
    trajectories = read_path(path)
    assert trajectories
    warned = any(
        "not conformant ATIF" in w for t in trajectories for w in t.metadata.get("warnings", [])
    )
    assert warned == (relative in NOT_CONFORMANT)
    assert {t.source.format for t in trajectories} == {fmt}


def test_non_trajectories_are_skipped_or_rejected() -> None:
    rejected = 0
    for relative in FILES:
        if _expected(relative) is not None:
            continue
        path = DATA / relative
        if is_sidecar(path):
            continue
        with pytest.raises(UnknownFormatError):
            read_path(path)
        rejected += 1
    assert rejected > 0


def test_every_file_is_read_or_named_with_a_reason() -> None:
    """A walk of the shared data accounts for every file: a trajectory's source, or a line in
    failures, unread, skipped or sidecars (each `path: reason`)."""
    result = read_paths([DATA / root for root in ROOTS])
    named = {t.source.path for t in result.trajectories}
    named |= {f.path for f in result.failures}
    for lines in (result.unread, result.skipped, result.sidecars):
        named |= {line.split(": ", 1)[0] for line in lines}
    named_relative = {str(Path(p).relative_to(DATA)) for p in named}
    assert set(FILES) - named_relative == set()
    assert result.failures == []  # every folder reads without a failed file (issue 21)
    assert all(": " in line for line in (*result.skipped, *result.sidecars, *result.unread))
