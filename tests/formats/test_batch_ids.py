"""Ids within a batch: unique, built from where the files lie, the same from any directory."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from agentlens.formats import read_path, read_paths
from agentlens.formats.jsonl import dump_jsonl
from tests.conftest import DATA, FORMATS

MINI = DATA / "mini-swe-agent-swebv" / "trajs"
RUNS = ("20251118_gemini-3-pro", "20251201_gemini-3-pro-rerun")


def _own_layout(root: Path) -> list[str]:
    """mini-swe-agent's own output, `<run>/<instance_id>/<instance_id>.traj.json`, twice."""
    tasks = []
    for run in RUNS:
        for trace in sorted(MINI.glob("*/*.traj.json")):
            target = root / run / trace.parent.name / trace.name
            target.parent.mkdir(parents=True)
            shutil.copy(trace, target)
            tasks.append(trace.parent.name)
    return tasks


def test_mini_swe_agent_own_layout_gets_run_and_instance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = _own_layout(tmp_path / "runs")
    result = read_paths([tmp_path / "runs"])
    ids = [t.id for t in result.trajectories]
    assert len(ids) == len(set(ids)) == len(tasks) == 12
    expected = {f"{run}/{task}" for run in RUNS for task in tasks}
    assert set(ids) == expected
    monkeypatch.chdir(tmp_path / "runs" / RUNS[0])
    alone = read_paths(["."])  # one run, from inside it: the same ids as in the batch
    assert {t.id for t in alone.trajectories} == {i for i in expected if i.startswith(RUNS[0])}


def test_the_same_file_named_twice_is_an_error_not_a_second_row(tmp_path: Path) -> None:
    trace = next(MINI.glob("*/*.traj.json"))
    result = read_paths([trace, trace.parent])
    assert len(result.trajectories) == 1
    (failure,) = result.failures
    assert failure.path == str(trace) and "named again" in failure.reason


def test_a_shared_placeholder_id_is_told_apart_by_file() -> None:
    golden = FORMATS / "atif-harbor-golden" / "tests" / "golden"
    result = read_paths([golden])
    shared = [p for p in golden.rglob("*.json") if read_path(p)[0].id == "NORMALIZED_SESSION_ID"]
    assert len(shared) > 2  # the fixtures share one placeholder id
    ids = [t.id for t in result.trajectories]
    assert len(ids) == len(set(ids))
    by_path = {t.source.path: t.id for t in result.trajectories}
    for path in shared:
        assert by_path[str(path)] == f"{path.name.removesuffix('.json')}/NORMALIZED_SESSION_ID"


def test_copies_of_one_session_in_two_folders_keep_their_folder(tmp_path: Path) -> None:
    session = FORMATS / "gemini-cli-jsonl" / "session.jsonl"
    for machine in ("laptop", "desktop"):
        (tmp_path / machine).mkdir()
        shutil.copy(session, tmp_path / machine / session.name)
    result = read_paths([tmp_path])
    header = json.loads(session.read_text().splitlines()[0])
    assert sorted(t.id for t in result.trajectories) == [
        f"desktop/{header['sessionId']}",
        f"laptop/{header['sessionId']}",
    ]


def test_the_same_file_through_a_link_is_read_once(tmp_path: Path) -> None:
    """A folder named by its real path and by a symlink to it (or a link to a file beside it)
    holds one set of runs: a second copy would be scored against itself."""
    link = tmp_path / "linked"
    link.symlink_to(MINI, target_is_directory=True)
    result = read_paths([MINI, link])
    ids = [t.id for t in result.trajectories]
    assert len(ids) == len(set(ids)) == len(list(MINI.glob("*/*.traj.json")))
    assert len(result.failures) == len(ids)
    assert all("named again" in f.reason for f in result.failures)


