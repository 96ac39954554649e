"""A reference file (`agentlens reference build -o`) edited by hand or damaged: a field of the
wrong type, out of range or missing is one line naming the file and the field before any run is
scored, instead of one "scoring failed" line per run that blames the run, or scores computed
from it (a donor baseline of 1e308 states made every run's `len_rel` -709: a score of 100)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentlens.cli import main
from tests.conftest import BENCH

TASK = BENCH / "trajectories" / "psf__requests-1724"
RUN = TASK / "psf__requests-1724-logs-gpt-4o-fail-25018754982_pta.json"


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ref") / "ref.json"
    assert main(["reference", "build", str(TASK), "-o", str(out)]) == 0
    return out


def node(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        doc["nodes"][1][field] = value

    return change


def baseline(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        doc["donor_baseline"][field] = value

    return change


def without(*keys: str | int) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        *where, last = keys
        for key in where:
            doc = doc[key]  # type: ignore[index]
        del doc[last]  # type: ignore[arg-type]

    return change


CASES: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "support-str": (node("support", "5"), "Expected `int`, got `str` - at `$.nodes[1].support`"),
    "tool-obj": (node("tool", {}), "at `$.nodes[1].tool`"),
    "stage-word": (node("stage", "Exploration"), "at `$.nodes[1].stage`"),
    "args-str": (node("args", "grep"), "at `$.nodes[1].args`"),
    "line-range-str": (node("line_range", "1-3"), "at `$.nodes[1].line_range`"),
    "resulting-state-num": (node("resulting_state", 3), "at `$.nodes[1].resulting_state`"),
    "tokens-neg": (node("input_tokens", -5), "at `$.nodes[1].input_tokens`"),
    "no-terminals": (lambda d: d.update(terminals=[]), "at `$.terminals`"),
    "node-no-stage": (without("nodes", 1, "stage"), "required field `stage` - at `$.nodes[1]`"),
    "no-profile": (without("profile"), "required field `profile`"),
    "profile-num": (lambda d: d.update(profile=3), "at `$.profile`"),
    "donors-str": (lambda d: d.update(donors="gpt-4o"), "at `$.donors`"),
    "tasks-num": (lambda d: d.update(tasks=[1724]), "at `$.tasks[0]`"),
    "baseline-list": (lambda d: d.update(donor_baseline=[0.2]), "at `$.donor_baseline`"),
    "n-states-huge": (baseline("n_states", 1e308), "<= 100000.0 - at `$.donor_baseline.n_states`"),
    "n-states-neg": (baseline("n_states", -1), ">= 0.0 - at `$.donor_baseline.n_states`"),
    "n-states-nan": (baseline("n_states", float("nan")), "at `$.donor_baseline.n_states`"),
    "n-states-inf": (baseline("n_states", float("inf")), "at `$.donor_baseline.n_states`"),
    "n-states-str": (baseline("n_states", "14.6"), "got `str` - at `$.donor_baseline.n_states`"),
    "n-states-none": (without("donor_baseline", "n_states"), "required field `n_states`"),
    "f1-above-1": (baseline("f1", 1.5), "<= 1.0 - at `$.donor_baseline.f1`"),
    "cov-bool": (baseline("cov", True), "got `bool` - at `$.donor_baseline.cov`"),
    "reason-num": (baseline("reason", 5), "got `int` - at `$.donor_baseline.reason`"),
    "baseline-extra": (baseline("k", 5), "unknown field `k` - at `$.donor_baseline`"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_damaged_reference_is_one_line_naming_it(
    case: str, reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    change, what = CASES[case]
    doc = json.loads(reference.read_text())
    change(doc)
    bad = tmp_path / f"{case}.json"
    bad.write_text(json.dumps(doc))  # NaN and Infinity as Python writes them
    capsys.readouterr()
    code = main(["score", str(RUN), "--reference", str(bad)])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.startswith(f"error: {bad}: malformed reference: ") and what in err, err
    assert len(err.splitlines()) == 1


def test_the_real_reference_still_scores(
    reference: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", str(RUN), "--reference", str(reference)]) == 0
