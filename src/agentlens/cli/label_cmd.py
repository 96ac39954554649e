"""`agentlens label RUNS…`: the intent stage (E/I/V/O) of every tool step."""

from __future__ import annotations

import click
import orjson
from rich.table import Table
from rich.text import Text

from agentlens.cli._app import console
from agentlens.cli._inputs import file_options, report_failures, stream_inputs
from agentlens.cli._process_options import label_profile_option
from agentlens.list_text import counted
from agentlens.process.labeler import LabelProfile, label_trajectory
from agentlens.trajectory import Step, Trajectory
from agentlens.visible_text import inline, json_text

# what a row shows of a step's command: enough to see why it got its stage (`cat << EOF > t.py`)
ACTION_CHARS = 60


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per trajectory.")
@label_profile_option
@file_options
def label(
    paths: tuple[str, ...],
    as_json: bool,
    profile: LabelProfile,
    lenient: bool,
    format: str | None,
) -> int:
    """Label each tool step with its intent stage. Shows the input's own label when it has one."""
    stream = stream_inputs(paths, format=format, lenient=lenient)
    for traj in stream:
        rows = step_rows(traj, profile)
        if as_json:
            doc = {"id": traj.id, "path": traj.source.path, "profile": profile, "steps": rows}
            click.echo(json_text(orjson.dumps(doc)))
        else:
            console.print(label_table(traj, rows))
    return report_failures(stream)


def step_rows(traj: Trajectory, profile: LabelProfile) -> list[dict[str, object]]:
    """One dict per tool step: index, tool, canonical category, what it did (its command, else
    the files it named), stage, stored label (if any)."""
    rows = []
    for step, stage in zip(traj.steps, label_trajectory(traj, profile), strict=True):
        if stage is None:
            continue
        row: dict[str, object] = {
            "index": step.index,
            "tool": step.tool_name,
            "category": str(step.category) if step.category else None,
            "action": action(step),
            "stage": stage,
        }
        if step.stored_stage:
            row["stored"] = step.stored_stage
        rows.append(row)
    return rows


def label_table(traj: Trajectory, rows: list[dict[str, object]]) -> Table:
    stored = [r for r in rows if "stored" in r]
    same = sum(1 for r in stored if r["stored"] == r["stage"])
    caption = f"agrees with the stored labels on {same}/{len(stored)} steps" if stored else None
    table = Table(title=f"{traj.id} ({counted(len(rows), 'tool step')})", caption=caption)
    # a narrow terminal takes its width from the action alone: it is cut, the others stay whole
    for name in ("step", "tool", "category"):
        table.add_column(name, no_wrap=True)
    table.add_column("action", max_width=ACTION_CHARS)
    for name in ("stage",) + (("stored",) if stored else ()):
        table.add_column(name, no_wrap=True)
    for r in rows:
        shown = inline(str(r["action"] or "-")[: ACTION_CHARS * 2])
        cells: list[str | Text] = [
            str(r["index"]),
            str(r["tool"] or "-"),
            str(r["category"] or "-"),
        ]
        cells += [Text(shown, no_wrap=True, overflow="ellipsis"), str(r["stage"])]
        table.add_row(*cells, *([str(r.get("stored", ""))] if stored else []))
    return table


def action(step: Step) -> str | None:
    """What the step did, as the trace says (already redacted): its command, else the files it
    named."""
    return step.command or (" ".join(step.files) if step.files else None)
