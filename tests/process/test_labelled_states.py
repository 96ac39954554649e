"""The independent hand-labelled intent-stage set (issue 21, item 3): the drawn states, their
split, and the agreement arithmetic. The annotators' packets and raw labels live outside the repo;
`labelled_states/annotations.csv` appears once the labels are in."""

from __future__ import annotations

import csv
import hashlib
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from agentlens.process.labeler import state_indices
from tests.process.label_scripts import script

TABLES = Path(__file__).resolve().parent
STATES_CSV = TABLES / "labelled_states" / "states.csv"
ROUND_1, ROUND_2, ROUND_3, ROUND_4 = (
    "scripts/draw_label_states.py --seed 21",
    "scripts/extend_tune_states.py --seed 22",
    "scripts/draw_frozen_round3.py --seed 23",
    "scripts/draw_frozen_round4.py --seed 24",
)
# SHA-256 of the 279 frozen rows of states.csv as round 1 wrote them (`grep ',frozen,' | sha256sum`):
# later rounds add tune states only, so the frozen part must never change.
FROZEN_ROWS_SHA256 = "799c20164a6c020ba40ef0e4fe762883631d884d37c268a8ac90dc5f2d1175fd"
# The same for the 220 `frozen3` rows round 3 drew, before anyone looked at them.
FROZEN3_ROWS_SHA256 = "c35350822646e121c61f9a786db41fbaee358c5cef7192af01aa75935ac82a36"
# And for the 120 `frozen4` rows round 4 drew from the formats the labeler was never built on.
FROZEN4_ROWS_SHA256 = "0db19aaee27c24183790155ea37f7f1f0531355e3f006f800561bb7fc7226317"


@pytest.fixture(scope="module")
def states(data_dir: Path) -> list:
    return script("_labelset").read_states()


def test_the_states_table_is_well_formed(states: list) -> None:
    ids = [s.state_id for s in states]
    assert ids == [f"s{k:04d}" for k in range(1, len(states) + 1)]
    assert {s.drawn_by for s in states} == {ROUND_1, ROUND_2, ROUND_3, ROUND_4}
    first = [s for s in states if s.drawn_by == ROUND_1]
    assert [s.state_id for s in first] == ids[:480]
    frozen = sum(s.split == "frozen" for s in first)
    assert frozen == 279 and frozen / len(first) >= 0.55
    per_format = Counter(s.format for s in first)
    assert len(per_format) == 6 and min(per_format.values()) >= 15, per_format
    for fmt in per_format:  # every format is in both parts
        assert {s.split for s in first if s.format == fmt} == {"tune", "frozen"}, fmt
    assert max(Counter((s.path, s.record) for s in first).values()) <= 8


@pytest.mark.parametrize(
    ("split", "count", "digest"),
    [
        ("frozen", 279, FROZEN_ROWS_SHA256),
        ("frozen3", 220, FROZEN3_ROWS_SHA256),
        ("frozen4", 120, FROZEN4_ROWS_SHA256),
    ],
)
def test_the_frozen_parts_are_unchanged(states: list, split: str, count: int, digest: str) -> None:
    """Only the count, the ids and a digest are compared: frozen states are for measuring."""
    lines = STATES_CSV.read_text(encoding="utf-8").splitlines()
    frozen_lines = [line for line in lines if line.split(",")[1:2] == [split]]
    written = "".join(f"{line}\n" for line in frozen_lines).encode()
    assert len(frozen_lines) == count
    assert hashlib.sha256(written).hexdigest() == digest
    assert [s.state_id for s in states if s.split == split] == [
        line.split(",")[0] for line in frozen_lines
    ]


def test_round_2_adds_tune_states_from_non_frozen_files_only(states: list) -> None:
    later = [s for s in states if s.drawn_by == ROUND_2]
    assert len(later) >= 200 and {s.split for s in later} == {"tune"}
    assert not {s.path for s in later} & {s.path for s in states if s.split == "frozen"}
    assert len({(s.path, s.record, s.step_index) for s in states}) == len(states)


def test_round_3_is_a_fresh_frozen_part_from_never_drawn_files(states: list) -> None:
    earlier = [s for s in states if s.drawn_by in (ROUND_1, ROUND_2)]
    third = [s for s in states if s.drawn_by == ROUND_3]
    assert states[: len(earlier)] == earlier and {s.split for s in third} == {"frozen3"}
    assert 200 <= len(third) <= 240
    assert not {s.path for s in third} & {s.path for s in earlier}
    per_run = Counter((s.path, s.record) for s in third)
    assert max(per_run.values()) <= 8
    assert max(n for (path, _), n in per_run.items() if path.startswith("agentlens-bench")) <= 2