def test_a_folder_named_twice_through_a_linked_data_folder_is_not_called_a_link(
    tmp_path: Path,
) -> None:
    """With the data folder itself a symlink, every path differs from its real path: a file named
    twice by one spelling used to be refused as "read twice: <real path>", as if reached through
    a second link; only a second spelling is worth naming the real file."""
    data = tmp_path / "data"
    data.symlink_to(MINI, target_is_directory=True)
    files = sorted(data.glob("*/*.traj.json"))
    same = read_paths([data, data])
    assert len(same.trajectories) == len(files)
    assert [f.reason for f in same.failures] == ["named again: read once"] * len(files)
    other = read_paths([MINI, data])
    assert [f.reason for f in other.failures] == [
        f"named again, as {os.path.realpath(f)}: read once" for f in files
    ]


def _copies_with_sub_agents(count: int) -> list[Any]:
    """One run in two folders, each copy with `count` sub-agents, each started by a call."""
    from agentlens.trajectory import Source, Step, Trajectory

    copies = []
    for folder in ("laptop", "desktop"):
        steps = [Step(index=i, kind="tool", tool_name="Task", subtrajectory=f"X/{i}")
                 for i in range(count)]  # fmt: skip
        subs = [Trajectory(id=f"X/{i}", source=Source(format="otel", path=f"/{folder}/x.json"))
                for i in range(count)]  # fmt: skip
        source = Source(format="otel", path=f"/{folder}/x.json")
        copies.append(Trajectory(id="X", source=source, steps=steps, subtrajectories=subs))
    return copies


def test_renaming_a_run_with_many_sub_agents_takes_linear_time() -> None:
    """Found by review: each renamed sub-agent looked through all the run's steps for the call
    that started it, so one OTel file of 20k sub-agents, copied into two folders, took 50 s."""
    from agentlens.formats._batch_ids import unique_ids

    def seconds(count: int) -> float:
        runs = []
        for _ in range(3):
            copies = _copies_with_sub_agents(count)
            start = time.process_time()
            unique_ids(copies)
            runs.append(time.process_time() - start)
            (step, *_), (sub, *_) = copies[0].steps, copies[0].subtrajectories
            assert step.subtrajectory == sub.id == "laptop/X/0" and sub.parent_id == "laptop/X"
        return min(runs)

    ratio = seconds(8000) / seconds(2000)
    assert ratio < 8, f"4x the sub-agents took {ratio:.1f}x the time (linear: 4, quadratic: 16)"


def _converted(trace: Path, folder: Path) -> Path:
    """`trace` as `agentlens convert --to jsonl` writes it, in `folder`."""
    folder.mkdir()
    out = folder / "run.jsonl"
    dump_jsonl(read_paths([trace]).trajectories, out)
    return out


def test_a_converted_copy_read_twice_names_the_file_read(tmp_path: Path) -> None:
    """A converted run keeps its original's path as provenance: read from two converted copies,
    the repeat was named by the original, a file the user never passed."""
    trace = next(MINI.glob("*/*.traj.json"))
    first, second = (_converted(trace, tmp_path / name) for name in ("a", "b"))
    result = read_paths([first, second])
    assert [t.source.read_from for t in result.trajectories] == [str(first)]
    (failure,) = result.failures
    assert (failure.path, failure.format) == (str(second), "agentlens-jsonl")
    assert failure.reason.endswith(f"the run of {trace}, already read from {first}")


def test_an_original_and_its_converted_copy_name_each_other(tmp_path: Path) -> None:
    trace = next(MINI.glob("*/*.traj.json"))
    copy = _converted(trace, tmp_path / "out")
    (copy_dropped,) = read_paths([trace, copy]).failures
    assert copy_dropped.path == str(copy)
    assert copy_dropped.reason.endswith(f"converted from {trace}, which was read too")
    (original_dropped,) = read_paths([copy, trace]).failures
    assert original_dropped.path == str(trace)
    assert original_dropped.reason.endswith(f"already read from {copy}, converted from this file")
