#!/usr/bin/env python3
"""Agreement of the hand-labelled intent-stage set: annotators with each other, then a labeler.

    PYTHONPATH=src python scripts/labelset_agreement.py [--labels-dir DIR ...] [--adjudication CSV ...]
    PYTHONPATH=src python scripts/labelset_agreement.py --labeler paper   (or sdk-compat, all)

Reads `<labels-dir>/<annotator>/*.csv` (`state_id,stage,confidence`) of every labelling round
(by default `/work/labelset/labels`, `labels2` ... `labels4` for rounds 1-4, merged by annotator
name; the adjudication files likewise `adjudication.csv`, `adjudication2.csv` ... `adjudication4.csv`),
reports each annotator's coverage, pairwise Cohen's kappa, Fleiss' kappa (over the states every
annotator labelled), raw agreement and confusion matrices, then each pair's agreement and kappa on
each split apart (`tune`, `frozen`, round 3's `frozen3`, round 4's `frozen4` of the formats the
labeler was never built on) and per format, and writes
`tests/process/labelled_states/annotations.csv`: one column per annotator and the adjudicated stage, which is the annotators' label where they all
agree, the adjudication file's (`state_id,stage,reason`) where they do not, else empty. The states
still to adjudicate go to `<first labels-dir>/../to_adjudicate.csv` (outside the repository).

`--labeler PROFILE` reads `annotations.csv` and reports the labeler's agreement with the
adjudicated stages, each split apart (overall and per format, with a Wilson 95 % interval) and a
confusion matrix; only adjudicated states are labelled. The per-state mismatches are listed for the
tune part (`--mismatches tune`, the default); the first frozen round is spent (studied after it was
scored), so `--mismatches frozen` lists it too. The later frozen rounds (`frozen3`, `frozen4`) are
for measuring only: their mismatches are never listed. Exit 0 on success, 1 when an input row was bad or a state could not be labelled (each
named on one line), 2 when there is nothing to measure.

`--corpus-labels CSV` labels every tool step of every run the set was drawn from (round 1's six
sources) with the `paper` labeler and writes `format,path,record,step_index,stage`;
`--changed-from` an earlier such file counts the steps whose stage differs, per format. The
labeler is the one on `PYTHONPATH`, so an older checkout's `src` writes its labels:

    mkdir -p /tmp/before && git archive 8cd0407^1 src | tar -x -C /tmp/before
    PYTHONPATH=/tmp/before/src python scripts/labelset_agreement.py --corpus-labels /tmp/before.csv
    PYTHONPATH=src python scripts/labelset_agreement.py --corpus-labels /tmp/now.csv \
        --changed-from /tmp/before.csv
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import cast

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _labelset import (
    ANNOTATIONS_CSV,
    SPLITS,
    STAGES,
    State,
    adjudication_files,
    data_dir,
    labels_dirs,
    read_states,
    trajectory_of,
)

from agentlens.trajectory import Trajectory

CONFIDENCES = ("high", "medium", "low")
# splits already studied; a fresh frozen round is never listed state by state
SPENT_SPLITS = ("tune", "frozen")
Z95 = 1.959963984540054


# -- statistics ---------------------------------------------------------------------------------


def cohen_kappa(a: Sequence[str], b: Sequence[str], categories: Sequence[str] = STAGES) -> float:
    """(p_o - p_e) / (1 - p_e) for two raters over the same items; 1.0 when both are constant
    and equal (p_e = 1), where the formula is 0/0."""
    if len(a) != len(b) or not a:
        raise ValueError("Cohen's kappa needs two equally long, non-empty label lists")
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    count_a, count_b = Counter(a), Counter(b)
    expected = sum(count_a[c] * count_b[c] for c in categories) / (n * n)
    if expected == 1:
        return 1.0 if observed == 1 else 0.0
    return (observed - expected) / (1 - expected)


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa from an items x categories table of rater counts (same raters per item)."""
    raters = {sum(row) for row in counts}
    if len(raters) != 1 or not counts or min(raters) < 2:
        raise ValueError("Fleiss' kappa needs every item rated by the same number (>= 2) of raters")
    n, items = raters.pop(), len(counts)
    agreement = sum((sum(c * c for c in row) - n) / (n * (n - 1)) for row in counts) / items
    shares = [sum(row[j] for row in counts) / (items * n) for j in range(len(counts[0]))]
    expected = sum(p * p for p in shares)
    if expected == 1:
        return 1.0 if agreement == 1 else 0.0
    return (agreement - expected) / (1 - expected)


