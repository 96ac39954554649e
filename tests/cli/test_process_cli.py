"""`agentlens label | reference build | score | cohort` end to end on the real dev traces."""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

import pytest

from agentlens.cli import main
from tests.conftest import BENCH

TRAJ = BENCH / "trajectories"
REQUESTS = TRAJ / "psf__requests-1724"
C1_RUN = REQUESTS / "psf__requests-1724-logs-opus-4.6-pass-25038457597_pta.json"
WORD = {"exploration": "E", "implementation": "I", "verification": "V", "orchestration": "O"}


def raw_labels(path: Path) -> list[str]:
    states = sorted(json.loads(path.read_bytes())["states"].values(), key=lambda s: s["step"])
    return [WORD[s["intent_stage"]] for s in states if s["intent_stage"]]


def test_label_json_sdk_compat_matches_the_stored_labels(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["label", "--json", "--profile", "sdk-compat", str(C1_RUN)]) == 0
    (line,) = capsys.readouterr().out.strip().splitlines()
    doc = json.loads(line)
    assert [s["stage"] for s in doc["steps"]] == raw_labels(C1_RUN)
    assert [s["stored"] for s in doc["steps"]] == raw_labels(C1_RUN)
    assert (
        doc["steps"][1]["category"] == "edit"
        and doc["steps"][1]["tool"] == "replace_string_in_file"
    )


def test_label_table_reports_agreement(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["label", str(C1_RUN)]) == 0
    out = capsys.readouterr().out
    assert "agrees with the stored labels on" in out and "run_in_terminal" in out


def test_label_shows_what_each_step_did(capsys: pytest.CaptureFixture[str]) -> None:
    """A stage is checked against what the step did: its command (else the files it named), in
    the table, one line, and whole in `--json`."""
    from agentlens.formats.load import read_path

    steps = [s for s in read_path(C1_RUN)[0].steps if s.kind == "tool"]
    commands = [s.command for s in steps if s.command]
    assert main(["label", "--json", str(C1_RUN)]) == 0
    rows = json.loads(capsys.readouterr().out)["steps"]
    assert [r["action"] for r in rows if r["category"] == "run_command"] == commands
    assert main(["label", str(C1_RUN)]) == 0
    table = capsys.readouterr().out
    for command in commands:  # each begins a row (the rest may be cut)
        assert re.search(r"│ " + re.escape(command[:12]), table), command


