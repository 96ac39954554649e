"""`--metric-set auto`, the default: the scenario tags that `agentlens run` keeps on each trajectory
(`metadata["scenario_tags"]`) choose its metric set, `testing` when tagged testing, else
`workflows`. Real trajectories are copied with tags set; the judge is scripted (exact answers) or
a real local HTTP server that echoes each prompt (so every answer is unscored)."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from pathlib import Path

import msgspec
import pytest

from agentlens.formats.jsonl import dump_jsonl
from agentlens.formats.load import read_path
from agentlens.jsonio import dump
from agentlens.providers import LLMClient
from agentlens.report import render_report
from agentlens.reviews import ALL_DIMENSIONS, DIMENSIONS, TESTING_DIMENSIONS
from agentlens.reviews.auto_metric_set import (
    keys_tagged_testing,
    pair_dimensions,
    trajectory_dimensions,
)
from agentlens.reviews.documents import load_reviews, reviewed_dimensions, reviews_document
from agentlens.reviews.judge.judge import aggregate, review_run
from agentlens.reviews.judge.summary import summarize
from agentlens.reviews.markdown import reviews_markdown
from agentlens.reviews.sxs.judge_pairs import run_sxs, select_tasks
from agentlens.reviews.sxs.pairing import Side, task_key
from agentlens.store import open_store
from agentlens.trajectory import Trajectory
from tests.conftest import BENCH
from tests.providers.fault_server import FaultServer
from tests.report._html import find_table, parse
from tests.reviews.test_sxs_run import Fixed
from tests.reviews.test_testing_metrics import (
    OTHER_RUN,
    WRITES_A_TEST,
    asked_dimensions,
    run_cli,
    scripted,
)

FLASK = BENCH / "trajectories" / "pallets__flask-5014"
FLASK_A = FLASK / "pallets__flask-5014-logs-gpt-4.1-pass-24923087457_pta.json"
FLASK_B = FLASK / "pallets__flask-5014-logs-gemini-2.5-pro-pass-24944252850_pta.json"


def said(err: str) -> str:
    """Stderr as one line (the console wraps it at its width)."""
    return " ".join(err.split())


def tagged(path: Path, *tags: str) -> Trajectory:
    """The real trajectory at `path`, as a scenario run tagged `tags` would carry it."""
    (traj,) = read_path(path)
    return msgspec.structs.replace(traj, metadata={**traj.metadata, "scenario_tags": list(tags)})


@pytest.fixture(scope="module")
def mixed():
    """One trajectory tagged testing, one tagged workflows, reviewed with auto's choice."""
    trajs = [tagged(WRITES_A_TEST, "testing", "all"), tagged(OTHER_RUN, "workflows", "all")]
    provider = scripted()
    client = LLMClient(provider, cache=None)
    reviews = asyncio.run(review_run(client, trajs, dimensions=trajectory_dimensions()))
    return trajs, provider, reviews


def test_auto_judges_each_trajectory_on_its_own_set(mixed) -> None:
    trajs, provider, reviews = mixed
    by_id = {r.trajectory_id: r for r in reviews}
    assert list(by_id[trajs[0].id].reviews) == list(ALL_DIMENSIONS)
    assert list(by_id[trajs[1].id].reviews) == list(DIMENSIONS)
    asked = [re.search(r"dimension '(\w+)'", p)[1] for p in provider.prompts]  # type: ignore[index]
    assert sorted(asked) == sorted(ALL_DIMENSIONS + DIMENSIONS)
    only = trajectory_dimensions(("TestUsefulness", "EndResult"))  # --dimension narrows each
    assert [only(t) for t in trajs] == [("TestUsefulness", "EndResult"), ("EndResult",)]