def test_round_4_draws_only_never_drawn_files_of_the_unseen_formats(states: list) -> None:
    fourth_script, first_script = script("draw_frozen_round4"), script("draw_label_states")
    earlier = [s for s in states if s.drawn_by != ROUND_4]
    fourth = [s for s in states if s.drawn_by == ROUND_4]
    assert states[: len(earlier)] == earlier and {s.split for s in fourth} == {"frozen4"}
    assert [s.state_id for s in fourth][:1] == ["s0961"] and len(fourth) == 120
    assert not {s.path for s in fourth} & {s.path for s in earlier}
    seen_folders = {f for source in first_script.SOURCES for f in source.folders}
    for state in fourth:
        assert state.path.startswith(f"{fourth_script.FOLDERS[state.format]}/"), state.state_id
        assert not any(state.path.startswith(f"{f}/") for f in seen_folders), state.state_id
    per_run = Counter((s.path, s.record) for s in fourth)
    assert max(per_run.values()) <= fourth_script.CAP == 6
    per_format = Counter(s.format for s in fourth)
    assert set(per_format) == set(fourth_script.FOLDERS), per_format
    # every thin format gives all it can (6 per run), SWE-agent takes the rest
    assert min(per_format.values()) >= 6 and per_format["swe-agent"] == 120 - sum(
        n for fmt, n in per_format.items() if fmt != "swe-agent"
    )


def test_redrawing_round_3_keeps_the_rows_around_it_in_place(states: list) -> None:
    rounds = script("_labelset")
    mine = [s for s in states if s.drawn_by == ROUND_3]
    assert rounds.rounds_before(states, 3) + mine + rounds.rounds_after(states, 3) == states
    assert {s.drawn_by for s in rounds.rounds_after(states, 3)} == {ROUND_4}


def test_every_state_is_a_tool_step_a_reader_can_see(states: list) -> None:
    labelset, draw = script("_labelset"), script("draw_label_states")
    for state in states:
        traj = labelset.trajectory_of(state)
        assert state.step_index in state_indices(traj), state
        assert draw.shows_its_call(traj.steps[state.step_index]), state


def test_splits_are_disjoint_by_trajectory_file(states: list) -> None:
    tune = {s.path for s in states if s.split == "tune"}
    frozen = {s.path for s in states if s.split == "frozen"}
    frozen3 = {s.path for s in states if s.split == "frozen3"}
    frozen4 = {s.path for s in states if s.split == "frozen4"}
    assert tune and frozen and frozen3 and frozen4
    assert not tune & frozen and not (tune | frozen) & frozen3
    assert not (tune | frozen | frozen3) & frozen4


def test_the_draw_is_reproducible_and_skips_the_dev_guideline_states(states: list) -> None:
    draw, extend = script("draw_label_states"), script("extend_tune_states")
    third, fourth = script("draw_frozen_round3"), script("draw_frozen_round4")
    first = draw.build_states(draw.SEED)
    assert first == [s for s in states if s.drawn_by == ROUND_1]
    second = extend.extra_states(first, extend.SEED)
    earlier = first + second + third.new_states(first + second, third.SEED)
    assert earlier + fourth.new_states(earlier, fourth.SEED) == states
    dev = draw.already_labelled()
    assert len(dev) == 90
    assert not dev & {(s.path, s.step_index) for s in states}


def test_cohen_kappa_on_a_hand_computable_table() -> None:
    """50 items: both yes 20, yes/no 5, no/yes 10, both no 15 -> p_o = 0.7, p_e = 0.5, kappa 0.4."""
    agreement = script("labelset_agreement")
    a = ["Y"] * 25 + ["N"] * 25
    b = ["Y"] * 20 + ["N"] * 5 + ["Y"] * 10 + ["N"] * 15
    assert agreement.cohen_kappa(a, b, ("Y", "N")) == pytest.approx(0.4)
    assert agreement.cohen_kappa(a, a, ("Y", "N")) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        agreement.cohen_kappa(a, b[:-1], ("Y", "N"))


def test_fleiss_kappa_on_the_textbook_table() -> None:
    """Fleiss (1971) as worked in Wikipedia's article: 10 items, 14 raters, 5 categories;
    P-bar = 0.378, P_e = 0.213, kappa = 0.210."""
    agreement = script("labelset_agreement")
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert agreement.fleiss_kappa(table) == pytest.approx(0.2099, abs=5e-4)
    two_raters = [[2, 0], [0, 2], [1, 1], [2, 0]]  # p-bar 0.75, shares 5/8 3/8 -> p_e 34/64
    assert agreement.fleiss_kappa(two_raters) == pytest.approx((0.75 - 34 / 64) / (1 - 34 / 64))


