"""Fault-localisation candidates are repository files, never the agent's scratch or report files:
checked on every dev task against the raw trace JSON and the merged ground-truth PTA."""

from __future__ import annotations

import functools
import json
import re
import subprocess
from pathlib import Path

import pytest

from agentlens.cli import main
from agentlens.formats import read_paths
from agentlens.stepvalue.candidates import fault_localisation_space
from agentlens.stepvalue.candidates.tracked import norm_path, repo_files, tracked_from_repo
from agentlens.stepvalue.sources import build_problems
from agentlens.trajectory import Trajectory
from tests.conftest import BENCH, DATA, FORMATS

TASKS = sorted(p.name for p in (BENCH / "trajectories").iterdir()) if BENCH.is_dir() else []


def raw_states(task: str) -> list[dict]:
    paths = [*sorted((BENCH / "trajectories" / task).glob("*.json"))]
    paths.append(BENCH / "ground_truth" / f"{task}_merged_pta.json")
    return [s for p in paths for s in json.loads(p.read_bytes())["states"].values()]


def repo_relative(path: str) -> str:
    return re.sub(r"^(?:/?(?:testbed|workspace|agent/workspace/local)/)+", "", "/" + path).lstrip(
        "/"
    )


def command_of(state: dict) -> str:
    """The command a terminal state ran (its observation minus the response)."""
    return state["observation"].split("\nResponse:", 1)[0]


def agent_made(states: list[dict], candidate: str) -> list[str]:
    """Raw evidence that some run created `candidate`: a create step or a shell redirection."""
    rel = repo_relative(candidate)
    redirect = re.compile(r">\s*['\"]?\S*?(?:^|/)" + re.escape(rel) + r"\b")
    hits = [s["state_id"] for s in states if s["resulting_state"] == f"file_created:{rel}"]
    hits += [
        s["state_id"]
        for s in states
        if s["resulting_state"].startswith("terminal:") and redirect.search(command_of(s))
    ]
    return hits


@pytest.mark.parametrize("task", TASKS)
def test_candidates_of_every_dev_task_are_repository_files(task: str) -> None:
    runs = read_paths([BENCH / "trajectories" / task]).trajectories
    space = fault_localisation_space(runs)
    states = raw_states(task)
    existing = {
        s["file_path"]
        for s in states
        if s["resulting_state"].startswith(("file_read:", "file_modified:"))
    }
    for candidate in space.candidates:
        assert not agent_made(states, candidate.id), (task, candidate.id)
        assert repo_relative(candidate.id) in existing, (task, candidate.id)
    gold_patch = {
        s["file_path"] for s in states if s["resulting_state"].startswith("file_modified:")
    }
    assert repo_relative(space.gold_id) in gold_patch
    assert not any(c.id.endswith(".md") for c in space.candidates)


def test_fix_summary_is_no_longer_a_candidate_of_requests() -> None:
    runs = read_paths([BENCH / "trajectories" / "psf__requests-1724"]).trajectories
    ids = [c.id for c in fault_localisation_space(runs).candidates]
    assert "/FIX_SUMMARY.md" not in ids and "/test_unicode_method.py" not in ids
    assert "/requests/models.py" in ids and "/requests/sessions.py" in ids


