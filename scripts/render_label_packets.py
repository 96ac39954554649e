#!/usr/bin/env python3
"""Render the annotation packets of the hand-labelled intent-stage set (issue 21, item 3).

    PYTHONPATH=src python scripts/render_label_packets.py [--out /work/labelset] [--batch 20]
        [--round 2]

Each state of `tests/process/labelled_states/states.csv` is shown as `labeling-guideline.md`
describes: the task, the earlier steps in short form, and the step in full (tool, arguments,
first 500 characters of its result). A state is rendered from the canonical step's call fields
only (tool name, arguments, command, files, thought, observation): never `Step.raw`,
`stored_stage`, the outcome, the file name or any labeler output. The packets live OUTSIDE the
repository (they hold trace text); the batches mix tune and frozen states in a seeded order.
`--round N` renders only the states drawn in round N (`extend_tune_states.py` is round 2,
`draw_frozen_round3.py` round 3, `draw_frozen_round4.py` round 4) into `<out>/packetsN/`, with
`<out>/README_annotatorsN.md` pointing the answers to `<out>/labelsN/`.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _labelset import REPO, WORK, State, read_states, round_of, round_suffix, trajectory_of

from agentlens.process.labeler import state_indices
from agentlens.trajectory import Step, Trajectory

SEED = 21
TASK_CHARS = 1500
LINE_CHARS = 160
THOUGHT_LINE_CHARS = 110
THOUGHT_CHARS = 500
VALUE_CHARS = 800
RESULT_CHARS = 500
HEAD_STEPS, TAIL_STEPS = 10, 26
THOUGHT_TAIL = 6  # earlier steps that also show the agent's thought as one short line
# Call metadata that says nothing about intent (OpenHands / swe-trace-sdk bookkeeping).
QUIET_ARGUMENTS = {
    "thought",
    "impl_source",
    "security_risk",
    "confirmation_state",
    "is_static",
    "hidden",
    "blocking",
    "is_input",
}
KEY_ARGUMENTS = ("filePath", "file_path", "path", "filename", "file", "pattern", "query", "code")
DEMONSTRATION = "Here is a demonstration of how to correctly accomplish this task."
GUIDELINE = REPO.parent / "shared" / "docs" / "labeling-guideline.md"


def one_line(text: str, limit: int) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def cut(text: str, limit: int, what: str) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {what} cut here: {len(text) - limit:,} more characters ...]"


def block(text: str) -> str:
    return "\n".join(f"  | {line}" for line in text.splitlines() or [""])


def task_text(traj: Trajectory) -> str:
    """The user messages before the first tool call (SWE-agent's demonstration left out)."""
    first_tool = next((s.index for s in traj.steps if s.kind == "tool"), len(traj.steps))
    said = [
        s.text
        for s in traj.steps[:first_tool]
        if s.kind == "user" and s.text.strip() and not s.text.startswith(DEMONSTRATION)
    ]
    text = "\n\n".join(said) or traj.task or ""
    return (
        cut(text.strip(), TASK_CHARS, "task") if text.strip() else "(no task message in this trace)"
    )


def loud_arguments(step: Step) -> dict[str, Any]:
    return {
        k: v
        for k, v in step.arguments.items()
        if k not in QUIET_ARGUMENTS and v not in (None, "", False, [], {})
    }


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def key_argument(step: Step) -> str:
    if step.command:
        return step.command
    arguments = loud_arguments(step)
    for key in KEY_ARGUMENTS:
        if key in arguments:
            return as_text(arguments[key])
    if step.files:
        return ", ".join(step.files)
    return as_text(arguments) if arguments else ""


def short_step(number: int, step: Step) -> str:
    return one_line(f"#{number} {step.tool_name or 'tool'}: {key_argument(step)}", LINE_CHARS)


def history_lines(traj: Trajectory, upto: int) -> list[str]:
    """One line per earlier tool step (and later user / agent messages), thoughts for the last few."""
    tools = state_indices(traj)
    lines: list[list[str]] = []  # one group per earlier step, so elision never splits a step
    first_tool = tools[0] if tools else upto
    for step in traj.steps[first_tool:upto]:
        if step.kind == "tool":
            lines.append([short_step(tools.index(step.index) + 1, step)])
            if step.text.strip() and step.index >= _thought_from(tools, upto):
                thought = re.sub(r"^\s*DISCUSSION\s*", "", step.text)
                lines[-1].insert(0, "   " + one_line(f"(thought) {thought}", THOUGHT_LINE_CHARS))
        elif step.kind in ("user", "agent") and step.text.strip():
            lines.append(["   " + one_line(f"({step.kind} message) {step.text}", LINE_CHARS)])
    if len(lines) > HEAD_STEPS + TAIL_STEPS:
        hidden = len(lines) - HEAD_STEPS - TAIL_STEPS
        lines = [*lines[:HEAD_STEPS], [f"[... {hidden} earlier steps ...]"], *lines[-TAIL_STEPS:]]
    return [line for group in lines for line in group]


def _thought_from(tools: list[int], upto: int) -> int:
    earlier = [i for i in tools if i < upto]
    return earlier[-THOUGHT_TAIL] if len(earlier) >= THOUGHT_TAIL else 0


def step_in_full(traj: Trajectory, step: Step) -> list[str]:
    number = state_indices(traj).index(step.index) + 1
    lines = [f"### The step to label: step #{number}", f"Tool: {step.tool_name or 'tool'}"]
    if step.text.strip():
        lines += [
            "Agent's words before the call:",
            block(cut(step.text.strip(), THOUGHT_CHARS, "text")),
        ]
    arguments = loud_arguments(step)
    if step.command and not any(as_text(v) == step.command for v in arguments.values()):
        arguments = {"command": step.command, **arguments}
    lines.append("Arguments:" if arguments else "Arguments: (none)")
    for key, value in arguments.items():
        lines += [f"  {key}:", block(cut(as_text(value), VALUE_CHARS, key))]
    result = step.observation or ""
    error = " (the tool reported an error)" if step.is_error else ""
    shown = f"first {RESULT_CHARS} characters" if len(result) > RESULT_CHARS else "whole"
    lines.append(f"Result ({shown}){error}:" if result else f"Result: (empty){error}")
    if result:
        lines.append(block(result[:RESULT_CHARS]))
    return lines


def render_state(state: State) -> str:
    traj = trajectory_of(state)
    step = traj.steps[state.step_index]
    history = history_lines(traj, state.step_index) or ["(none: this is the first step)"]
    parts = [
        f"## State {state.state_id}",
        "",
        "### Task",
        block(task_text(traj)),
        "",
        "### Earlier steps (short form)",
        *history,
        "",
        *step_in_full(traj, step),
        "",
        f"(Label state {state.state_id}: one of E, I, V, O, with confidence high/medium/low.)",
        "",
        "---",
        "",
    ]
    return "\n".join(parts)


def batches(states: list[State], size: int, seed: int) -> list[list[State]]:
    """States in a seeded random order, tune and frozen mixed, cut into batches of `size`."""
    ordered = sorted(states, key=lambda s: s.state_id)
    random.Random(f"{seed}:batches").shuffle(ordered)
    return [ordered[k : k + size] for k in range(0, len(ordered), size)]


def write_packets(states: list[State], packets: Path, size: int, seed: int) -> int:
    if packets.exists():
        shutil.rmtree(packets)
    packets.mkdir(parents=True)
    total = 0
    groups = batches(states, size, seed)
    for number, group in enumerate(groups, start=1):
        ids = ", ".join(s.state_id for s in group)
        head = f"# Batch {number:02d} of {len(groups)}: {len(group)} states\n\nStates: {ids}\n\n---\n\n"
        text = head + "".join(render_state(s) for s in group)
        (packets / f"batch_{number:02d}.md").write_text(text, encoding="utf-8")
        total += len(text)
    return total


def write_readme(out: Path, n_batches: int, number: int) -> None:
    guideline = GUIDELINE.read_text(encoding="utf-8")
    suffix = round_suffix(number)
    answer = ANSWER_FORMAT.format(n=n_batches, last=f"{n_batches:02d}", out=out, round=suffix)
    (out / f"README_annotators{suffix}.md").write_text(
        "# Labelling intent stages: instructions for annotators\n\n"
        + answer
        + ROUND_NOTES.get(number, "")
        + "\n## The guideline (verbatim from labeling-guideline.md)\n\n"
        + guideline,
        encoding="utf-8",
    )


ANSWER_FORMAT = """\
You label the intent stage of single steps of coding-agent runs. The packets are
`{out}/packets{round}/batch_01.md` ... `batch_{last}.md` ({n} batches of about 20 states). Each state shows
the task, the earlier steps in short form (one line per step; `(thought)` lines are the agent's own
words before a step; `[... N earlier steps ...]` marks a shortened history), and the step to label in
full: tool, arguments and the first 500 characters of its result. Label each state on its own, using
only the guideline below and what the state shows. Work independently: do not look at other
annotators' files, at any program's labels, or at the traces or code anywhere else.

## Answer format

For each packet `batch_NN.md` write `{out}/labels{round}/<annotator>/batch_NN.csv` (`<annotator>` is the
name you were given; create the folder), UTF-8, with the header and one row per state of that batch:

    state_id,stage,confidence
    s0123,E,high
    s0456,V,medium

- `stage`: exactly one of `E`, `I`, `V`, `O` (Exploration, Implementation, Verification, Orchestration).
- `confidence`: `high`, `medium` or `low` (lower it when the intent is truly ambiguous).
- Every state id listed at the top of the batch gets exactly one row; nothing else in the file.
"""


# Round 4 draws from other agents (CLI sessions, CTF challenges, toy tasks), whose tasks are often
# no GitHub issue; the annotators are told the stages still apply as written.
ROUND_NOTES = {
    4: """
## Tasks that are not GitHub issues

These states come from several other coding agents and trace formats: command-line assistant
sessions (a user's request in a chat), small terminal tasks, and SWE-agent runs on GitHub issues and
on capture-the-flag challenges. Where the task is not a GitHub issue, the packet still shows the
task text as the trace gives it (or says that the trace has none). The guideline's intent stages
still apply as written: label the intent of the one step in the context of its task and history.
"""
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=WORK)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--round", type=int, default=1, help="render only this round's states")
    args = parser.parse_args(argv)
    states = [s for s in read_states() if round_of(s) == args.round]
    if not states:
        print(f"error: no states drawn in round {args.round}", file=sys.stderr)
        return 2
    suffix = round_suffix(args.round)
    packets = args.out / f"packets{suffix}"
    total = write_packets(states, packets, args.batch, args.seed)
    n_batches = -(-len(states) // args.batch)
    write_readme(args.out, n_batches, args.round)
    print(f"{len(states)} states in {n_batches} packets under {packets}: {total:,} characters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