def wilson(hits: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion hits/n."""
    if n == 0:
        return (0.0, 1.0)
    p, z2 = hits / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def confusion(rows: Iterable[tuple[str, str]], title: tuple[str, str]) -> str:
    """A 4x4 table: rows are the first label, columns the second."""
    table = Counter(rows)
    head = f"{title[0]} \\ {title[1]}"
    lines = [f"  {head:>16} " + " ".join(f"{c:>5}" for c in STAGES)]
    for r in STAGES:
        lines.append(f"  {r:>16} " + " ".join(f"{table[(r, c)]:5d}" for c in STAGES))
    return "\n".join(lines)


def percent(hits: int, n: int) -> str:
    low, high = wilson(hits, n)
    share = hits / n if n else 0.0
    return f"{hits}/{n} = {share:.1%} (Wilson 95% CI {low:.1%}-{high:.1%})"


# -- reading the annotators' files --------------------------------------------------------------


@dataclass
class Labels:
    by_annotator: dict[str, dict[str, str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def read_labels(labels_dirs: Sequence[Path], known: set[str]) -> Labels:
    """Every round's files, one annotator's labels merged across rounds by folder name."""
    labels = Labels()
    for labels_dir in labels_dirs:
        for folder in sorted(p for p in labels_dir.iterdir() if p.is_dir()):
            mine = labels.by_annotator.setdefault(folder.name, {})
            for path in sorted(folder.glob("*.csv")):
                read_one_file(path, mine, known, labels.problems)
    return labels


def read_one_file(path: Path, into: dict[str, str], known: set[str], problems: list[str]) -> None:
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        problems.append(f"{path}: cannot read: {exc}")
        return
    for line, row in enumerate(rows, start=2):
        problem = row_problem(row, known, into)
        if problem:
            problems.append(f"{path}:{line}: {problem}")
        else:
            into[row["state_id"].strip()] = row["stage"].strip().upper()


def row_problem(row: dict[str, str], known: set[str], seen: dict[str, str]) -> str | None:
    state = (row.get("state_id") or "").strip()
    stage = (row.get("stage") or "").strip().upper()
    confidence = (row.get("confidence") or "").strip().lower()
    if state not in known:
        return f"unknown state_id {state!r}"
    if stage not in STAGES:
        return f"stage {stage!r} is not one of {', '.join(STAGES)}"
    if confidence not in CONFIDENCES:
        return f"confidence {confidence!r} is not one of {', '.join(CONFIDENCES)}"
    if state in seen and seen[state] != stage:
        return f"{state} labelled twice, {seen[state]} then {stage}"
    return None


def read_adjudication(
    paths: Sequence[Path], known: set[str], problems: list[str]
) -> dict[str, str]:
    """The adjudicated stages of every round's file that exists."""
    decided: dict[str, str] = {}
    for path in paths:
        if not path.is_file():
            continue
        with path.open(newline="", encoding="utf-8-sig") as handle:
            for line, row in enumerate(csv.DictReader(handle), start=2):
                state, stage = (row.get("state_id") or "").strip(), (row.get("stage") or "").strip()
                if state not in known or stage.upper() not in STAGES:
                    problems.append(f"{path}:{line}: bad row (state {state!r}, stage {stage!r})")
                else:
                    decided[state] = stage.upper()
    return decided


# -- annotator agreement ------------------------------------------------------------------------


def annotator_report(states: list[State], labels: dict[str, dict[str, str]]) -> list[str]:
    names = sorted(labels)
    total = Counter(s.split for s in states)
    out = ["Coverage (states labelled):"]
    for name in names:
        per_split = Counter(s.split for s in states if s.state_id in labels[name])
        parts = ", ".join(f"{sp} {per_split[sp]}/{total[sp]}" for sp in SPLITS if total[sp])
        out.append(f"  {name}: {len(labels[name])}/{len(states)} ({parts})")
    for a, b in combinations(names, 2):
        common = sorted(set(labels[a]) & set(labels[b]))
        if not common:
            continue
        xs, ys = [labels[a][s] for s in common], [labels[b][s] for s in common]
        agree = sum(x == y for x, y in zip(xs, ys, strict=True))
        out.append(
            f"{a} vs {b}: raw agreement {percent(agree, len(common))}, "
            f"Cohen's kappa {cohen_kappa(xs, ys):.3f}"
        )
        out.append(confusion(zip(xs, ys, strict=True), (a, b)))
    out += fleiss_report(states, labels)
    for split in SPLITS:
        out += split_pairs_report([s for s in states if s.split == split], split, labels)
    return out


def split_pairs_report(
    states: list[State], split: str, labels: dict[str, dict[str, str]]
) -> list[str]:
    """Each pair's agreement and Cohen's kappa on one split's states, overall and per format."""
    out: list[str] = []
    for a, b in combinations(sorted(labels), 2):
        common = [s for s in states if s.state_id in labels[a] and s.state_id in labels[b]]
        if not common:
            continue
        out.append(f"Split {split}, {a} vs {b}: {pair_agreement(common, labels[a], labels[b])}")
        for fmt in sorted({s.format for s in common}):
            mine = [s for s in common if s.format == fmt]
            out.append(f"    {fmt:16} {pair_agreement(mine, labels[a], labels[b])}")
    return out


def pair_agreement(states: list[State], first: dict[str, str], second: dict[str, str]) -> str:
    xs, ys = [first[s.state_id] for s in states], [second[s.state_id] for s in states]
    agree = sum(x == y for x, y in zip(xs, ys, strict=True))
    return f"raw agreement {percent(agree, len(xs))}, Cohen's kappa {cohen_kappa(xs, ys):.3f}"


def fleiss_report(states: list[State], labels: dict[str, dict[str, str]]) -> list[str]:
    if len(labels) < 2:
        return ["Fleiss' kappa: needs >= 2 annotators"]
    common = [s.state_id for s in states if all(s.state_id in mine for mine in labels.values())]
    if not common:
        return ["Fleiss' kappa: no state labelled by every annotator"]
    counts = [[sum(m[s] == c for m in labels.values()) for c in STAGES] for s in common]
    unanimous = sum(max(row) == len(labels) for row in counts)
    return [
        f"Fleiss' kappa over {len(common)} states labelled by all {len(labels)} annotators: "
        f"{fleiss_kappa(counts):.3f}; all agree on {percent(unanimous, len(common))}"
    ]


def adjudicate(
    states: list[State], labels: dict[str, dict[str, str]], decided: dict[str, str]
) -> dict[str, str]:
    """The adjudicated stage: the annotators' shared label (>= 2 of them, all agreeing), else
    the adjudication file's, else empty."""
    result: dict[str, str] = {}
    for state in states:
        given = {m[state.state_id] for m in labels.values() if state.state_id in m}
        count = sum(state.state_id in m for m in labels.values())
        if count >= 2 and len(given) == 1:
            result[state.state_id] = given.pop()
        else:
            result[state.state_id] = decided.get(state.state_id, "")
    return result


def write_annotations(
    path: Path, states: list[State], labels: dict[str, dict[str, str]], final: dict[str, str]
) -> None:
    names = sorted(labels)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["state_id", *names, "adjudicated"])
        for s in states:
            writer.writerow(
                [s.state_id, *(labels[n].get(s.state_id, "") for n in names), final[s.state_id]]
            )