def test_a_checkouts_tracked_files_bound_the_candidates(tmp_path: Path) -> None:
    repo = tmp_path / "requests"
    for rel in ("requests/models.py", "requests/sessions.py", "requests/utils.py"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("# tracked\n")
    (repo / "untracked_scratch.py").write_text("# never added\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "requests"], check=True)
    tracked = tracked_from_repo(repo)
    assert tracked.paths == {"requests/models.py", "requests/sessions.py", "requests/utils.py"}
    runs = read_paths([BENCH / "trajectories" / "psf__requests-1724"]).trajectories
    problems = build_problems(runs[:1], "fault-localisation", runs=runs, repo=str(repo))
    ids = problems[0].candidate_ids
    assert sorted(ids) == ["/requests/models.py", "/requests/sessions.py", "/requests/utils.py"]
    assert problems[0].gold_id == "/requests/models.py"
    assert "git ls-files" in problems[0].notes["tracked_files"]


def test_a_single_candidate_file_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run that reads and edits one file, given alone, leaves one candidate: refused up front
    (exit 2, one line) instead of failing after the evaluator calls."""
    run = BENCH / "trajectories" / "django__django-11066"
    run /= "django__django-11066-logs-gemini-2.5-pro-pass-24945658058_pta.json"
    out = tmp_path / "one.asv.jsonl"
    argv = ["stepvalue", "adapt", str(run), "--runs", str(run), "--candidates"]
    assert main([*argv, "fault-localisation", "-o", str(out)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "is the only candidate file (a forced choice needs 2)" in err
    assert not out.exists()


def test_listing_a_checkout_runs_no_program_its_config_names(tmp_path: Path) -> None:
    """`git ls-files` runs `core.fsmonitor` from the checkout's own config, which an agent may
    have written: it is switched off."""
    repo = tmp_path / "checkout"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "mod.py").write_text("# tracked\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "pkg"], check=True)
    marker = tmp_path / "fsmonitor-ran"
    subprocess.run(
        ["git", "-C", str(repo), "config", "core.fsmonitor", f"touch {marker}; echo"], check=True
    )
    assert tracked_from_repo(repo).paths == {"pkg/mod.py"}
    assert not marker.exists()


JAVA = DATA / "swe-agent-java"
JAVA_TASKS = sorted({p.stem for p in JAVA.glob("*/trajs/*.traj")})


def swe_agent_created(task: str) -> set[str]:
    """Every file a `create` action of a run of `task` made (not one refused because the file
    exists), made absolute with the action's own working directory (SWE-agent's
    `state.working_dir`), from the raw `.traj` JSON."""
    created = set()
    for path in JAVA.glob(f"*/trajs/{task}.traj"):
        for entry in json.loads(path.read_bytes())["trajectory"]:
            words = entry["action"].split()
            refused = "already exists" in entry["observation"][:300]  # an existing file
            if len(words) >= 2 and words[0] == "create" and not refused:
                where = json.loads(entry["state"])["working_dir"]
                created.add(words[1] if words[1].startswith("/") else f"{where}/{words[1]}")
    return created


@pytest.mark.parametrize("task", JAVA_TASKS)
def test_swe_agent_candidates_are_repository_files_spelt_once(task: str) -> None:
    """SWE-agent's `create new_test.py` names the file relative to the working directory, its
    later edits name it by the open file's absolute path: it is still a created file. And a
    shell command's `src/A.java` is the `/owner__repo/src/A.java` the editor opens."""
    runs = [r for r in java_runs() if r.task_id == task]
    space = fault_localisation_space(runs, k=10)
    ids = {c.id for c in space.candidates}
    assert not ids & swe_agent_created(task), "created by a run, yet a candidate"
    assert space.gold_id in ids and len(ids) >= 2
    under_root = {re.sub(r"^/[^/]+/", "", f) for f in ids if f.startswith("/")}
    twins = [f for f in ids if not f.startswith("/") and f in under_root]
    assert not twins, "one file under two spellings (SWE-agent's `/owner__repo/` root)"


@functools.cache
def java_runs() -> list[Trajectory]:
    return read_paths([JAVA], unevaluated="failed").trajectories


SHOWN = re.compile(r"^\[File: (/\S+) \(\d+ lines total\)\]")


def shown_files(task: str) -> dict[str, str]:
    """Each name a run of `task` gave an `open`/`create`/`edit`, mapped to the file SWE-agent's
    editor then showed (`[File: /abs/path (N lines total)]`), both repository-relative."""
    shown = {}
    for run in (r for r in java_runs() if r.task_id == task):
        for step in run.steps:
            found = SHOWN.match(step.observation or "")
            if found and len(step.files) == 1:
                shown[norm_path(step.files[0])] = norm_path(found[1])
    return shown


@pytest.mark.parametrize("task", JAVA_TASKS)
def test_a_file_named_from_a_subdirectory_is_one_candidate(task: str) -> None:
    """jackson-databind-3701's deepseek-chat-v2 run `cd`s to `src/main/java/.../node` and opens
    `NodeCursor.java` there; the editor names it by its full path: one file, one candidate, and
    it is the gold."""
    space = fault_localisation_space([r for r in java_runs() if r.task_id == task], k=10)
    shown = shown_files(task)
    files = [shown.get(norm_path(c.id), norm_path(c.id)) for c in space.candidates]
    assert len(set(files)) == len(files), f"one file under two names: {sorted(files)}"


def test_every_file_the_editor_shows_is_the_one_the_step_names() -> None:
    """Across all SWE-agent runs: a step's file, resolved against where it was named, is the
    file SWE-agent's editor showed for it (13 steps in 7 runs named another file before)."""
    runs = read_paths([JAVA, FORMATS / "swe-agent"], unevaluated="failed").trajectories
    checked = 0
    for step in (s for r in runs for s in r.steps):
        found = SHOWN.match(step.observation or "")
        if found and len(step.files) == 1:
            assert repo_files(step) == [norm_path(found[1])], step.command
            checked += 1
    assert checked >= 190
