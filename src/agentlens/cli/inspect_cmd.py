"""`agentlens inspect PATH…` and `agentlens formats`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import click
import orjson
from rich.table import Table
from rich.text import Text

from agentlens.cli._app import WIDE, console
from agentlens.cli._inputs import read_options, report_failures, stream_inputs
from agentlens.compiled import status
from agentlens.formats import READERS
from agentlens.formats._unfinished import cut_at_line, cut_note
from agentlens.formats.registry import DESCRIPTIONS
from agentlens.list_text import counted
from agentlens.outcomes import UNEVALUATED
from agentlens.trajectory import Trajectory
from agentlens.visible_text import json_text, one_line


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="JSON Lines: one summary object per trajectory per line.",
)
@read_options
def inspect(
    paths: tuple[str, ...],
    as_json: bool,
    lenient: bool,
    format: str | None,
    labels: tuple[str, ...],
) -> int:
    """Summarise each trajectory found in PATHS.

    Per trajectory: format, task, model, outcome, steps by category, tokens, cost.

    PATHS may be files, directories (walked; sidecars such as READMEs and logs are skipped) or
    globs; a folder a glob names is walked whole (`runs/**/trajectories`). No walk or glob goes
    through a link to a folder you did not type (`--debug` names each one skipped). A file that
    cannot be read gets one line on stderr and the exit code is 1.
    `--json` writes JSON Lines to stdout (one object per trajectory), so it can be piped to `jq`.
    """
    stream = stream_inputs(paths, lenient=lenient, labels=labels, format=format)
    if as_json:
        for traj in stream:
            click.echo(json_text(orjson.dumps(summary(traj))))
    elif stream.count and console.width >= WIDE:
        console.print(summary_table(stream, stream.count))
    elif stream.count:
        print_summary_lines(stream, stream.count)
    return report_failures(stream)


def summary(traj: Trajectory) -> dict[str, object]:
    usage = traj.usage_known()  # None: the trace records no tokens, which is not 0 tokens
    return {
        "id": traj.id,
        "format": traj.source.format,
        "path": traj.source.path,
        "read_from": traj.source.read_from,
        "task_id": traj.task_id,
        "model": traj.model,
        "outcome": traj.outcome.status,
        "outcome_source": traj.outcome.source,
        "outcome_detail": traj.outcome.detail,
        "steps": len(traj.steps),
        "tool_calls": len(traj.tool_steps),
        "categories": dict(sorted(traj.category_counts().items())),
        "prompt_tokens": usage.prompt_tokens if usage else None,
        "completion_tokens": usage.completion_tokens if usage else None,
        "cached_tokens": usage.cached_tokens if usage else None,
        "cost": traj.cost_total(),
        "subtrajectories": len(traj.subtrajectories),
        "truncated": traj.metadata.get("truncated"),
    }


SHORT_CATEGORY = {
    "read_file": "read",
    "list_dir": "list",
    "create_file": "create",
    "run_command": "run",
}


def summary_table(trajectories: Iterable[Trajectory], count: int) -> Table:
    """One row per trajectory, kept short enough to read at 100 columns: categories by count with
    short names, tokens in k/M (`--json` has the exact figures). The table keeps its cells' text
    only, so a stream of trajectories passes through it one at a time."""
    table = Table(title=counted(count, "trajectory"))
    table.add_column("id", overflow="fold", ratio=3)
    table.add_column("format", overflow="fold", ratio=2)
    table.add_column("task", overflow="fold", ratio=2)
    table.add_column("model", overflow="fold", ratio=2)
    table.add_column("outcome", overflow="fold")
    table.add_column("steps", justify="right")
    table.add_column("tools by category", overflow="fold", ratio=3)
    table.add_column("tokens in/out", justify="right")
    table.add_column("cost", justify="right")
    for traj in trajectories:
        table.add_row(
            Text(one_line(traj.id)),
            Text(traj.source.format),
            Text(one_line(traj.task_id or "-")),
            Text(one_line(traj.model or "-")),
            outcome_text(traj),
            Text(
                f"{len(traj.steps)}{' (cut)' if cut_at_line(traj) else ''}{_subagents(traj, short=True)}"
            ),
            Text(category_text(traj)),
            Text(tokens_text(traj, "{}/{}")),
            Text(cost_text(traj)),
        )
    return table


def print_summary_lines(trajectories: Iterable[Trajectory], count: int) -> None:
    """The table's facts as four lines per trajectory, for narrow terminals and pipes, printed
    as each trajectory comes."""
    console.print(Text(counted(count, "trajectory"), style="bold"))
    for traj in trajectories:
        console.print(summary_block(traj))


def summary_block(traj: Trajectory) -> Text:
    block = Text(one_line(traj.id), style="bold")
    block.append("  ").append_text(outcome_text(traj))
    task, model = one_line(traj.task_id or "-"), one_line(traj.model or "-")
    block.append(f"\n  {traj.source.format} · task {task} · {model}")
    cut = cut_note(cut_at_line(traj))
    block.append(
        f"\n  {counted(len(traj.steps), 'step')}{cut}{_subagents(traj)} · tokens "
        f"{tokens_text(traj, '{} in, {} out')} · cost {cost_text(traj)}"
    )
    block.append(f"\n  tools: {category_text(traj) or 'none'}")
    return block


def _subagents(traj: Trajectory, *, short: bool = False) -> str:
    """` + 2 sub-agents (40 steps)` (`short`: ` +2 sub`): work the run's own steps do not count
    (a Claude Code `Task`, an ATIF hand-over), nested ones included."""
    subs = list(_nested(traj))
    if not subs:
        return ""
    if short:
        return f" +{len(subs)} sub"
    steps = sum(len(sub.steps) for sub in subs)
    return f" + {counted(len(subs), 'sub-agent')} ({counted(steps, 'step')})"


def _nested(traj: Trajectory) -> Iterator[Trajectory]:
    waiting = list(traj.subtrajectories)  # a stack, not recursion: nesting comes from the file
    while waiting:
        sub = waiting.pop()
        yield sub
        waiting += sub.subtrajectories


# why a SWE-bench summary never evaluated a run, by the list that names it
NOT_EVALUATED_WHY = {
    "empty_patch_ids": "empty patch",
    "incomplete_ids": "incomplete",
    "pending_ids": "pending",
}


def outcome_text(traj: Trajectory) -> Text:
    """`passed (report.json)`; a run its report never evaluated says so, why when the report
    says, and how it was counted (`--unevaluated`): `unknown (results.json: empty patch, not
    evaluated)`."""
    outcome = Text(traj.outcome.status)
    if traj.outcome.source:
        detail = traj.outcome.detail or ""
        said = ""
        if UNEVALUATED in detail:
            why = [w for key, w in NOT_EVALUATED_WHY.items() if f"({key}: {UNEVALUATED})" in detail]
            said = f": {', '.join([*why, UNEVALUATED])}"
        outcome.append(f" ({traj.outcome.source}{said})", style="dim")
    return outcome


def tokens_text(traj: Trajectory, shape: str) -> str:
    """Prompt and completion tokens in `shape`; `-` when the trace records none (not 0)."""
    usage = traj.usage_known()
    return (
        shape.format(human(usage.prompt_tokens), human(usage.completion_tokens)) if usage else "-"
    )


def cost_text(traj: Trajectory) -> str:
    cost = traj.cost_total()
    return f"${cost:.3f}" if cost is not None else "-"


def category_text(traj: Trajectory) -> str:
    """`run 9, read 4, …`: tool steps per category, most first (ties by name)."""
    counts = sorted(traj.category_counts().items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{SHORT_CATEGORY.get(name, name)} {count}" for name, count in counts)


def human(count: int) -> str:
    """A token count in the units a reader compares at a glance: 950, 258.5k, 1.2M."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


@click.command()
def formats() -> int:
    """List the trace formats AgentLens reads and what each takes.

    The `--format` names, in detection order; the last line says whether its readers run
    compiled."""
    for name in READERS:
        console.print(f"{name:18} {DESCRIPTIONS[name]}", markup=False, highlight=False)
    console.print(f"build: {status()}", markup=False, highlight=False)
    return 0
