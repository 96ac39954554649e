"""Render a trajectory as `[S<i>]` step lines within a token budget, keeping every step id.

Not a head/tail cut. Steps fall into classes kept in this order: the task, edits and their
results, test runs and their results, the final `git diff`, the last step, then the rest (errors,
agent messages, plain reads, listings; exact repeats last). A step that failed (the house's one
rule, `step_failure.failed`: code a result only shows is no error) is marked ` ERROR`. While
over budget, the lowest class is cut first, and fully before the next is touched: its steps are
shortened, then reduced to a brief line that keeps the result, then to one line, then runs of
one-line steps are folded into range lines such as `[S40–S55] 16 steps folded: read_file×10,
run_in_terminal×6 (2 errors)`. Every cut is marked (`…[N chars cut]…`, `[result cut]`,
`folded`) and every step id still appears, so evidence can cite it. Tokens are estimated as
⌈characters / 3.2⌉ (calibrated on the SmolLM2 tokenizer: a judge prompt of 8,225 characters was
2,590 tokens)."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

import orjson

from agentlens.redaction import clip_head, clip_tail
from agentlens.step_failure import failed
from agentlens.trajectory import Step, ToolCategory, Trajectory

# a command segment that runs tests (not one that greps for "pytest")
TEST_RUN = re.compile(
    r"^(?:timeout\s+\S+\s+)?(?:python[\d.]*\s+(?:-\w+\s+)*(?:-m\s+(?:pytest|unittest)\b|\S*test\w*\.py\b)"
    r"|pytest\b|tox\b|nox\b|mvn\b|gradle\b|\./gradlew\b|(?:npx\s+)?jest\b|npm\s+(?:run\s+)?test\b"
    r"|cargo\s+test\b|go\s+test\b)"
)
SEGMENTS = re.compile(r"&&|\|\||;|\|")
GIT_DIFF = re.compile(r"\bgit\s+(?:--no-pager\s+)?diff\b")
# level -> (text, args, observation) characters; level 3 is one line, without the result
LIMITS = {0: (1200, 600, 1500), 1: (200, 200, 240)}
BRIEF = 2  # one line that keeps the gist of the result
ONE_LINE = 3
TASK, EDIT, TEST, FINAL_DIFF, LAST, ERROR, AGENT, OTHER, REPEAT = 100, 90, 80, 75, 70, 50, 45, 30, 5
FOLD_CHUNK = 6
NOISE_ARGS = {"thought", "security_risk", "is_input", "impl_source", "confirmation_state"}
TASK_ABOVE = "(the task, shown above)"


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


def is_test_run(step: Step) -> bool:
    if step.kind != "tool" or not step.command:
        return False
    return any(TEST_RUN.match(part.strip()) for part in SEGMENTS.split(step.command))


def is_diff(step: Step) -> bool:
    return step.kind == "tool" and bool(step.command and GIT_DIFF.search(step.command))


def priority(step: Step, last_index: int, previous: Step | None, final_diff: int | None) -> int:
    """The step's class (higher is kept longer): the order of the module docstring."""
    if step.index == 0 or step.kind in ("user", "system"):
        return TASK
    if step.category in (ToolCategory.EDIT, ToolCategory.CREATE_FILE):
        return EDIT
    if is_test_run(step):
        return TEST
    if step.index == final_diff:
        return FINAL_DIFF
    if step.index == last_index:
        return LAST
    if previous is not None and _same_call(step, previous):
        return REPEAT
    if failed(step):
        return ERROR
    return AGENT if step.kind == "agent" else OTHER


def last_diff_step(steps: list[Step]) -> int | None:
    """The last `git diff` with output: the run's final diff as the agent itself showed it."""
    found = [s.index for s in steps if is_diff(s) and (s.observation or "").strip()]
    return found[-1] if found else None


def _same_call(a: Step, b: Step) -> bool:
    return a.kind == b.kind == "tool" and a.tool_name == b.tool_name and a.arguments == b.arguments


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    return (
        f"{clip_head(text, head)} …[{len(text) - limit} chars cut]… {clip_tail(text, limit - head)}"
    )