def test_mixed_sets_through_aggregation_and_report(mixed, tmp_path: Path) -> None:
    trajs, _, reviews = mixed
    summary = aggregate(reviews, reviewed_dimensions(reviews))
    assert list(summary) == list(ALL_DIMENSIONS)
    counts = {d: (s.mean, s.scored, s.unscored) for d, s in summary.items()}
    assert counts["EndResult"] == (1.0, 2, 0)  # both trajectories
    assert counts["RelianceOnMocking"] == (1.0, 1, 0)  # the tagged one only
    assert counts["TestUsefulness"] == (None, 0, 1)  # its refusal: unscored, never 0
    path = tmp_path / "reviews.json"
    dump(reviews_document("scripted", reviews), path)
    again = {r.trajectory_id: list(r.reviews) for r in load_reviews(path)}
    assert again == {trajs[0].id: list(ALL_DIMENSIONS), trajs[1].id: list(DIMENSIONS)}
    md = reviews_markdown(json.loads(path.read_text()))
    assert "| EndResult | 1.00 | 2 | 0% |" in md
    assert (
        "| RelianceOnMocking | 1.00 | 1 | 0% |" in md and "| TestUsefulness | – | 0 | 100% |" in md
    )
    sections = {part.split("\n", 1)[0]: part for part in md.split("\n## ")}
    untagged = next(text for head, text in sections.items() if head.endswith(trajs[1].id))
    testing = next(text for head, text in sections.items() if head.endswith(trajs[0].id))
    assert "**EndResult**" in untagged and "**EndResult**" in testing
    assert not any(f"**{d}**" in untagged for d in TESTING_DIMENSIONS)
    assert all(f"**{d}**" in testing for d in TESTING_DIMENSIONS)


def test_qi_and_summary_on_mixed_sets(
    mixed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trajs, _, reviews = mixed
    path = tmp_path / "reviews.json"
    dump(reviews_document("scripted", reviews), path)
    code, out, _ = run_cli(capsys, "qi", "--reviews", str(path), "--formal", "1", "--json")
    doc = json.loads(out)
    # 4: the QI is n/a, the scripted judge leaving three of its five dimensions unscored
    assert code == 4 and doc["quality_index"] is None
    assert doc["components"] == {
        "Formal": 1.0, "EndResult": 1.0, "InstructionCompliance": None, "Pitfalls": 0.5,
        "Pleasantness": None, "ToolCalls": None,
    }  # fmt: skip
    assert doc["reason"] == "n/a: no scored item for InstructionCompliance, Pleasantness, ToolCalls"
    means = {d: s.mean for d, s in aggregate(reviews, ALL_DIMENSIONS).items()}
    assert doc["beside_qi"] == {d: means[d] for d in TESTING_DIMENSIONS}
    assert doc["unscored_rate"]["TestUsefulness"] == 1.0
    judge = Fixed("<Summary>\nAspect group: scratch | Reviews: R1 | Deleted.\nR1.\n</Summary>")
    narrative = asyncio.run(summarize(LLMClient(judge, cache=None), "TestMaintainability", reviews))
    assert narrative.citations == {1: trajs[0].id}  # the untagged run has no such review
    (prompt,) = judge.prompts
    assert "<R1>" in prompt and "<R2>" not in prompt


def test_testing_keys_need_every_pair_of_the_task_tagged_on_both_sides() -> None:
    testing, plain = tagged(WRITES_A_TEST, "testing"), tagged(OTHER_RUN)
    a = Side({"t#0": testing, "t#1": testing, "u": testing, "v": testing}, {})
    b = Side({"t#0": testing, "t#1": plain, "u": testing, "v": plain}, {})
    assert keys_tagged_testing(a, b) == {"u"}  # t: one repeat untagged on B; v: untagged on B
    dims = pair_dimensions(a, b)
    assert (dims("u"), dims("t#0"), dims("v")) == (ALL_DIMENSIONS, DIMENSIONS, DIMENSIONS)
    narrowed = pair_dimensions(a, b, ("TestUsefulness",))
    assert (narrowed("u"), narrowed("t#0")) == (("TestUsefulness",), ())


def sides(b_requests_tags: tuple[str, ...]) -> tuple[Side, Side]:
    """requests-1724 tagged testing in A (and in B with `b_requests_tags`); flask-5014 tagged
    testing in A only."""
    a = [tagged(WRITES_A_TEST, "testing"), tagged(FLASK_A, "testing")]
    b = [tagged(OTHER_RUN, *b_requests_tags), tagged(FLASK_B, "workflows")]
    return Side({task_key(t): t for t in a}, {}), Side({task_key(t): t for t in b}, {})


def test_sxs_auto_judges_the_testing_set_only_on_tasks_tagged_on_both_sides() -> None:
    a, b = sides(("testing",))
    judge = Fixed("<Comparison>x</Comparison><PairwiseScore>2</PairwiseScore>")
    result = asyncio.run(
        run_sxs(LLMClient(judge, cache=None), a, b, dimensions=pair_dimensions(a, b), swap=False)
    )
    assert list(result) == list(ALL_DIMENSIONS)
    for dim in DIMENSIONS:
        assert [c.task for c in result[dim].cells] == ["pallets__flask-5014", "psf__requests-1724"]
    for dim in TESTING_DIMENSIONS:
        assert [c.task for c in result[dim].cells] == ["psf__requests-1724"]
        assert result[dim].to_dict()["tasks"] == 1
    asked = Counter(re.search(r"dimension '(\w+)'", p)[1] for p in judge.prompts)  # type: ignore[index]
    assert asked == Counter(
        {**dict.fromkeys(DIMENSIONS, 2), **dict.fromkeys(TESTING_DIMENSIONS, 1)}
    )
    # --dimension narrows; a task left with nothing to judge is not selected
    only = pair_dimensions(a, b, ("TestUsefulness",))
    assert select_tasks(a, b, only) == ["psf__requests-1724"]


def test_sxs_auto_leaves_out_a_testing_dimension_no_task_has() -> None:
    a, b = sides(())
    judge = Fixed("<Comparison>x</Comparison><PairwiseScore>2</PairwiseScore>")
    result = asyncio.run(
        run_sxs(LLMClient(judge, cache=None), a, b, dimensions=pair_dimensions(a, b), swap=False)
    )
    assert list(result) == list(DIMENSIONS)
    # a fixed list keeps today's behaviour: every dimension listed, even with no task at all
    empty = Side({}, {})
    fixed = asyncio.run(
        run_sxs(LLMClient(judge, cache=None), empty, empty, dimensions=["Pitfalls"])
    )
    assert list(fixed) == ["Pitfalls"] and fixed["Pitfalls"].cells == []


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, Path]:
    """Run A: requests tagged testing, flask tagged workflows; run B: requests tagged testing
    (B2: untagged) and flask untagged, written as `agentlens run` leaves them (canonical JSONL)."""
    files = {
        "a": [tagged(WRITES_A_TEST, "testing", "all"), tagged(FLASK_A, "workflows")],
        "b": [tagged(OTHER_RUN, "testing"), read_path(FLASK_B)[0]],
        "b2": [read_path(OTHER_RUN)[0], read_path(FLASK_B)[0]],
    }
    for name, trajs in files.items():
        dump_jsonl(trajs, tmp_path / f"{name}.jsonl")
    return {name: tmp_path / f"{name}.jsonl" for name in files}


