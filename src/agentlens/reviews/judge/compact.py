"""Render a trajectory as `[S<i>]` step lines within a token budget, keeping every step id.

Not a head/tail cut. Each step has three renderings (full, short, one-line) and a priority from
what the rubrics need: the task and user turns, agent messages, edits, failing or erroring steps,
test runs and the last steps rank high; plain reads, listings and exact repeats rank low. While
over budget, steps are shortened lowest priority first (full → short), then reduced to one line,
then runs of consecutive one-line steps are folded into range lines such as
`[S40–S55] 16 steps folded: read_file×10, run_in_terminal×6 (2 errors)`, so every step id still
appears in the prompt and evidence can cite it. Tokens are estimated as ⌈characters / 3.2⌉
(calibrated on the SmolLM2 tokenizer: a judge prompt of 8,225 characters was 2,590 tokens)."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

import orjson

from agentlens.trajectory import Step, ToolCategory, Trajectory

ERROR_HINT = re.compile(
    r"Traceback|\bError\b|\berror:|Exception|FAILED|command not found|No such file|not found",
)
TEST_HINT = re.compile(r"\b(pytest|unittest|tox|mvn|gradle|jest|npm test|cargo test|go test)\b")
LIMITS = {0: (1200, 600, 1500), 1: (200, 200, 240)}  # level -> (text, args, observation) chars
PROTECTED = 100
FOLD_CHUNK = 6
NOISE_ARGS = {"thought", "security_risk", "is_input", "impl_source", "confirmation_state"}


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 3.2)


@dataclass
class Compacted:
    text: str
    tokens: int
    original_tokens: int
    steps: int
    shortened: int
    one_line: int
    folded: int

    @property
    def note(self) -> str:
        if self.shortened + self.one_line + self.folded == 0:
            return f"Full transcript: {self.steps} steps, ~{self.tokens} tokens."
        return (
            f"Transcript compacted from ~{self.original_tokens} to ~{self.tokens} tokens: "
            f"{self.shortened} steps shortened, {self.one_line} reduced to one line, "
            f"{self.folded} folded into ranges; every step id S0–S{self.steps - 1} is kept."
        )


def is_error(step: Step) -> bool:
    if step.is_error is not None:
        return step.is_error
    return bool(step.observation and ERROR_HINT.search(step.observation[:4000]))


def priority(step: Step, last_index: int, previous: Step | None) -> int:
    if step.kind in ("user", "system"):
        return PROTECTED
    if step.index >= last_index - 2:
        return 90
    if is_error(step):
        return 80
    if step.kind == "agent":
        return 70
    if step.category in (ToolCategory.EDIT, ToolCategory.CREATE_FILE, ToolCategory.FINISH):
        return 65
    if step.command and TEST_HINT.search(step.command):
        return 60
    if previous is not None and _same_call(step, previous):
        return 5
    return 30


def _same_call(a: Step, b: Step) -> bool:
    return a.kind == b.kind == "tool" and a.tool_name == b.tool_name and a.arguments == b.arguments


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    return f"{text[:head]} …[{len(text) - limit} chars cut]… {text[-(limit - head) :]}"


def render(step: Step, level: int) -> str:
    err = " ERROR" if is_error(step) else ""
    if step.kind != "tool":
        limit = 240 if level == 2 else LIMITS[level][0]
        return f"[S{step.index}] {step.kind}: {_clip(step.text, limit)}"
    args = _arguments(step)
    if level == 2:
        return f"[S{step.index}] {step.tool_name}{err} {_clip(step.command or args, 90)}"
    text_cap, args_cap, obs_cap = LIMITS[level]
    parts = [f"[S{step.index}] tool {step.tool_name}{err}: {_clip(args, args_cap)}"]
    if step.text:
        parts.append(f"  thought: {_clip(step.text, text_cap)}")
    if step.observation:
        parts.append(f"  result: {_clip(step.observation, obs_cap)}")
    return "\n".join(parts)


def _arguments(step: Step) -> str:
    """Tool arguments without the fields that repeat the thought or carry harness bookkeeping."""
    kept = {k: v for k, v in step.arguments.items() if k not in NOISE_ARGS}
    return orjson.dumps(kept).decode() if kept else ""


def fold(steps: list[Step]) -> str:
    first, last = steps[0].index, steps[-1].index
    names = Counter(s.tool_name or s.kind for s in steps)
    errors = sum(is_error(s) for s in steps)
    what = ", ".join(f"{name}×{n}" for name, n in names.most_common())
    tail = f" ({errors} errors)" if errors else ""
    return f"[S{first}–S{last}] {len(steps)} steps folded: {what}{tail}"


def compact(traj: Trajectory, budget_tokens: int) -> Compacted:
    """Render `traj` within `budget_tokens` (estimated), keeping every step id."""
    steps = traj.steps
    last = len(steps) - 1
    prio = [priority(s, last, steps[i - 1] if i else None) for i, s in enumerate(steps)]
    levels = [0] * len(steps)
    cost = [estimate_tokens(render(s, 0)) + 1 for s in steps]
    total = sum(cost)
    original = estimate_tokens("\n".join(render(s, 0) for s in steps))
    order = sorted(range(len(steps)), key=lambda i: (prio[i], -i))
    for level in (1, 2):
        for i in order:
            if total <= budget_tokens:
                break
            if prio[i] >= PROTECTED and level == 2:
                continue
            new = estimate_tokens(render(steps[i], level)) + 1
            total += new - cost[i]
            cost[i], levels[i] = new, level
    lines, folded = _fold_runs(steps, levels, prio, cost, total, budget_tokens)
    text = "\n".join(lines)
    return Compacted(
        text=text,
        tokens=estimate_tokens(text),
        original_tokens=original,
        steps=len(steps),
        shortened=levels.count(1),
        one_line=levels.count(2) - folded,
        folded=folded,
    )


def _fold_runs(
    steps: list[Step], levels: list[int], prio: list[int], cost: list[int], total: int, budget: int
) -> tuple[list[str], int]:
    """Fold runs of one-line, unprotected steps (lowest mean priority first) until within budget."""
    runs: list[list[int]] = []
    for i in range(len(steps)):
        foldable = levels[i] == 2 and prio[i] < 90
        same_band = runs and (prio[runs[-1][-1]] >= 60) == (prio[i] >= 60)
        if foldable and runs and runs[-1][-1] == i - 1 and same_band:
            runs[-1].append(i)
        elif foldable:
            runs.append([i])
    # Short chunks, so folding stops close to the budget and high-priority steps fold last.
    runs = [r[k : k + FOLD_CHUNK] for r in runs for k in range(0, len(r), FOLD_CHUNK)]
    runs = [r for r in runs if len(r) > 1]
    folded_at: dict[int, list[int]] = {}
    for run in sorted(runs, key=lambda r: sum(prio[i] for i in r) / len(r)):
        if total <= budget:
            break
        line_cost = estimate_tokens(fold([steps[i] for i in run])) + 1
        total += line_cost - sum(cost[i] for i in run)
        folded_at[run[0]] = run
    lines: list[str] = []
    skip: set[int] = set()
    for i, step in enumerate(steps):
        if i in skip:
            continue
        if i in folded_at:
            run = folded_at[i]
            lines.append(fold([steps[j] for j in run]))
            skip.update(run)
        else:
            lines.append(render(step, levels[i]))
    return lines, sum(len(r) for r in folded_at.values())
