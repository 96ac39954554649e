#!/usr/bin/env python3
"""Draw the states of the independent hand-labelled intent-stage set and split them (issue 21).

    PYTHONPATH=src python scripts/draw_label_states.py [--seed 21] [--out PATH]

States are tool steps (`state_indices`) of the trajectories in the shared data, read through
AgentLens's own readers. Each format gets a quota; a format with too few usable steps gives what it
has and its remainder goes to AgentLens-Bench and SWE-agent Java. Within a format the runs are
interleaved by folder (task or model), at most `cap` states per run, and each run's picks rotate
over the early / middle / late third of its tool steps. States already in the dev guideline tables
(`tests/process/guideline_labels*.csv`, which the paper labeler was written against) are not drawn.

The split is by trajectory FILE, decided before any label exists: within each format the drawn
files are ordered by a seeded SHA-256 of their path and the first ones go to `tune` until it holds
~40 % of that format's states; the rest are `frozen`. Same seed, same data -> the same CSV.
"""

from __future__ import annotations

import csv
import hashlib
import random
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _labelset import REPO, State, data_dir, drawing_args, write_states

from agentlens.errors import AgentLensError
from agentlens.formats.load import iter_trace_paths, read_path
from agentlens.process.labeler import state_indices
from agentlens.trajectory import Step

SEED = 21
TUNE_SHARE = 0.4
SCRIPT = "scripts/draw_label_states.py"
# Traces published with their content replaced by placeholders (`[REDACTED_ARGUMENTS len=.. sha=..]`)
REDACTED = re.compile(r"\[REDACTED_[A-Z]+ len=\d+ sha=[0-9a-f]+\]")


@dataclass(frozen=True)
class Source:
    format: str
    folders: tuple[str, ...]
    quota: int
    cap: int  # most states from one run: ~5; 8 where the format has few runs, so it keeps its share
    absorbs: bool = False  # takes the remainder of formats that fall short


SOURCES = (
    Source("agentlens-bench", ("agentlens-bench-dev/trajectories",), 200, 5, absorbs=True),
    Source("swe-agent-java", ("swe-agent-java",), 80, 5, absorbs=True),
    Source("mini-swe-agent", ("mini-swe-agent-swebv", "formats/mini-swe-agent-fixtures"), 60, 8),
    Source("openhands", ("formats/openhands",), 50, 8),
    Source("claude-code", ("formats/claude-code",), 45, 8),
    Source("codex", ("formats/codex",), 45, 8),
)


@dataclass
class Run:
    path: str  # relative to the data folder
    record: int
    group: str
    candidates: list[int]
    picks: list[int] = field(default_factory=list)