def test_review_and_sxs_auto_over_http(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "store.db")
    with FaultServer() as server:
        judge = ["--judge", server.model(), "--no-cache"]
        reviews, notes = {}, {}
        for name in ("a", "b", "b2"):
            reviews[name] = tmp_path / f"reviews-{name}.json"
            code, _, notes[name] = run_cli(
                capsys, "review", str(runs[name]), *judge, "--out", str(reviews[name]),
                *(["--store", db] if name == "a" else []),
            )  # fmt: skip
            assert code == 4, notes[name]  # the echo server's answers are all unscored
        assert "metric set auto: 1 of 2 trajectories tagged testing" in said(notes["a"])
        assert "metric set auto" not in notes["b2"]  # untagged runs: workflows, without a word
        doc = json.loads(reviews["a"].read_text())
        assert [list(t["reviews"]) for t in doc["trajectories"]] == [
            list(DIMENSIONS),  # flask, tagged workflows (sorted by id: pallets__ first)
            list(ALL_DIMENSIONS),  # requests, tagged testing
        ]
        server.requests.clear()
        sxs_args = ["--reviews-a", str(reviews["a"]), *judge, "--no-swap", "--json"]
        code, out, _ = run_cli(
            capsys, "sxs", str(runs["a"]), str(runs["b"]), *sxs_args, "--reviews-b",
            str(reviews["b"]),
        )  # fmt: skip
        sxs_doc = json.loads(out)
        result = sxs_doc["dimensions"]
        assert code == 4 and list(result) == list(ALL_DIMENSIONS)  # echoes: nothing scored
        assert (sxs_doc["metric_set"], sxs_doc["profile"]) == ("auto", "default")
        assert {d: result[d]["tasks"] for d in ALL_DIMENSIONS} == {
            **dict.fromkeys(DIMENSIONS, 2),
            **dict.fromkeys(TESTING_DIMENSIONS, 1),
        }
        # asked in the schema, re-asked once: the echoes are no JSON answer
        assert asked_dimensions(server) == sorted((DIMENSIONS * 2 + TESTING_DIMENSIONS) * 2)
        code, out, err = run_cli(
            capsys, "sxs", str(runs["a"]), str(runs["b2"]), *sxs_args, "--reviews-b",
            str(reviews["b2"]),
        )  # fmt: skip
        assert code == 4 and list(json.loads(out)["dimensions"]) == list(DIMENSIONS)
        assert (
            f"metric set auto: {', '.join(TESTING_DIMENSIONS)} not judged: no selected task has "
            "all its trajectories tagged testing on both sides" in said(err)
        )
    with open_store(db) as store:
        (run,) = store.runs(kind="review")
        records = store.records(run.id)
        document = render_report(store, [run.id])
    assert run.settings == {"metric_set": "auto", "dimensions": list(ALL_DIMENSIONS)}
    assert sorted(len(r.metrics) for r in records) == [len(DIMENSIONS), len(ALL_DIMENSIONS)]
    tree = parse(document)
    rows = {row[0]: row[1:4] for row in find_table(tree, "dimension", "mean")[1:]}
    assert rows["EndResult"] == ["–", "0", "2"] and rows["TestUsefulness"] == ["–", "0", "1"]
    per_trajectory = find_table(tree, "trajectory", "task")
    assert per_trajectory[0][4:] == list(ALL_DIMENSIONS)
    by_task = {row[1]: row[4:] for row in per_trajectory[1:]}
    assert by_task["pallets__flask-5014"] == ["unscored"] * 5 + ["–"] * 4
    assert by_task["psf__requests-1724"] == ["unscored"] * 9


