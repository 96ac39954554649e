"""A reference file (`agentlens reference build -o`) edited by hand or damaged: a field of the
wrong type is one line naming the file before any run is scored, instead of one "scoring failed"
line per run that blames the run."""

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


CASES: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "support-str": (node("support", "5"), "Expected `int`, got `str` - at `$.nodes[1].support`"),
    "tool-obj": (node("tool", {}), "at `$.nodes[1].tool`"),
    "stage-word": (node("stage", "Exploration"), "at `$.nodes[1].stage`"),
    "args-str": (node("args", "grep"), "at `$.nodes[1].args`"),
    "line-range-str": (node("line_range", "1-3"), "at `$.nodes[1].line_range`"),
    "resulting-state-num": (node("resulting_state", 3), "at `$.nodes[1].resulting_state`"),
    "tokens-neg": (node("input_tokens", -5), "at `$.nodes[1].input_tokens`"),
    "no-terminals": (lambda d: d.update(terminals=[]), "at `$.terminals`"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_damaged_reference_is_one_line_naming_it(
    case: str, reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    change, what = CASES[case]
    doc = json.loads(reference.read_text())
    change(doc)
    bad = tmp_path / f"{case}.json"
    bad.write_text(json.dumps(doc))
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
