"""The review commands through the real `agentlens` entry point (no LLM): verify, qi, telemetry,
compare, and the reviews JSON round trip that qi/sxs/compare read."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agentlens.cli import main
from agentlens.demo.tiny_repo import DEMO_SCENARIO, apply_fix, create_repo
from agentlens.formats.stream import read_paths
from agentlens.jsonio import dump
from agentlens.providers import LLMClient
from agentlens.reviews import DIMENSIONS
from agentlens.reviews.documents import load_reviews, reviews_document
from agentlens.reviews.judge.judge import review_run
from agentlens.reviews.markdown import reviews_markdown
from tests.conftest import BENCH, FORMATS
from tests.reviews.test_judge import ANSWER, ScriptedProvider

TASK = BENCH / "trajectories" / "psf__requests-1724"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(args))
    return code, capsys.readouterr().out


def test_verify_then_qi(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = create_repo(tmp_path / "calc")
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(DEMO_SCENARIO))
    code, _ = run(
        capsys, "verify", str(scenario), "--repo", str(repo), "--out", str(tmp_path / "before.json")
    )
    assert code == 1  # the bug is still there
    apply_fix(repo)
    code, out = run(
        capsys,
        "verify",
        str(scenario),
        "--repo",
        str(repo),
        "--json",
        "--out",
        str(tmp_path / "after.json"),
    )
    assert code == 0
    doc = json.loads(out)
    assert (
        doc["kind"] == "agentlens.verify/1" and doc["results"][0]["formal_verification_result"] == 1
    )
    code, out = run(
        capsys,
        "qi",
        "--verify",
        str(tmp_path / "before.json"),
        "--verify",
        str(tmp_path / "after.json"),
        "--component",
        "EndResult=1",
        "--component",
        "Pitfalls=0.5",
        "--json",
    )
    qi = json.loads(out)
    # three judge components missing: n/a, and the reason names them (issue 24); exit 4, so a
    # gate that reads only the exit code does not pass on a QI that was never computed
    assert code == 4 and qi["quality_index"] is None
    assert qi["reason"] == "n/a: no scored item for InstructionCompliance, Pleasantness, ToolCalls"
    # FV = Σ formal_result / runs (spec §7): before 0 (the bug), after 1 (fixed) → 1/2
    assert qi["components"]["Formal"] == 0.5 and qi["warnings"] == []
    # spec §7 side metric: individual verifiers passed over both verify files, from their JSON
    statuses = [
        v["status"]
        for name in ("before.json", "after.json")
        for r in json.loads((tmp_path / name).read_text())["results"]
        for v in r["verifier_results"]
    ]
    passed = statuses.count("pass")
    assert 0 < passed < len(statuses)
    assert qi["verifiers_passed"] == {
        "passed": passed,
        "total": len(statuses),
        "fraction": round(passed / len(statuses), 4),
    }


def test_reviews_document_round_trip(tmp_path: Path) -> None:
    trajs = read_paths([TASK]).trajectories[:2]
    provider = ScriptedProvider(
        {
            "Pitfalls": ANSWER,
            "EndResult": "<Review>r\nAspect: a | Severity: low | Evidence: S1</Review><Score>1</Score>",
        }
    )
    reviews = asyncio.run(
        review_run(
            LLMClient(provider, cache=None),
            trajs,
            dimensions=["EndResult", "Pitfalls", "ToolCalls"],
        )
    )
    doc = reviews_document("scripted", reviews)
    assert doc["summary"]["ToolCalls"] == {
        "mean": None,
        "scored": 0,
        "unscored": 2,
        "unscored_rate": 1.0,
        "weighted_mean": None,  # free text: no score distribution
        "weighted_mean_of": 0,
        "weighted_mean_reason": "no scored review",
        "spread_mean": None,
    }
    path = tmp_path / "reviews.json"
    dump(doc, path)
    again = load_reviews(path)
    assert [r.trajectory_id for r in again] == [r.trajectory_id for r in reviews]
    assert (
        again[0].reviews["Pitfalls"].parsed.burden_total
        == reviews[0].reviews["Pitfalls"].parsed.burden_total
        == 15
    )
    md = reviews_markdown(doc)
    assert "[S1](#t0-S1)" in md and '<a id="t0-S1"></a>S1: EndResult' in md
    assert "| ToolCalls | – | 0 | 100% |" in md


def test_telemetry_and_compare_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "telemetry", str(TASK), "--json")
    assert code == 0 and json.loads(out)["trajectories"] == len(list(TASK.glob("*.json")))
    a = str(TASK / "*gpt-4.1-*")
    code, out = run(capsys, "compare", a, a, "--json", "--md", str(tmp_path / "c.md"))
    doc = json.loads(out)
    assert (code, doc["status"]) == (0, "ok")
    b = str(TASK / "*gpt-5.3-codex-*")
    code, out = run(capsys, "compare", a, b, "--json")
    doc = json.loads(out)
    assert code == doc["exit_code"] == {"ok": 0, "warning": 1, "alert": 2}[doc["status"]]
    assert (tmp_path / "c.md").read_text().startswith("# Run comparison")


def test_telemetry_report_lays_out_the_json_fields(capsys: pytest.CaptureFixture[str]) -> None:
    claude = FORMATS / "claude-code" / "marot-spotter"
    _, out = run(capsys, "telemetry", str(claude), "--json")
    doc = json.loads(out)
    code, text = run(capsys, "telemetry", str(claude))
    assert code == 0
    lines = text.splitlines()
    assert lines[0] == f"{doc['trajectories']} trajectories"
    models = ", ".join(f"{m} ×{n}" for m, n in doc["run_metadata"]["models"].items())
    assert f"  models: {models}" in lines
    assert f"{doc['prompt_tokens']:,} prompt ({doc['cached_tokens']:,} cached" in text
    rows = [line.split("│") for line in lines if line.startswith("│")]
    tools = [cells[1].strip() for cells in rows if len(cells) == 5]  # tool, ok/calls, ok %
    assert tools == list(doc["tool_call_success_rates"])  # worst first, as in the JSON


def test_telemetry_of_files_that_all_fail_prints_no_empty_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It printed "0 trajectories" and two empty tables before the `failed:` line."""
    real = next((FORMATS / "claude-code" / "marot-spotter").glob("*.jsonl"))
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"{not json\n" + real.read_bytes())  # a bad line before the last
    code, text = run(capsys, "telemetry", str(broken))
    assert code == 1 and text == ""
    code, text = run(capsys, "telemetry", str(broken), str(real.parent))
    assert code == 1 and "trajectories" in text.splitlines()[0]  # the readable ones still reported