def test_auto_with_dimension_narrows_and_explicit_sets_are_stored_as_before(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "store.db")
    with FaultServer() as server:
        judge = ["--judge", server.model(), "--no-cache", "--json", "--store", db]
        code, out, err = run_cli(
            capsys, "review", str(runs["a"]), *judge, "--dimension", "TestUsefulness"
        )
        (only,) = json.loads(out)["trajectories"]  # flask has no TestUsefulness: not reviewed
        assert code == 4 and list(only["reviews"]) == ["TestUsefulness"]
        assert only["task_id"] == "psf__requests-1724"
        assert "1 trajectory not tagged testing with none of the --dimension asked" in (said(err))
        code, _, _ = run_cli(capsys, "review", str(runs["a"]), *judge, "--metric-set", "workflows")
        assert code == 4
    with open_store(db) as store:
        settings = [r.settings for r in store.runs(kind="review")]
    assert sorted(settings, key=str) == sorted(
        [
            {"metric_set": "auto", "dimensions": ["TestUsefulness"]},
            {"metric_set": "workflows", "dimensions": list(DIMENSIONS)},
        ],
        key=str,
    )


@pytest.mark.parametrize("command", ["review", "sxs"])
def test_auto_needs_a_tagged_trajectory_for_a_testing_dimension(
    command: str, runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    untagged = str(runs["b2"])
    args = {
        "review": ["review", untagged],
        # the reviews are never read: the usage error comes first
        "sxs": ["sxs", untagged, untagged, "--reviews-a", untagged, "--reviews-b", untagged],
    }[command]
    code, _, err = run_cli(capsys, *args, "--judge", "unused", "--dimension", "TestUsefulness")
    assert code == 2
    assert (
        "TestUsefulness: with --metric-set auto a testing dimension is judged only on "
        "trajectories tagged testing, and none of the given ones is (no 'testing' in their "
        "scenario's tags[]); add --metric-set testing to judge them all on it"
    ) in said(err)