def write_to_adjudicate(
    path: Path, states: list[State], labels: dict[str, dict[str, str]], final: dict[str, str]
) -> int:
    names = sorted(labels)
    open_states = [
        s
        for s in states
        if not final[s.state_id] and sum(s.state_id in labels[n] for n in names) >= 2
    ]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["state_id", *names])
        for s in open_states:
            writer.writerow([s.state_id, *(labels[n].get(s.state_id, "") for n in names)])
    return len(open_states)


# -- labeler agreement --------------------------------------------------------------------------


def read_annotations(path: Path) -> dict[str, str]:
    with path.open(newline="", encoding="utf-8") as handle:
        return {row["state_id"]: row["adjudicated"] for row in csv.DictReader(handle)}


def labeler_stages(states: Iterable[State], profile: str, problems: list[str]) -> dict[str, str]:
    """The profile's stage for each state; a state that cannot be labelled is named and skipped."""
    cache: dict[tuple[str, int], list[str | None]] = {}
    stages: dict[str, str] = {}
    for state in states:
        key = (state.path, state.record)
        try:
            if key not in cache:
                cache[key] = run_labels(state, profile)
            stage = cache[key][state.step_index]
        except Exception as exc:  # one state's failure must not hide the others' figures
            problems.append(
                f"failed: {state.state_id} ({state.path} step {state.step_index}): {exc}"
            )
            continue
        if stage:
            stages[state.state_id] = stage
    return stages


