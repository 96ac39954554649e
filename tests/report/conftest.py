"""A small results store built at test time from real AgentLens-Bench dev traces: an import run,
two score runs of one task under both profiles (they share trajectories), one of another task,
and runs holding hostile text (ids, tasks, models, judge reviews)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import msgspec
import orjson
import pytest

import agentlens
from agentlens.cli import main
from agentlens.process.pta_io import read_reference
from agentlens.process.records import PROCESS_SCORER, score_records
from agentlens.process.score import score_trajectory
from agentlens.reviews import DIMENSIONS
from agentlens.reviews.documents import REVIEWS_KIND, load_reviews
from agentlens.reviews.records import review_records
from agentlens.store import Run, open_store
from agentlens.store.records import import_records
from tests.cli.conftest import run_cli  # noqa: F401  (the shared entry-point fixture)
from tests.conftest import BENCH

TASKS = ("psf__requests-1724", "pallets__flask-5014")
HOSTILE_ID = "<script>alert(1)</script>"
HOSTILE_TASK = '"><img src=x onerror=alert(1)>'


@dataclass
class Store:
    url: str
    refs: dict[str, Path]
    runs: dict[str, str]
    """label → run id."""


def _cli(*args: str) -> None:
    assert main(list(args)) == 0, args


@pytest.fixture(scope="session")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("report-store")
    url = str(root / "store.db")
    refs = {}
    for task in TASKS:
        folder = str(BENCH / "trajectories" / task)
        refs[task] = root / f"ref-{task}.json"
        _cli("store", "import", folder, "--store", url, "--run-label", f"import-{task}")
        _cli("reference", "build", folder, "-o", str(refs[task]))
        _cli("score", folder, "--reference", str(refs[task]), "--store", url, "--run-label", task)
    first = str(BENCH / "trajectories" / TASKS[0])
    _cli("score", first, "--reference", str(refs[TASKS[0]]), "--profile", "sdk-compat",
         "--store", url, "--run-label", "sdk")  # fmt: skip
    _save_hostile_runs(url, refs[TASKS[0]], root)
    with open_store(url) as db:
        runs = {run.label or run.id: run.id for run in db.runs()}
    return Store(url, refs, runs)


def hostile_trajectories() -> list[agentlens.Trajectory]:
    """Two real runs renamed with markup in their id, task and model."""
    folder = BENCH / "trajectories" / TASKS[0]
    real = sorted(folder.glob("*pass*.json"))[:1] + sorted(folder.glob("*fail*.json"))[:1]
    out = []
    for i, path in enumerate(real):
        (traj,) = agentlens.read_path(path)
        out.append(msgspec.structs.replace(
            traj, id=f"{HOSTILE_ID}-{i}", task_id=HOSTILE_TASK, model=f"{HOSTILE_ID}{HOSTILE_TASK}",
        ))  # fmt: skip
    return out


def _save_hostile_runs(url: str, ref_path: Path, root: Path) -> None:
    trajs = hostile_trajectories()
    reference = read_reference(str(ref_path))
    results = [score_trajectory(t, reference, "paper") for t in trajs]
    reviews = _hostile_reviews(trajs, root / "reviews.json")
    with open_store(url) as db:
        db.save(Run(kind="import", scorer="import/1", label="hostile-import",
                    settings={"paths": [HOSTILE_TASK]}), trajs, import_records(trajs))  # fmt: skip
        score_run = Run(kind="score", scorer=PROCESS_SCORER.format(profile="paper"),
                        label="hostile", settings={"reference": HOSTILE_ID})  # fmt: skip
        db.save(score_run, trajs, score_records(zip(trajs, results, strict=True)))
        review_run = Run(kind="review", scorer="judge/test", label=f"hostile-review{HOSTILE_ID}",
                         summary={"judge": HOSTILE_TASK})  # fmt: skip
        db.save(review_run, trajs, review_records(zip(trajs, reviews, strict=True)))


def _hostile_reviews(trajs: list[agentlens.Trajectory], path: Path) -> list[object]:
    """Reviews as `agentlens review --out` writes them: one scored dimension with a review full of
    markup, one unscored, the rest scored 0.5 / 1."""

    def dimension(name: str, i: int) -> dict[str, object]:
        if name == "Pitfalls":
            return {
                "dimension": name,
                "score": None,
                "unscored_reason": f"no <Score> tag {HOSTILE_ID}",
            }
        review = {
            "score": 1.0,
            "unscored_reason": None,
            "review": f"fine {HOSTILE_TASK}",
            "evidence": [],
            "pitfalls": [],
            "burden_total": None,
            "stated_burden_total": None,
        }
        return {"dimension": name, "score": 0.5 * (1 + i % 2), "review": review}  # fmt: skip

    doc = {
        "kind": REVIEWS_KIND,
        "trajectories": [
            {"trajectory_id": t.id, "task_id": t.task_id,
             "reviews": {d: dimension(d, i) for i, d in enumerate(DIMENSIONS)}}
            for t in trajs
        ],
    }  # fmt: skip
    path.write_bytes(orjson.dumps(doc))
    return list(load_reviews(path))