def test_qi_variance_over_repeated_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = []
    for i, (formal, end) in enumerate([(0.71, 0.7), (0.72, 0.8), (0.73, 0.9)]):
        _, out = run(
            capsys, "qi", "--formal", str(formal), "--component", f"EndResult={end}", "--json"
        )
        path = tmp_path / f"qi{i}.json"
        path.write_text(out)
        paths += ["--variance", str(path)]
    _, out = run(capsys, "qi", *paths, "--json")
    shares = json.loads(out)["variance_share"]
    # Var(F) = 1e-4, Var(E) = 1e-2, Cov(F, E) = 1e-3: F's row sums to 1.1e-3 of 1e-4 + 1e-2 + 2 × 1e-3 = 1.21e-2
    assert shares["Formal"] == pytest.approx(1.1e-3 / 1.21e-2, abs=1e-4)
    assert shares["EndResult"] == pytest.approx(1.1e-2 / 1.21e-2, abs=1e-4)


def test_review_process_evidence_only_for_reviewed_runs() -> None:
    from agentlens.cli.review_cmd import _add_process_evidence
    from agentlens.reviews.judge.judge import MAX_REVIEWED, select_for_review
    from agentlens.reviews.judge.prompt import ReviewContext

    tasks = ["pylint-dev__pylint-4970", "astropy__astropy-13236"]  # 5 and 3 passing runs
    paths = sorted(f for t in tasks for f in (BENCH / "trajectories" / t).glob("*.json"))
    assert sum("-pass-" in f.name for f in paths if tasks[1] in f.name) == 3
    trajs = read_paths(paths).trajectories
    assert len(trajs) == len(paths) > MAX_REVIEWED
    contexts = {t.id: ReviewContext() for t in trajs}
    scores = _add_process_evidence(trajs, contexts)
    reviewed = {t.id for t in select_for_review(trajs)}
    with_evidence = {tid for tid, ctx in contexts.items() if ctx.process_evidence}
    assert with_evidence == reviewed and len(reviewed) == MAX_REVIEWED
    # every task has ≥ 3 passing runs, so each reviewed run is scored leave-one-out, and only they
    assert sorted(r.trajectory_id for r in scores.results.values()) == sorted(reviewed)
    assert all("Process tier:" in (contexts[tid].process_evidence or "") for tid in reviewed)


def test_a_broken_scenario_yaml_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = create_repo(tmp_path / "calc")
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("name: fix_sub\nverifiers: [\n")  # an unclosed flow list
    code = main(["verify", str(scenario), "--repo", str(repo)])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.splitlines() == [
        f"error: {scenario}:3: not valid YAML (expected the node content, but found '<stream end>')"
    ]