def test_wilson_interval_known_values() -> None:
    agreement = script("labelset_agreement")
    low, high = agreement.wilson(10, 10)
    assert low == pytest.approx(0.7225, abs=1e-4) and high == pytest.approx(1.0)
    low, high = agreement.wilson(0, 10)
    assert low == pytest.approx(0.0) and high == pytest.approx(0.2775, abs=1e-4)


def test_annotator_files_are_read_and_bad_rows_named(
    states: list, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Failure injection: a typo'd stage and an unknown id are named, the rest still counts."""
    agreement = script("labelset_agreement")
    ids = [s.state_id for s in states[:3]]
    for name, stages in (("ann1", "EIV"), ("ann2", "EVV")):
        (tmp_path / "labels" / name).mkdir(parents=True)
        rows = [f"{i},{st},high" for i, st in zip(ids, stages, strict=True)]
        (tmp_path / "labels" / name / "batch_01.csv").write_text(
            "state_id,stage,confidence\n" + "\n".join(rows) + "\ns9999,E,high\n"
        )
    (tmp_path / "labels" / "ann2" / "batch_02.csv").write_text(
        f"state_id,stage,confidence\n{states[3].state_id},X,low\n"
    )
    out = tmp_path / "annotations.csv"
    code = agreement.main(
        [
            "--labels-dir",
            str(tmp_path / "labels"),
            "--annotations",
            str(out),
            "--adjudication",
            str(tmp_path / "none.csv"),
        ]
    )
    printed = capsys.readouterr()
    assert code == 1
    assert "unknown state_id 's9999'" in printed.err and "stage 'X'" in printed.err
    assert "ann1 vs ann2: raw agreement 2/3" in printed.out
    with out.open() as handle:
        rows = {r["state_id"]: r for r in csv.DictReader(handle)}
    assert [rows[i]["adjudicated"] for i in ids] == ["E", "", "V"]
    assert (tmp_path / "to_adjudicate.csv").read_text().splitlines()[1] == f"{ids[1]},I,V"


ANNOTATIONS = TABLES / "labelled_states" / "annotations.csv"


def test_labeler_agreement_runs_on_the_annotations(
    states: list, capsys: pytest.CaptureFixture[str]
) -> None:
    agreement = script("labelset_agreement")
    with ANNOTATIONS.open() as handle:
        reader = csv.DictReader(handle)
        annotators = [c for c in reader.fieldnames or () if c not in ("state_id", "adjudicated")]
        rows = list(reader)
    assert len(annotators) >= 2
    assert [r["state_id"] for r in rows] == [s.state_id for s in states]
    assert all(r["adjudicated"] in ("", "E", "I", "V", "O") for r in rows)
    code = agreement.main(["--labeler", "paper"])
    printed = capsys.readouterr().out
    assert code == 0
    judged = Counter(
        s.split
        for s in states
        if any(r["state_id"] == s.state_id and r["adjudicated"] for r in rows)
    )
    for split in script("_labelset").SPLITS:
        if judged[split]:
            assert re.search(rf" {split}: \d+/{judged[split]} = ", printed), printed
        else:
            assert f" {split}: no adjudicated state" in printed


def test_rounds_are_merged_by_annotator(
    states: list, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Round 1 and round 2 folders and adjudication files feed one annotations table."""
    agreement = script("labelset_agreement")
    one, two = states[0].state_id, states[-1].state_id
    for folder, state, stages in (("labels", one, "EE"), ("labels2", two, "IV")):
        for name, stage in zip(("ann1", "ann2"), stages, strict=True):
            (tmp_path / folder / name).mkdir(parents=True)
            (tmp_path / folder / name / "batch_01.csv").write_text(
                f"state_id,stage,confidence\n{state},{stage},high\n"
            )
    (tmp_path / "adjudication2.csv").write_text(f"state_id,stage,reason\n{two},V,checks\n")
    out = tmp_path / "annotations.csv"
    arguments = ["--annotations", str(out), "--labels-dir", str(tmp_path / "labels")]
    arguments += ["--labels-dir", str(tmp_path / "labels2")]
    arguments += ["--adjudication", str(tmp_path / "adjudication.csv")]
    arguments += ["--adjudication", str(tmp_path / "adjudication2.csv")]
    assert agreement.main(arguments) == 0
    assert "ann1 vs ann2: raw agreement 1/2" in capsys.readouterr().out
    with out.open() as handle:
        rows = {r["state_id"]: r for r in csv.DictReader(handle)}
    assert len(rows) == len(states)
    assert (rows[one]["adjudicated"], rows[two]["adjudicated"]) == ("E", "V")
    assert (rows[two]["ann1"], rows[two]["ann2"]) == ("I", "V")


def test_each_split_is_reported_on_its_own(states: list) -> None:
    """Pairs are compared within a split and per format; tune states stand in for a frozen3 part."""
    agreement = script("labelset_agreement")
    tune = [s for s in states if s.split == "tune"]
    java = [s for s in tune if s.format == "swe-agent-java"][:2]
    codex = [s for s in tune if s.format == "codex"][:2]
    fresh = [replace(s, split="frozen3") for s in java + codex]
    first = dict.fromkeys((s.state_id for s in fresh), "E")
    second = {**first, java[1].state_id: "V"}
    lines = agreement.split_pairs_report(fresh, "frozen3", {"ann1": first, "ann2": second})
    assert lines[0].startswith("Split frozen3, ann1 vs ann2: raw agreement 3/4 = 75.0%")
    assert "Cohen's kappa 0.000" in lines[0]  # ann1 constant: p_e = p_o = 3/4
    assert lines[1].split()[:2] == ["codex", "raw"] and "2/2 = 100.0%" in lines[1]
    assert lines[2].split()[0] == "swe-agent-java" and "1/2 = 50.0%" in lines[2]
    assert agreement.split_pairs_report(fresh, "frozen3", {"ann1": first, "ann3": {}}) == []


def test_the_round_4_instructions_keep_the_guideline_and_name_other_tasks(tmp_path: Path) -> None:
    render = script("render_label_packets")
    render.write_readme(tmp_path, 6, 4)
    text = (tmp_path / "README_annotators4.md").read_text(encoding="utf-8")
    assert f"{tmp_path}/labels4/<annotator>/batch_NN.csv" in text and "batch_06.md" in text
    assert "## Tasks that are not GitHub issues" in text
    assert text.endswith(render.GUIDELINE.read_text(encoding="utf-8"))
    render.write_readme(tmp_path, 11, 3)
    assert "not GitHub issues" not in (tmp_path / "README_annotators3.md").read_text()


def test_changed_steps_counts_differing_stages_per_format_and_unmatched_steps() -> None:
    agreement = script("labelset_agreement")
    before = {("a.json", 0, 1): ("codex", "E"), ("a.json", 0, 2): ("codex", "I")}
    before |= {("b.jsonl", 1, 4): ("claude-code", "V"), ("c.json", 0, 1): ("codex", "O")}
    now = {**before, ("a.json", 0, 2): ("codex", "V"), ("b.jsonl", 1, 4): ("claude-code", "E")}
    del now[("c.json", 0, 1)]
    now[("d.json", 0, 3)] = ("codex", "E")
    changed, compared, unmatched = agreement.changed_steps(before, now)
    assert (changed, compared, unmatched) == (Counter({"codex": 1, "claude-code": 1}), 3, 2)
    line = agreement.changes_line(Path("old.csv"), changed, compared, unmatched)
    assert line == (
        "changed from old.csv: 2 of 3 steps (66.7%): claude-code 1, codex 1; "
        "2 steps in only one of the files"
    )


def test_corpus_labels_cover_every_tool_step_and_count_a_changed_one(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every run of round 1's sources is labelled; against a file with one stage flipped,
    exactly that step of that format is counted."""
    agreement = script("labelset_agreement")
    first = tmp_path / "first.csv"
    assert agreement.main(["--corpus-labels", str(first)]) == 0
    with first.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["format"] for r in rows} == {s.format for s in script("draw_label_states").SOURCES}
    assert {r["stage"] for r in rows} <= {"E", "I", "V", "O"}
    flipped = next(r for r in rows if r["format"] == "codex")
    flipped["stage"] = "O" if flipped["stage"] != "O" else "E"
    earlier = tmp_path / "earlier.csv"
    with earlier.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    arguments = ["--corpus-labels", str(tmp_path / "second.csv"), "--changed-from", str(earlier)]
    capsys.readouterr()
    assert agreement.main(arguments) == 0
    assert f": 1 of {len(rows):,} steps (0.0%): codex 1\n" in capsys.readouterr().out