def render(step: Step, level: int, task_elsewhere: bool = False) -> str:
    err = " ERROR" if failed(step) else ""
    if step.index == 0 and task_elsewhere and step.kind == "user":
        return f"[S0] user: {TASK_ABOVE}"
    if step.kind != "tool":
        limit = 240 if level >= 2 else LIMITS[level][0]
        return f"[S{step.index}] {step.kind}: {_clip(step.text, limit)}"
    args = _arguments(step)
    if level == ONE_LINE:
        cut = " [result cut]" if step.observation else ""
        return f"[S{step.index}] {step.tool_name}{err} {_clip(step.command or args, 90)}{cut}"
    if level == BRIEF:
        return f"[S{step.index}] {step.tool_name}{err}: {_brief(step)}"
    text_cap, args_cap, obs_cap = LIMITS[level]
    parts = [f"[S{step.index}] tool {step.tool_name}{err}: {_clip(args, args_cap)}"]
    if step.text and text_cap:
        parts.append(f"  thought: {_clip(step.text, text_cap)}")
    if step.observation:
        parts.append(f"  result: {_clip(step.observation, obs_cap)}")
    return "\n".join(parts)


def _brief(step: Step) -> str:
    """What an edit changed, a test run's last line, a diff's size: the result in one line."""
    out = (step.observation or "").strip()
    if step.category in (ToolCategory.EDIT, ToolCategory.CREATE_FILE):
        path = step.files[0] if step.files else _clip(_arguments(step), 60)
        added = _added_line(step)
        return f"{path} {_clip(added, 70)} → {_clip(out, 40)} [cut]"
    what = _clip(step.command or _arguments(step), 70)
    if is_diff(step):
        lines = out.splitlines()
        plus = sum(x.startswith("+") and not x.startswith("+++") for x in lines)
        minus = sum(x.startswith("-") and not x.startswith("---") for x in lines)
        return f"{what} → +{plus} −{minus} lines [diff cut]"
    if is_test_run(step):
        last = next((x for x in reversed(out.splitlines()) if x.strip()), "")
        return f"{what} → …{_clip(last, 70)} [cut]"
    return f"{what} → {_clip(out, 60)} [cut]" if out else what


def _added_line(step: Step) -> str:
    """The first line an edit adds (new text not in the old), marked `+`."""
    args = step.arguments
    new = str(args.get("newString") or args.get("new_str") or args.get("content") or "")
    old = set(str(args.get("oldString") or args.get("old_str") or "").splitlines())
    added = [x.strip() for x in new.splitlines() if x.strip() and x not in old]
    return f"+{added[0]}" if added else ""


def _arguments(step: Step) -> str:
    """Tool arguments without the fields that repeat the thought or carry harness bookkeeping."""
    kept = {k: v for k, v in step.arguments.items() if k not in NOISE_ARGS}
    return orjson.dumps(kept).decode() if kept else ""


def fold(steps: list[Step]) -> str:
    first, last = steps[0].index, steps[-1].index
    names = Counter(s.tool_name or s.kind for s in steps)
    errors = sum(failed(s) for s in steps)
    what = ", ".join(f"{name}×{n}" for name, n in names.most_common())
    tail = f" ({errors} errors)" if errors else ""
    return f"[S{first}–S{last}] {len(steps)} steps folded: {what}{tail}"