@pytest.mark.parametrize(
    ("component", "why"),
    [
        ("EndResult=abc", "not a number"),
        ("EndResult=75", "not in [0, 1]"),
        ("EndResult=nan", "not in [0, 1]"),
        ("Endresult=0.5", "unknown dimension"),
    ],
)
def test_qi_refuses_a_component_it_cannot_use(
    component: str, why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo, a percent or a word is a usage error naming it, not a traceback, a QI of 1305.83
    or a component silently listed "beside the QI"."""
    code = main(["qi", "--formal", "0.8", "--component", component])
    err = capsys.readouterr().err
    assert code == 2
    assert component in err and why in err and "Traceback" not in err


@pytest.mark.parametrize("plan", [["--estimate"], ["--dump-prompts", "prompts"]])
def test_review_plans_name_a_bad_file_and_exit_1(
    plan: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--estimate` and `--dump-prompts` read the inputs like a review: a truncated trace gets
    its one line and exit 1, not a quietly smaller estimate with exit 0."""
    good, bad = sorted(TASK.glob("*-logs-gpt-4.1-*"))[:2]
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / good.name).write_bytes(good.read_bytes())
    (tmp_path / "runs" / bad.name).write_bytes(bad.read_bytes()[:30_000])
    plan = [str(tmp_path / p) if p == "prompts" else p for p in plan]
    code = main(["review", str(tmp_path / "runs"), "--judge", "openai:gpt-4.1",
                 "--dimension", "EndResult", *plan])  # fmt: skip
    err = " ".join(capsys.readouterr().err.split())
    assert code == 1
    assert f"failed: {tmp_path / 'runs' / bad.name} [agentlens-bench]: invalid JSON" in err


def test_review_names_a_failed_summary_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `--summary` call that fails (here HTTP 400; on a local model, all the reviews not fitting
    its context) is a judge call that failed: one `failed:` line and exit 1, not only a note
    inside the report."""
    from tests.providers.fault_server import FaultServer

    (trace,) = sorted(TASK.glob("*-logs-gpt-4o-fail-*"))[:1]
    args = ["review", str(trace), "--dimension", "EndResult", "--free-text", "--summary"]
    args += ["--no-cache", "--out", str(tmp_path / "r.json")]
    with FaultServer() as server:
        server.queue("ok", "400")
        code = main([*args, "--judge", server.model()])
    err = " ".join(capsys.readouterr().err.split())
    narrative = json.loads((tmp_path / "r.json").read_text())["narratives"]["EndResult"]
    assert narrative["unscored_reason"].startswith("provider error:")
    assert "failed: 1 of 2 judge calls; first: provider error:" in err
    assert code in (1, 4)  # 4 when the scripted answer is also unscored


def test_qi_variance_refuses_runs_missing_different_components(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A component one run lacks is n/a there, not 0: mixing it with runs that have it made a
    "QI over 3 runs: 56.94 ± 27.82" out of a run whose QI is n/a. With the same components
    missing everywhere the shares stand, but the QI mean is n/a."""
    full = ["InstructionCompliance=0.7", "Pitfalls=0.6", "Pleasantness=0.8", "ToolCalls=0.75"]
    paths = []
    for i, extra in enumerate([full, full, []]):
        parts = [x for c in ["EndResult=0.9", *extra] for x in ("--component", c)]
        _, out = run(capsys, "qi", "--formal", f"0.{7 + i}", *parts, "--json")
        (tmp_path / f"qi{i}.json").write_text(out)
        paths += ["--variance", str(tmp_path / f"qi{i}.json")]
    code = main(["qi", *paths])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert f"{tmp_path / 'qi2.json'}: no InstructionCompliance, Pitfalls" in err
    code, out = run(capsys, "qi", *(["--variance", paths[-1]] * 2), "--json")
    assert code == 4 and json.loads(out)["qi_mean"] is None  # n/a, as a single QI is


def test_the_qi_line_and_its_reason_stay_one_line_in_a_pipe(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A CI log greps `Quality Index` for the value and its reason: at 80 columns the reason
    used to be folded onto the next line; and it said `n/a   n/a:`, its value twice."""
    assert main(["qi", "--formal", "0.5", "--component", "EndResult=0.75"]) == 4
    assert capsys.readouterr().out.splitlines()[0] == (
        "Quality Index n/a: no scored item for InstructionCompliance, Pitfalls, "
        "Pleasantness, ToolCalls"
    )


def test_a_qi_without_a_formal_rate_says_which_option_gives_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`qi --reviews b.json` alone (a README step without `--formal`) said `Formal  missing`
    and exited 4, naming no way to give it."""
    parts = [f"--component={d}=0.5" for d in DIMENSIONS]
    assert main(["qi", *parts]) == 4
    err = capsys.readouterr().err
    assert "hint: the QI needs the formal pass rate: --formal RATE, or --verify FILE" in err
    assert main(["qi", "--formal", "0.8", *parts]) == 0
    assert "hint:" not in capsys.readouterr().err