def run_labels(state: State, profile: str) -> list[str | None]:
    from agentlens.process.labeler import LabelProfile, label_trajectory

    labels = label_trajectory(trajectory_of(state), cast(LabelProfile, profile))
    return [str(stage) if stage else None for stage in labels]


def labeler_report(
    states: list[State],
    gold: dict[str, str],
    profile: str,
    problems: list[str],
    listed: Sequence[str] = ("tune",),
) -> list[str]:
    judged = [s for s in states if gold.get(s.state_id)]
    predicted = labeler_stages(judged, profile, problems)
    out = [f"Labeler '{profile}' against the adjudicated stages:"]
    for split in SPLITS:
        part = [s for s in judged if s.split == split and s.state_id in predicted]
        if not part:
            out.append(f" {split}: no adjudicated state")
            continue
        hits = sum(predicted[s.state_id] == gold[s.state_id] for s in part)
        out.append(f" {split}: {percent(hits, len(part))}")
        for fmt in sorted({s.format for s in part}):
            mine = [s for s in part if s.format == fmt]
            agree = sum(predicted[s.state_id] == gold[s.state_id] for s in mine)
            out.append(f"    {fmt:16} {percent(agree, len(mine))}")
        out.append(
            confusion(((gold[s.state_id], predicted[s.state_id]) for s in part), ("human", profile))
        )
        if split in listed:
            out += [
                f"    mismatch {s.state_id} {s.format} {s.path} step {s.step_index}: "
                f"human {gold[s.state_id]}, {profile} {predicted[s.state_id]}"
                for s in part
                if predicted[s.state_id] != gold[s.state_id]
            ]
    return out


def profiles(choice: str) -> list[str]:
    from agentlens.process.profiles import PROFILES

    return sorted(PROFILES) if choice == "all" else [choice]


# -- the labeler over every run the set was drawn from -------------------------------------------

CORPUS_FIELDS = ("format", "path", "record", "step_index", "stage")
StepKey = tuple[str, int, int]  # data-relative path, record in the file, step index


@dataclass
class Corpus:
    runs: int = 0
    not_traces: int = 0  # files under the sources no reader takes (READMEs, manifests)
    stages: dict[StepKey, tuple[str, str]] = field(default_factory=dict)  # -> (format, stage)


def corpus_stages(problems: list[str]) -> Corpus:
    """The `paper` stage of every tool step of every run in round 1's sources."""
    from draw_label_states import SOURCES

    from agentlens.errors import AgentLensError
    from agentlens.formats.load import iter_trace_paths, read_path

    corpus, root = Corpus(), data_dir()
    for source in SOURCES:
        for path, _explicit in iter_trace_paths([root / folder for folder in source.folders]):
            relative = path.relative_to(root).as_posix()
            try:
                runs = read_path(path)
            except AgentLensError:
                corpus.not_traces += 1
                continue
            corpus.runs += len(runs)
            for record, run in enumerate(runs):
                add_run_stages(corpus, source.format, (relative, record), run, problems)
    return corpus


def add_run_stages(
    corpus: Corpus, fmt: str, where: tuple[str, int], run: Trajectory, problems: list[str]
) -> None:
    from agentlens.process.labeler import label_trajectory

    try:
        stages = label_trajectory(run, "paper")
    except Exception as exc:  # one run's failure must not hide the others' steps
        problems.append(f"failed: {where[0]} record {where[1]}: {exc}")
        return
    for index, stage in enumerate(stages):
        if stage:
            corpus.stages[(*where, index)] = (fmt, str(stage))