@dataclass
class _Plan:
    """Each step's rendering level and cost, the folded runs and the running total."""

    steps: list[Step]
    prio: list[int]
    task_elsewhere: bool
    levels: list[int]
    cost: list[int]
    folded: dict[int, list[int]]
    in_fold: set[int]
    total: int = 0

    @classmethod
    def full(cls, steps: list[Step], prio: list[int], task_elsewhere: bool) -> _Plan:
        n = len(steps)
        plan = cls(steps, prio, task_elsewhere, [0] * n, [0] * n, {}, set())
        for i in range(n):
            plan.cost[i] = plan._cost(i, 0)
        plan.total = sum(plan.cost)
        return plan

    def _cost(self, i: int, level: int) -> int:
        return estimate_tokens(render(self.steps[i], level, self.task_elsewhere)) + 1

    def set_level(self, i: int, level: int) -> None:
        new = self._cost(i, level)
        self.total += new - self.cost[i]
        self.levels[i], self.cost[i] = level, new

    def fold(self, run: list[int]) -> None:
        line = estimate_tokens(fold([self.steps[j] for j in run])) + 1
        self.total += line - sum(self.cost[j] for j in run)
        self.folded[run[0]] = run
        self.in_fold.update(run)

    def lines(self) -> list[str]:
        out: list[str] = []
        for i, step in enumerate(self.steps):
            if i in self.folded:
                out.append(fold([self.steps[j] for j in self.folded[i]]))
            elif i not in self.in_fold:
                out.append(render(step, self.levels[i], self.task_elsewhere))
        return out


def compact(traj: Trajectory, budget_tokens: int, *, task_elsewhere: bool = False) -> Compacted:
    """Render `traj` within `budget_tokens` (estimated), keeping every step id.
    `task_elsewhere`: the prompt shows the task itself, so S0 only points to it."""
    steps = traj.steps
    final_diff = last_diff_step(steps)
    prio = [
        priority(s, len(steps) - 1, steps[i - 1] if i else None, final_diff)
        for i, s in enumerate(steps)
    ]
    plan = _Plan.full(steps, prio, task_elsewhere)
    original = estimate_tokens("\n".join(render(s, 0) for s in steps))
    _cut(plan, budget_tokens)
    text = "\n".join(plan.lines())
    folded = sum(len(r) for r in plan.folded.values())
    return Compacted(
        text=text,
        tokens=estimate_tokens(text),
        original_tokens=original,
        steps=len(steps),
        shortened=sum(0 < level < ONE_LINE for level in plan.levels),
        one_line=plan.levels.count(ONE_LINE) - folded,
        folded=folded,
    )


def _cut(plan: _Plan, budget: int) -> None:
    """The rest goes first, all the way to folded ranges, class by class. Only then are the kept
    classes cut, level by level across them (lowest class first within a level): every edit,
    test run and the final diff keep a brief line with their result before any loses it."""
    kept = [c for c in sorted(set(plan.prio)) if c >= LAST]
    for cls in sorted(set(plan.prio) - set(kept)):
        for level in range(1, ONE_LINE + 1):
            _cut_level(plan, [cls], level, budget)
        _fold_runs(plan, cls, budget)
    for level in range(1, ONE_LINE + 1):
        _cut_level(plan, [c for c in kept if c < TASK or level == 1], level, budget)
    for cls in kept:
        if cls < TASK:
            _fold_runs(plan, cls, budget)


def _cut_level(plan: _Plan, classes: list[int], level: int, budget: int) -> None:
    """Bring the steps of `classes` (lowest first; latest step first within one, since the
    start of a run sets the task up) down to `level`, until within budget."""
    for cls in classes:
        for i in reversed(range(len(plan.steps))):
            if plan.total <= budget:
                return
            if plan.prio[i] == cls and plan.levels[i] < level:
                plan.set_level(i, level)


def _fold_runs(plan: _Plan, cls: int, budget: int) -> None:
    """Fold runs of one-line steps of class ≤ `cls` (lowest mean class first) into range lines."""
    runs: list[list[int]] = []
    for i in range(len(plan.steps)):
        foldable = plan.levels[i] == ONE_LINE and plan.prio[i] <= cls
        foldable = foldable and i not in plan.in_fold
        if foldable and runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        elif foldable:
            runs.append([i])
    # Short chunks, so folding stops close to the budget and higher classes fold last.
    runs = [r[k : k + FOLD_CHUNK] for r in runs for k in range(0, len(r), FOLD_CHUNK)]
    for run in sorted(
        (r for r in runs if len(r) > 1), key=lambda r: sum(plan.prio[i] for i in r) / len(r)
    ):
        if plan.total <= budget:
            return
        plan.fold(run)