def already_labelled() -> set[tuple[str, int]]:
    """(data-relative path, step) of the dev states the paper labeler's rules were written from."""
    seen: set[tuple[str, int]] = set()
    tables = REPO / "tests" / "process"
    with (tables / "guideline_labels.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            name = row["trajectory_file"]
            task = name.split("-logs-")[0]
            path = f"agentlens-bench-dev/trajectories/{task}/{name}"
            seen.add((path, int(row["step_index"])))
    with (tables / "guideline_labels_other_formats.csv").open(newline="") as handle:
        seen.update((row["path"], int(row["step_index"])) for row in csv.DictReader(handle))
    return seen


def read_runs(
    source: Source, excluded: set[tuple[str, int]], skip_files: frozenset[str] = frozenset()
) -> list[Run]:
    """Every top-level trajectory of the source with at least one tool step, the files in
    `skip_files` left unread; unreadable or non-trace files (reports, manifests) are skipped with
    one line on stderr."""
    root = data_dir()
    runs: list[Run] = []
    for path, _explicit in iter_trace_paths([root / f for f in source.folders]):
        relative = path.relative_to(root).as_posix()
        if relative in skip_files:
            continue
        try:
            trajectories = read_path(path)
        except AgentLensError as exc:
            print(f"skipped: {relative}: {exc}", file=sys.stderr)
            continue
        for record, traj in enumerate(trajectories):
            steps = [
                i
                for i in state_indices(traj)
                if (relative, i) not in excluded and shows_its_call(traj.steps[i])
            ]
            if steps:
                runs.append(Run(relative, record, str(Path(relative).parent), steps))
    return sorted(runs, key=lambda r: (r.path, r.record))


def shows_its_call(step: Step) -> bool:
    """False for a step whose call a reader cannot see: every argument is a placeholder."""
    values = [step.command or "", *_strings(step.arguments)]
    return any(REDACTED.sub("", value).strip() for value in values)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif value is not None:
        yield str(value)


def order_picks(run: Run, rng: random.Random, start: int, cap: int) -> list[int]:
    """Up to `cap` steps of the run, rotating early / middle / late thirds from `start`."""
    n = len(run.candidates)
    thirds = [run.candidates[n * k // 3 : n * (k + 1) // 3] for k in range(3)]
    for third in thirds:
        rng.shuffle(third)
    picks: list[int] = []
    turn = start
    while len(picks) < min(cap, n):
        third = thirds[turn % 3]
        if third:
            picks.append(third.pop())
        turn += 1
    return picks


def interleave(runs: list[Run], rng: random.Random) -> list[Run]:
    """Runs shuffled within their folder, then taken one folder after another."""
    groups: dict[str, list[Run]] = defaultdict(list)
    for run in runs:
        groups[run.group].append(run)
    queues = [groups[g] for g in sorted(groups)]
    for queue in queues:
        rng.shuffle(queue)
    rng.shuffle(queues)
    ordered: list[Run] = []
    while any(queues):
        for queue in queues:
            if queue:
                ordered.append(queue.pop(0))
    return ordered


def draw(source: Source, runs: list[Run], quota: int, seed: int) -> list[tuple[Run, int]]:
    """Round robin over the interleaved runs: each round takes one more pick from every run."""
    rng = random.Random(f"{seed}:{source.format}")
    ordered = interleave(runs, rng)
    for ordinal, run in enumerate(ordered):
        run.picks = order_picks(run, rng, ordinal % 3, source.cap)
    drawn: list[tuple[Run, int]] = []
    for round_ in range(source.cap):
        for run in ordered:
            if len(drawn) < quota and round_ < len(run.picks):
                drawn.append((run, run.picks[round_]))
    return drawn


def capacity(source: Source, runs: list[Run]) -> int:
    return sum(min(source.cap, len(r.candidates)) for r in runs)


def quotas(runs: dict[str, list[Run]], sources: tuple[Source, ...] = SOURCES) -> dict[str, int]:
    """Each format's quota, the shortfall of small formats spread over the absorbing ones."""
    result = {s.format: min(s.quota, capacity(s, runs[s.format])) for s in sources}
    shortfall = sum(s.quota for s in sources) - sum(result.values())
    absorbers = [s for s in sources if s.absorbs]
    for k, source in enumerate(absorbers):
        share = shortfall // len(absorbers) + (k < shortfall % len(absorbers))
        result[source.format] = min(
            result[source.format] + share, capacity(source, runs[source.format])
        )
    return result


def file_hash(seed: int, path: str) -> str:
    return hashlib.sha256(f"{seed}:{path}".encode()).hexdigest()


def split_files(drawn: list[tuple[Run, int]], seed: int) -> dict[str, str]:
    """tune for the first files in seeded-hash order until ~40 % of the format's states."""
    per_file = Counter(run.path for run, _ in drawn)
    target = round(TUNE_SHARE * len(drawn))
    split: dict[str, str] = {}
    tuned = 0
    for path in sorted(per_file, key=lambda p: file_hash(seed, p)):
        split[path] = "tune" if tuned < target else "frozen"
        tuned += per_file[path] if split[path] == "tune" else 0
    return split


def build_states(seed: int) -> list[State]:
    excluded = already_labelled()
    runs = {s.format: read_runs(s, excluded) for s in SOURCES}
    wanted = quotas(runs)
    rows: list[tuple[str, str, str, int, int]] = []
    for source in SOURCES:
        drawn = draw(source, runs[source.format], wanted[source.format], seed)
        split = split_files(drawn, seed)
        rows += [(split[r.path], source.format, r.path, r.record, step) for r, step in drawn]
    return numbered(rows, seed, f"{SCRIPT} --seed {seed}", first=1)


def numbered(
    rows: list[tuple[str, str, str, int, int]], seed: int, drawn_by: str, first: int
) -> list[State]:
    """States from (split, format, path, record, step) rows, numbered from `first` in a seeded
    order, so that ids tell nothing of format, file or split."""
    rows = sorted(rows, key=lambda row: (row[2], row[3], row[4]))
    random.Random(f"{seed}:ids").shuffle(rows)
    return [
        State(f"s{k:04d}", split, fmt, path, record, step, drawn_by)
        for k, (split, fmt, path, record, step) in enumerate(rows, start=first)
    ]


def summary(states: list[State]) -> str:
    table = Counter((s.format, s.split) for s in states)
    files = {s.split: {x.path for x in states if x.split == s.split} for s in states}
    lines = [f"{'format':16} {'tune':>5} {'frozen':>6} {'runs':>5}"]
    for source in SOURCES:
        runs = {(s.path, s.record) for s in states if s.format == source.format}
        tune, frozen = table[(source.format, "tune")], table[(source.format, "frozen")]
        lines.append(f"{source.format:16} {tune:5} {frozen:6} {len(runs):5}")
    tune = sum(v for (_, sp), v in table.items() if sp == "tune")
    lines.append(
        f"{'total':16} {tune:5} {len(states) - tune:6}   files tune/frozen: "
        f"{len(files.get('tune', ()))}/{len(files.get('frozen', ()))}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = drawing_args(__doc__, SEED, argv)
    if args is None:
        return 2
    states = build_states(args.seed)
    write_states(states, args.out)
    print(summary(states))
    print(f"wrote {len(states)} states to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