def write_corpus(path: Path, stages: dict[StepKey, tuple[str, str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(CORPUS_FIELDS)
        for (relative, record, index), (fmt, stage) in stages.items():
            writer.writerow([fmt, relative, record, index, stage])


def read_corpus(path: Path) -> dict[StepKey, tuple[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return {
            (row["path"], int(row["record"]), int(row["step_index"])): (row["format"], row["stage"])
            for row in csv.DictReader(handle)
        }


def changed_steps(
    before: dict[StepKey, tuple[str, str]], now: dict[StepKey, tuple[str, str]]
) -> tuple[Counter[str], int, int]:
    """Per format, the steps both files label whose stage differs; how many steps both label;
    how many only one does (a reader change, not the labeler's)."""
    both = before.keys() & now.keys()
    changed = Counter(now[key][0] for key in both if before[key][1] != now[key][1])
    return changed, len(both), len(before.keys() ^ now.keys())


def changes_line(before: Path, changed: Counter[str], compared: int, unmatched: int) -> str:
    total = sum(changed.values())
    share = total / compared if compared else 0.0
    by_count = sorted(changed.items(), key=lambda item: (-item[1], item[0]))
    parts = ", ".join(f"{fmt} {count}" for fmt, count in by_count)
    line = f"changed from {before}: {total} of {compared:,} steps ({share:.1%}): {parts or 'none'}"
    return line + (f"; {unmatched} steps in only one of the files" if unmatched else "")


# -- command line -------------------------------------------------------------------------------


def run_annotators(args: argparse.Namespace, states: list[State], problems: list[str]) -> int:
    folders = [d for d in args.labels_dir or labels_dirs() if d.is_dir()]
    if not folders:
        print(
            f"error: no labels folder at {', '.join(map(str, args.labels_dir or labels_dirs()))}",
            file=sys.stderr,
        )
        return 2
    known = {s.state_id for s in states}
    labels = read_labels(folders, known)
    problems += labels.problems
    if not any(labels.by_annotator.values()):
        print(f"error: no labels under {', '.join(map(str, folders))}", file=sys.stderr)
        return 2
    decided = read_adjudication(args.adjudication or adjudication_files(), known, problems)
    final = adjudicate(states, labels.by_annotator, decided)
    print("\n".join(annotator_report(states, labels.by_annotator)))
    write_annotations(args.annotations, states, labels.by_annotator, final)
    pending_csv = folders[0].parent / "to_adjudicate.csv"
    pending = write_to_adjudicate(pending_csv, states, labels.by_annotator, final)
    done = sum(bool(v) for v in final.values())
    print(
        f"labels from {', '.join(map(str, folders))}; adjudicated {done}/{len(states)}; "
        f"{pending} disagreements to adjudicate ({pending_csv}); wrote {args.annotations}"
    )
    return 0


def run_labeler(args: argparse.Namespace, states: list[State], problems: list[str]) -> int:
    if not args.annotations.is_file():
        print(f"error: {args.annotations} not found; run without --labeler first", file=sys.stderr)
        return 2
    gold = read_annotations(args.annotations)
    if not any(gold.values()):
        print(f"error: no adjudicated stage in {args.annotations}", file=sys.stderr)
        return 2
    for profile in profiles(args.labeler):
        listed = args.mismatches or ["tune"]
        print("\n".join(labeler_report(states, gold, profile, problems, listed)))
    return 0


def run_corpus(args: argparse.Namespace, states: list[State], problems: list[str]) -> int:
    if not data_dir().is_dir():
        print(f"error: shared data not found at {data_dir()}; set AGENTLENS_DATA", file=sys.stderr)
        return 2
    corpus = corpus_stages(problems)
    write_corpus(args.corpus_labels, corpus.stages)
    print(
        f"{corpus.runs} runs, {len(corpus.stages):,} tool steps labelled by 'paper' "
        f"({corpus.not_traces} files no reader takes); wrote {args.corpus_labels}"
    )
    if args.changed_from:
        changed, compared, unmatched = changed_steps(read_corpus(args.changed_from), corpus.stages)
        print(changes_line(args.changed_from, changed, compared, unmatched))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--labels-dir", type=Path, action="append", help="repeatable; default: every round's"
    )
    parser.add_argument(
        "--adjudication", type=Path, action="append", help="repeatable; default: every round's"
    )
    parser.add_argument("--annotations", type=Path, default=ANNOTATIONS_CSV)
    parser.add_argument("--labeler", metavar="PROFILE", help="a labeling profile, or 'all'")
    parser.add_argument(
        "--mismatches",
        action="append",
        choices=SPENT_SPLITS,
        help="list the labeler's per-state mismatches of this spent split (repeatable; default tune)",
    )
    parser.add_argument(
        "--corpus-labels", type=Path, metavar="CSV", help="label every run the set was drawn from"
    )
    parser.add_argument(
        "--changed-from", type=Path, metavar="CSV", help="with --corpus-labels: an earlier file"
    )
    args = parser.parse_args(argv)
    if args.changed_from and not args.corpus_labels:
        parser.error("--changed-from needs --corpus-labels")
    states = read_states()
    problems: list[str] = []
    run = run_corpus if args.corpus_labels else run_labeler if args.labeler else run_annotators
    code = run(args, states, problems)
    for problem in problems:
        print(problem, file=sys.stderr)
    return code or (1 if problems else 0)


if __name__ == "__main__":
    sys.exit(main())
