"""Hostile copies of the files the review commands hand each other (`verify --out`, `review --out`,
`sxs --out`, `qi --json`) and of scenario files: each problem is one line naming the file and
what is wrong, exit 2, never an internal error. The good files are written by the real commands
(or their real writers) at test time; the bad ones are edited copies under tmp_path."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentlens.cli import main
from agentlens.demo.tiny_repo import DEMO_SCENARIO, apply_fix, create_repo
from agentlens.jsonio import dump
from agentlens.reviews import DIMENSIONS
from agentlens.reviews.documents import reviews_document
from agentlens.reviews.judge.judge import DimensionReview, TrajectoryReview
from agentlens.reviews.judge.parse import parse_review
from tests.conftest import BENCH

TASK = BENCH / "trajectories" / "psf__requests-1724"
PASS_RUN = TASK / "psf__requests-1724-logs-gemini-2.5-pro-pass-24943628310_pta.json"
ANSWER = (
    "<Review>\nThe agent fixed the bug.\nAspect: tests run | Severity: low | Evidence: S3\n"
    "Pitfall: blind retry | Category: Tool/Harness | Severity: high | Frequency: once | "
    "Evidence: S2 | Mechanism: ignored error\nBurdenTotal: 7\n</Review>\n<Score>1</Score>"
)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(args))
    return code, capsys.readouterr().err.strip()


def one_error_line(code: int, err: str, path: Path, what: str) -> None:
    assert code == 2, err
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"error: {path}: ") and what in err, err
    assert "internal error" not in err


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """verify.json from a real `agentlens verify` run, reviews.json from the real answer parser
    and writer, qi.json from a real `agentlens qi --json`."""
    root = tmp_path_factory.mktemp("real")
    repo = create_repo(root / "calc")
    apply_fix(repo)
    scenario = root / "scenario.json"
    scenario.write_text(json.dumps(DEMO_SCENARIO))
    assert main(["verify", str(scenario), "--repo", str(repo), "--out", str(root / "v.json")]) == 0
    parsed = parse_review(ANSWER, 5)
    dims = {
        d: DimensionReview(d, parsed.score, parsed.unscored_reason, parsed, ANSWER, 90, {})
        for d in DIMENSIONS
    }
    review = TrajectoryReview(PASS_RUN.stem, "psf__requests-1724", 5, 900, 900, dims)
    dump(reviews_document("judge", [review]), root / "r.json")
    sxs = {
        "kind": "agentlens.sxs/1",
        "run_a": "a",
        "run_b": "b",
        "dimensions": {
            "EndResult": {
                "mean_score": 0.0,
                "p_value": 1.0,
                "warning": False,
                "alert": False,
                "reason": "mean +0.0000, p = 1.000",
                "cells": [{"task": "psf__requests-1724", "forward": 1, "swapped": -1}],
            }
        },
    }
    dump(sxs, root / "s.json")
    return {"verify": root / "v.json", "reviews": root / "r.json", "sxs": root / "s.json"}


def edited(src: Path, dst: Path, change: Callable[[Any], None]) -> Path:
    doc = json.loads(src.read_text())
    change(doc)
    dst.write_text(json.dumps(doc))
    return dst


def set_score(value: Any) -> Callable[[Any], None]:
    def change(doc: Any) -> None:
        doc["trajectories"][0]["reviews"]["EndResult"]["score"] = value

    return change


def qi_of_reviews(real: dict[str, Path], bad: Path) -> list[str]:
    return ["qi", "--reviews", str(bad), "--verify", str(real["verify"])]


def qi_of_verify(real: dict[str, Path], bad: Path) -> list[str]:
    return ["qi", "--reviews", str(real["reviews"]), "--verify", str(bad)]


def compare_of_verify(real: dict[str, Path], bad: Path) -> list[str]:
    return ["compare", str(PASS_RUN), str(PASS_RUN), "--a-verify", str(bad), "--b-verify",
            str(real["verify"])]  # fmt: skip


def compare_of_sxs(real: dict[str, Path], bad: Path) -> list[str]:
    return ["compare", str(PASS_RUN), str(PASS_RUN), "--sxs", str(bad)]


def selfpref_of_sxs(real: dict[str, Path], bad: Path) -> list[str]:
    return ["selfpref", str(bad), str(real["sxs"])]


def metrics_tests_as_text(doc: Any) -> None:
    (tests,) = [v for v in doc["results"][0]["verifier_results"] if "tests" in v["metrics"]]
    tests["metrics"]["tests"] = "3"


def end_result(**fields: Any) -> Callable[[Any], None]:
    return lambda d: d["dimensions"]["EndResult"].update(fields)


# (file edited, command that reads it, case name, the edit, what the one error line names);
# `compare` appends the SxS trinomial reason to its row, so that is checked too (older files
# without a trinomial still pass, as `real["sxs"]` does)
WRONG_SHAPES = [
    ("reviews", qi_of_reviews, "score-str", set_score("1"), "Expected `float | null`, got `str`"),
    ("reviews", qi_of_reviews, "score-neg", set_score(-5), ".score"),
    ("reviews", qi_of_reviews, "score-obj", set_score({}), ".score"),
    ("reviews", qi_of_reviews, "traj-null", lambda d: d.update(trajectories=None),
     "$.trajectories"),
    ("reviews", qi_of_reviews, "reviews-list", lambda d: d["trajectories"][0].update(reviews=[]),
     ".reviews"),
    ("reviews", qi_of_reviews, "evidence-str",
     lambda d: d["trajectories"][0]["reviews"]["Pitfalls"]["review"].update(evidence="x"),
     ".review.evidence"),
    ("reviews", qi_of_reviews, "steps-str", lambda d: d["trajectories"][0].update(steps="5"),
     "$.trajectories[0].steps"),
    # null is "not scored" (a check skipped, none failed); a string is no verdict
    ("verify", qi_of_verify, "formal-str",
     lambda d: d["results"][0].update(formal_verification_result="1"),
     "formal_verification_result"),
    ("verify", qi_of_verify, "formal-neg",
     lambda d: d["results"][0].update(formal_verification_result=-5),
     "formal_verification_result"),
    ("verify", qi_of_verify, "results-str", lambda d: d.update(results="x"), "$.results"),
    ("verify", qi_of_verify, "verifiers-null",
     lambda d: d["results"][0].update(verifier_results=None), "verifier_results"),
    ("verify", compare_of_verify, "tests-str", metrics_tests_as_text, "metrics.tests"),
    ("sxs", compare_of_sxs, "alert", end_result(alert="false"), "Expected `bool`, got `str`"),
    ("sxs", compare_of_sxs, "trinomial", end_result(trinomial={"reason": 1}),
     ".trinomial.reason"),
    ("sxs", selfpref_of_sxs, "cells-null", end_result(cells=None), ".cells"),
    ("sxs", selfpref_of_sxs, "forward-str",
     lambda d: d["dimensions"]["EndResult"]["cells"][0].update(forward="1"), ".forward"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "command", "name", "change", "what"),
    WRONG_SHAPES,
    ids=[f"{case[2]}-{case[1].__name__}" for case in WRONG_SHAPES],
)
def test_a_file_of_the_wrong_shape_is_one_line(
    real: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    command: Callable[[dict[str, Path], Path], list[str]],
    name: str,
    change: Callable[[Any], None],
    what: str,
) -> None:
    bad = edited(real[kind], tmp_path / f"{name}.json", change)
    code, err = run(capsys, *command(real, bad))
    one_error_line(code, err, bad, what)


def test_a_file_of_another_kind_is_named_as_such(
    real: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run(capsys, "qi", "--reviews", str(real["verify"]))
    one_error_line(code, err, real["verify"], "an agentlens.verify/1 file")
    assert "agentlens review --out" in err


def test_a_bom_before_a_written_file_is_accepted(
    real: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + real["reviews"].read_bytes().replace(b"\n", b"\r\n"))
    code, err = run(capsys, "qi", "--reviews", str(bom), "--verify", str(real["verify"]))
    assert code == 0, err


def qi_json(real: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    capsys.readouterr()
    argv = ["qi", "--reviews", str(real["reviews"]), "--verify", str(real["verify"]), "--json"]
    assert main(argv) == 0  # every component given: a QI, not n/a (exit 4)
    path = tmp_path / "qi.json"
    path.write_text(capsys.readouterr().out)
    return path


@pytest.mark.parametrize(
    ("name", "content", "what"),
    [
        ("truncated", None, "not valid JSON"),
        ("empty", b"", "not valid JSON"),
        ("list", b"[]", "Expected `object`, got `array`"),
        ("components-list", b'{"components": []}', "$.components"),
        ("formal-str", b'{"components": {"Formal": "abc"}}', "Expected `float | null`"),
    ],
)
def test_qi_variance_refuses_a_bad_qi_file_in_one_line(
    real: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: bytes | None,
    what: str,
) -> None:
    good = qi_json(real, tmp_path, capsys)
    bad = tmp_path / f"{name}.json"
    bad.write_bytes(good.read_bytes()[:40] if content is None else content)
    code, err = run(capsys, "qi", "--variance", str(good), "--variance", str(bad))
    one_error_line(code, err, bad, what)


def test_qi_variance_of_one_run_is_a_usage_error(
    real: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run(capsys, "qi", "--variance", str(qi_json(real, tmp_path, capsys)))
    assert code == 2 and err == "error: --variance needs the `qi --json` files of at least 2 runs"


BOMB = "".join(
    f"  - &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)
)


@pytest.mark.parametrize(
    ("name", "extra", "what"),
    [
        ("inf-steps", "max_steps: .inf\n", "max_steps must be a whole number"),
        ("nan-timeout", "verifier_timeout_seconds: .nan\n", "must be a positive number"),
        ("str-timeout", "verifier_timeout_seconds: soon\n", "must be a number, not 'soon'"),
        ("neg-timeout", "scenario_timeout_seconds: -5\n", "must be a positive number"),
        ("tags-int", "tags: 5\n", "tags must be a list of strings"),
        ("base-list", "base_ref: [a, b]\n", "base_ref must be a string"),
        ("dup-key", "verifiers: []\n", "key 'verifiers' given twice"),
        ("deep", "tags: " + "[" * 3000 + "]" * 3000 + "\n", "nested too deeply"),
        ("bomb", "opened_files:\n  - &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + BOMB,
         "a YAML bomb"),
    ],
)  # fmt: skip
def test_a_hostile_scenario_yaml_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, extra: str, what: str
) -> None:
    repo = create_repo(tmp_path / "calc")
    scenario = tmp_path / f"{name}.yaml"
    scenario.write_text(yaml.safe_dump(DEMO_SCENARIO) + extra)
    code, err = run(capsys, "verify", str(scenario), "--repo", str(repo))
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {scenario}") and what in err, err


SCENARIO_JSON = {
    "bom": (b"\xef\xbb\xbf" + json.dumps(DEMO_SCENARIO).encode(), None),
    "dup": (json.dumps(DEMO_SCENARIO)[:-1].encode() + b', "verifiers": []}', "given twice"),
    "nan": (json.dumps(DEMO_SCENARIO | {"max_steps": float("nan")}).encode(), "NaN"),
    "latin1": (
        json.dumps(DEMO_SCENARIO | {"name": "é"}, ensure_ascii=False).encode("latin-1"),
        "not UTF-8",
    ),
    "deep": (b'{"verifiers": ' + b"[" * 100000 + b"]" * 100000 + b"}", "nested too deeply"),
}


@pytest.mark.parametrize("name", sorted(SCENARIO_JSON))
def test_a_hostile_scenario_json_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    data, what = SCENARIO_JSON[name]
    repo = create_repo(tmp_path / "calc")
    scenario = tmp_path / f"{name}.json"
    scenario.write_bytes(data)
    code, err = run(capsys, "verify", str(scenario), "--repo", str(repo), "--base", "HEAD")
    if what is None:
        assert code == 1, err  # read; the unfixed repository fails the checks
        return
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {scenario}") and what in err, err


def test_a_user_instruction_that_is_not_utf8_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = create_repo(tmp_path / "calc")
    scenario = tmp_path / "s" / "config.json"
    scenario.parent.mkdir()
    scenario.write_text(json.dumps(DEMO_SCENARIO))
    (scenario.parent / "user_instruction.txt").write_bytes(b"caf\xe9 \xff")
    code, err = run(capsys, "verify", str(scenario), "--repo", str(repo))
    assert code == 2, err
    assert err == (
        f"error: {scenario}: {scenario.parent / 'user_instruction.txt'}: not UTF-8 text (offset 3)"
    )