@pytest.mark.parametrize(
    "option",
    [["--labels", str(BENCH / "annotations" / "trajectories.csv")], ["--unevaluated", "failed"]],
)
def test_label_refuses_the_outcome_options_it_had_no_use_for(
    option: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """`label` shows stages, never an outcome: `--labels` and `--unevaluated` were accepted and
    changed no byte of its output."""
    assert main(["label", *option, str(C1_RUN)]) == 2
    assert f"No such option '{option[0]}'" in capsys.readouterr().err
    assert main(["inspect", *option, str(C1_RUN)]) == 0  # where an outcome is shown, they count


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ref") / "ref.json"
    assert (
        main(["reference", "build", str(REQUESTS), "-o", str(out), "--profile", "sdk-compat"]) == 0
    )
    return out


def test_reference_build_uses_k_donors(reference: Path) -> None:
    doc = json.loads(reference.read_bytes())
    passing = sorted(p.stem for p in REQUESTS.glob("*-pass-*.json"))
    assert len(doc["donors"]) == 5 and set(doc["donors"]) <= set(passing)
    assert doc["profile"] == "sdk-compat" and doc["nodes"]


@pytest.mark.parametrize("k", ["3", "0", "9"])
def test_reference_build_merges_all_donors_in_shuffled_order(tmp_path: Path, k: str) -> None:
    """Spec §14.1 steps 4-5: the file-name-sorted passing runs are shuffled and merged in that
    order (merge order matters, §5.2), also when k takes every passing run (astropy has 3)."""
    import random

    task = TRAJ / "astropy__astropy-13236"
    out = tmp_path / "ref.json"
    assert main(["reference", "build", str(task), "-o", str(out), "--k", k]) == 0
    passing = sorted(p.name for p in task.glob("*-pass-*_pta.json"))
    assert len(passing) == 3
    random.Random(42).shuffle(passing)
    want = [name.removesuffix(".json") for name in passing]
    assert json.loads(out.read_bytes())["donors"] == want


def test_reference_from_one_run_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Spec §5.1: a reference merges k ≥ 2 passing runs; one run still builds, with a warning."""
    assert main(["reference", "build", str(C1_RUN), "-o", str(tmp_path / "r.json")]) == 0
    assert "k ≥ 2" in capsys.readouterr().err


def test_narrow_score_output_has_three_lines_per_run(
    reference: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [str(p) for p in sorted(REQUESTS.glob("*.json"))[:4]]
    assert main(["score", *runs, "--reference", str(reference), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert main(["score", *runs, "--reference", str(reference)]) == 0  # captured: 80 columns
    *lines, scales = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{len(rows)} runs scored"
    assert scales.startswith("score, struct, cov: 0–100; coh, temp: 0–1; waste: wasted steps")
    for row, block in zip(rows, [lines[i : i + 3] for i in range(1, len(lines), 3)], strict=True):
        assert block[0] == row["trajectory_id"]
        assert block[1].startswith(f"  {row['outcome']}, score {row['score']:.1f} ({row['tier']})")
        assert block[2].startswith(f"  struct {row['signals']['struct']['value']:.1f}  cov ")


def test_calibrated_score_names_the_terms_that_moved_it_most(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under the default profile the lines printed the paper's four signals only, none of which
    the score is made of; now the three largest parts of its logit, as the reason computes them."""
    from agentlens.process.profiles import CALIBRATED

    reference = tmp_path / "ref.json"
    assert main(["reference", "build", str(REQUESTS), "-o", str(reference)]) == 0
    capsys.readouterr()
    runs = [str(p) for p in sorted(REQUESTS.glob("*-fail-*.json"))[:3]]
    assert main(["score", *runs, "--reference", str(reference), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert main(["score", *runs, "--reference", str(reference)]) == 0  # captured: 80 columns
    shown = capsys.readouterr().out.splitlines()
    moved = [line for line in shown if line.startswith("  moved most by")]
    assert len(moved) == len(rows) == 3
    for row, line in zip(rows, moved, strict=True):
        assert row["profile"] == "calibrated"
        signals = row["signals"]
        parts = {
            t.signal: t.weight * (signals[t.signal]["value"] - t.mean) / t.sd
            for t in CALIBRATED.terms
        }
        largest = sorted(parts, key=lambda name: -abs(parts[name]))[:3]
        shown = "  ".join(f"{name} {parts[name]:+.2f}" for name in largest)
        assert line == f"  moved most by: {shown}"


def test_score_writes_the_release_columns(
    reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = sorted(REQUESTS.glob("*-fail-*.json"))[:3]
    out_csv, out_pq = tmp_path / "s.csv", tmp_path / "s.parquet"
    args = ["score", *map(str, runs), "--reference", str(reference), "--csv", str(out_csv)]
    assert main([*args, "--parquet", str(out_pq)]) == 0
    assert "3 runs scored" in capsys.readouterr().out
    with (BENCH / "annotations" / "trajectories.csv").open() as fh:
        release_header = next(csv.reader(fh))
    with out_csv.open() as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == release_header and len(release_header) == 40
    assert [r["trajectory_id"] for r in rows] == [p.stem for p in runs]
    assert {r["passed"] for r in rows} == {"False"}
    import pyarrow.parquet as pq

    assert pq.read_table(out_pq).column_names == release_header


def test_score_parquet_without_pyarrow_stops_before_any_scoring(
    reference: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The install hint comes before the runs are read and scored, not after."""
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if not installed
    read: list[tuple[str, ...]] = []
    monkeypatch.setattr(
        "agentlens.cli.score_cmd.spilled_inputs", lambda paths, *_, **__: read.append(paths)
    )
    run = sorted(REQUESTS.glob("*-fail-*.json"))[0]
    args = ["score", str(run), "--reference", str(reference), "--parquet", str(tmp_path / "s.pq")]
    assert main(args) == 2
    assert "pip install 'agentlens[parquet]'" in capsys.readouterr().err
    assert read == [] and list(tmp_path.iterdir()) == []


def test_score_json_carries_reasons(reference: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", str(C1_RUN), "--reference", str(reference), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["profile"] == "sdk-compat" and doc["outcome"] == "passed"
    assert "→" in doc["tier_reason"] and doc["signals"]["coh"]["reason"]
    assert len(doc["annotation"]) == 40
    # the paper's C1 case (spec §13.6): 4 states, no V coverage; its report fields come along
    states = json.loads(C1_RUN.read_bytes())["states"].values()
    meta = [s["metadata"] for s in states if s.get("log_entry")]
    assert doc["annotation"]["n_states"] == len(meta) == 4
    assert doc["tokens"] == sum(m["input_tokens"] + m["output_tokens"] for m in meta)
    assert doc["verdict_tier"] in ("ideal", "solid", "lucky", "partial_fail", "off_track")
    assert all(q["type"] and q["severity"] for q in doc["quality_signals"])


def test_score_takes_format_like_inspect(
    reference: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--format` skips detection, as in `inspect`: the right reader scores, a wrong one fails."""
    args = ["score", str(C1_RUN), "--reference", str(reference), "--json"]
    assert main([*args, "--format", "agentlens-bench"]) == 0
    assert json.loads(capsys.readouterr().out)["outcome"] == "passed"
    assert main([*args, "--format", "swe-agent"]) != 0
    assert C1_RUN.name in capsys.readouterr().err


def test_cohort_from_release_rows(capsys: pytest.CaptureFixture[str]) -> None:
    release = BENCH / "annotations" / "trajectories.csv"
    assert main(["cohort", "--rows", str(release), "--json", "--boot", "50"]) == 0
    doc = json.loads(capsys.readouterr().out)
    with release.open() as fh:
        tiers = [r["quality_tier"] for r in csv.DictReader(fh)]
    assert doc["n_runs"] == len(tiers)
    assert doc["tiers"] == {t: tiers.count(t) for t in set(tiers)}
    assert {s["signal"] for s in doc["separation"]} >= {"composite", "process_only"}
    assert [c["selection"] for c in doc["curation"]] == ["all", "drop-lucky", "top-50", "top-25"]
    lucky = tiers.count("lucky")
    assert sum(p["n"] for p in doc["mechanism_profiles"]) == lucky > 0


def _release_csv_damaged(tmp_path: Path, damage: str) -> Path:
    """The release's annotation CSV with one kind of damage, made at test time."""
    lines = (BENCH / "annotations" / "trajectories.csv").read_text().splitlines()
    header, first = lines[0].split(","), lines[1]
    if damage == "a word where a number belongs":
        cells = next(csv.reader([first]))
        cells[header.index("n_states")] = "many"
        lines[1] = ",".join(f'"{c}"' for c in cells)
    elif damage == "a row with an extra field":
        lines[2] += ",extra"
    elif damage == "no trajectory_id column":
        lines = [
            line.replace("trajectory_id", "trace", 1) if n == 0 else line
            for n, line in enumerate(lines)
        ]
    out = tmp_path / "rows.csv"
    out.write_text("\n".join(lines) + "\n")
    return out


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (
            "a word where a number belongs",
            "line 2: column 'n_states' should be a number, found 'many'",
        ),
        ("a row with an extra field", "line 3: 41 fields do not match the header"),
        ("no trajectory_id column", "not an annotation CSV: no column 'trajectory_id'"),
    ],
)
def test_cohort_rows_that_are_not_an_annotation_csv(
    damage: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _release_csv_damaged(tmp_path, damage)
    assert main(["cohort", "--rows", str(rows)]) == 2
    err = capsys.readouterr().err
    assert f"{rows}: {message}" in err and "Traceback" not in err


def test_cohort_scores_a_task_leave_one_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = sorted(REQUESTS.glob("*.json"))[:8]
    n_pass = sum("-pass-" in p.name for p in runs)
    assert n_pass >= 3
    out = tmp_path / "rows.jsonl"
    args = ["cohort", *map(str, runs), "--boot", "50", "--json", "--profile", "sdk-compat"]
    assert main([*args, "--out", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["n_runs"] == len(runs)  # every run has ≥ 2 other passing runs
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["trajectory_id"] for r in rows) == sorted(p.stem for p in runs)


def test_reference_of_two_tasks_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = next((TRAJ / "pallets__flask-5014").glob("*-pass-*.json"))
    code = main(["reference", "build", str(C1_RUN), str(other), "-o", str(tmp_path / "r.json")])
    assert code == 2
    assert "one task" in capsys.readouterr().err


BROKEN_REFERENCES = {
    "wrong format": lambda doc: {"format": "something else"},
    "no nodes": lambda doc: {k: v for k, v in doc.items() if k != "nodes"},
    "unknown profile": lambda doc: {**doc, "profile": "fast"},
    "node is a list": lambda doc: {**doc, "nodes": [[1, 2], *doc["nodes"][1:]]},
    "edge to nowhere": lambda doc: {
        **doc,
        "edges": [*doc["edges"], ["e", doc["initial"], "x", "a"]],
    },
    "unhashable terminal": lambda doc: {**doc, "terminals": [["x"]]},
    "short edge": lambda doc: {**doc, "edges": [doc["edges"][0][:2]]},
}


@pytest.mark.parametrize("damage", sorted(BROKEN_REFERENCES))
def test_score_with_a_bad_reference(
    damage: str, reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(BROKEN_REFERENCES[damage](json.loads(reference.read_bytes()))))
    assert main(["score", str(C1_RUN), "--reference", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_demo_intent_label_section() -> None:
    from io import StringIO

    from rich.console import Console

    from agentlens.demo.tour import run_demo

    out = StringIO()
    assert run_demo(BENCH, Console(file=out, width=120), ("intent labels",)) == 0
    text = out.getvalue()
    assert "sdk-compat: 10,442/10,442 stored labels reproduced (100.0%)" in text
    assert "paper:" in text


def test_the_released_score_prints_the_sum_it_rounded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sum was printed to 2 decimals: `round(… = 53.50) = 53` for a django__django-11066 run
    whose sum is 53.4961, which a reader rounds to 54. It now prints the digits that decide it."""
    task = TRAJ / "django__django-11066"
    run = task / "django__django-11066-logs-gpt-5.3-codex-pass-24979449576_pta.json"
    ref = tmp_path / "ref.json"
    build = ["reference", "build", str(task), "--profile", "sdk-compat", "-o", str(ref)]
    assert main(build) == 0
    capsys.readouterr()
    assert main(["score", str(run), "--reference", str(ref), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    raw = re.search(r"= (-?[\d.]+)\) = (\d+)$", doc["score_reason"])
    assert raw, doc["score_reason"]
    assert raw.group(1) == "53.496" and float(raw.group(2)) == doc["score"] == 53


def test_a_printed_score_stays_on_its_side_of_the_tier_threshold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under paper, a pallets__flask-5014 run scoring 46.994 printed "score 47.0 (lucky)" while
    Lucky is a pass below 47 (its tier reason said 46.99 < 47). The score line now prints the
    digits that keep it on its side of each threshold, as the tier reason does."""
    task = TRAJ / "pallets__flask-5014"
    run = task / "pallets__flask-5014-logs-gpt-5.2-codex-pass-25003569993_pta.json"
    ref = tmp_path / "ref.json"
    assert main(["reference", "build", str(task), "--profile", "paper", "-o", str(ref)]) == 0
    capsys.readouterr()
    assert main(["score", str(run), "--reference", str(ref)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "score 46.99 (lucky)" in out, out


def _stripped_to_the_start(run: Path, out: Path) -> Path:
    """A real passing run with every step but its initial state removed."""
    doc = json.loads(run.read_bytes())
    start = doc["initial_state"]
    doc["states"] = {start: doc["states"][start]}
    doc["transitions"], doc["branches"] = [], {}
    out.write_bytes(json.dumps(doc).encode())
    return out


def test_a_reference_with_nothing_to_compare_is_refused_and_warned_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Donors that recorded no labelled step made a 1-state reference without a word, and every
    run scored against it on its coherence alone (30.0 under `paper`)."""
    from agentlens.formats import read_path
    from agentlens.process.pta_io import reference_to_json
    from agentlens.process.reference import build_reference

    passing = sorted(REQUESTS.glob("*-pass-*_pta.json"))[:2]
    empty = [_stripped_to_the_start(p, tmp_path / f"e{i}_{p.name}") for i, p in enumerate(passing)]
    out = tmp_path / "ref.json"
    assert main(["reference", "build", *map(str, empty), "-o", str(out), "--k", "2"]) == 2
    err = capsys.readouterr().err
    assert "the reference holds only its start state" in err and "no reference written" in err
    assert not out.exists()
    saved = reference_to_json(build_reference([t for p in empty for t in read_path(p)], "paper"))
    out.write_bytes(json.dumps(saved).encode())
    assert main(["score", str(C1_RUN), "--reference", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"warning: {out}: the reference holds only its start state" in err, err


def test_label_help_speaks_of_labelers_not_composites(capsys: pytest.CaptureFixture[str]) -> None:
    """`label --help` described the calibrated composite's fitted weights: labelling scores
    nothing, and the only thing a profile changes here is the labeler."""
    assert main(["label", "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "composite" not in shown and "weights" not in shown
    assert "calibrated labels as paper does" in shown and "sdk-compat" in shown
