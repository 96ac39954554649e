"""`agentlens stepvalue TRAJ… --candidates … --evaluator MODEL --channels …` (= `stepvalue
evaluate`), `agentlens stepvalue adapt TRACES… --candidates outcome -o OUT.asv.jsonl`, and
`agentlens stepvalue adapt-open-qa TASKS.jsonl TRACES… -o OUT.asv.jsonl`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from agentlens.cli._app import console, err_console, say
from agentlens.cli._help_sections import SectionedCommand
from agentlens.cli._inputs import load_inputs, report_failures
from agentlens.cli._store_option import label_option, save_run, store_option
from agentlens.errors import ConfigError
from agentlens.formats.load import ReadResult
from agentlens.list_text import counted
from agentlens.stepvalue.dump import PROMPTS_ONLY, write_prompts
from agentlens.stepvalue.model import Problem
from agentlens.stepvalue.openqa import join, load_tasks
from agentlens.stepvalue.outputs import write_outputs
from agentlens.stepvalue.records import stepvalue_run
from agentlens.stepvalue.request import EvaluateRequest, evaluate_request, work_done
from agentlens.stepvalue.schema import write_asv
from agentlens.stepvalue.sources import build_problems

F = TypeVar("F", bound=Callable[..., Any])


class _EvaluateByDefault(click.Group):
    """`stepvalue ARGS` means `stepvalue evaluate ARGS` unless ARGS start with a subcommand;
    bare `stepvalue` and `stepvalue --help` show the group's help, which lists both."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["evaluate", *args]
        return super().parse_args(ctx, args)


def _source_options(command: F) -> F:
    """Where candidates and gold come from, shared by `evaluate` and `adapt`."""
    options = (
        click.option(
            "--runs", multiple=True, help="Other runs of the task (fault-localisation candidates)."
        ),
        click.option(
            "--reference", default=None, help="Reference JSON for the gold file, or 'auto'."
        ),
        click.option(
            "--repo",
            default=None,
            type=click.Path(file_okay=False),
            help="Checkout of the task's repository: fault-localisation candidates are its "
            "git-tracked files (default: files the runs read or edit and none creates).",
        ),
        click.option(
            "--labels", multiple=True, help="Outcome sidecar: results.json, report, CSV, logs dir."
        ),
        click.option(
            "--max-steps",
            type=click.IntRange(min=1),
            default=None,
            help="Use only the first N steps.",
        ),
    )
    for option in reversed(options):
        command = option(command)
    return command


@click.group(cls=_EvaluateByDefault)
def stepvalue() -> None:
    """What each step of a run was worth (Agent Step Value). Commands: `evaluate` (the
    default), `adapt` and `adapt-open-qa`."""


EVALUATE_SECTIONS = {
    "What is scored": ("candidates", "runs", "reference", "repo", "labels", "max_steps"),
    "Evaluator and prompts": (
        "evaluator", "channels", "permutations", "slices", "rationale_tokens", "label_scheme",
        "direct_layout", "leak_policy", "fallback_policy", "concurrency", "no_cache",
    ),
    "Step value and audit": ("lam", "cost_weights", "audit_n"),
    "Output": ("outdir", "dump_dir", "store_url", "run_label"),
}  # fmt: skip


@stepvalue.command("evaluate", cls=SectionedCommand, sections=EVALUATE_SECTIONS)
@click.argument("paths", nargs=-1)
@click.option(
    "--candidates",
    required=True,
    help="fault-localisation, outcome, or an asv.v1 JSONL file (open-QA candidate sets).",
)
@click.option(
    "--evaluator",
    default=None,
    help="Model string or role, e.g. llamacpp:/m.gguf; `provided` scores the beliefs an asv.v1 "
    "file's steps already carry (no LLM). Needed unless --dump-prompts.",
)
@click.option(
    "--channels",
    default="direct,generated-rationale-128,extractive-buffer",
    show_default=True,
    help="Comma list: direct, generated-rationale-128/-512, swapped-rationale-128, "
    "extractive-buffer, candidate-only-rationale.",
)
@click.option(
    "--permutations",
    "-b",
    default=4,
    show_default=True,
    type=click.IntRange(min=1),
    help="Cyclic label rotations B.",
)
@click.option(
    "--slices", default="full", show_default=True, help="full,evidence-only,agent-output-only"
)
@click.option("--out", "outdir", default="stepvalue-out", show_default=True, type=click.Path(),
              help="Folder for the step rows, tables and report.md.")  # fmt: skip
@_source_options
@click.option(
    "--rationale-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Override the 128-token length.",
)
@click.option(
    "--leak-policy",
    type=click.Choice(["error", "warn"]),
    default="error",
    show_default=True,
    help="A rationale that leaks an option label or the gold: stop, or flag the state.",
)
@click.option(
    "--label-scheme",
    type=click.Choice(["letters", "numeric"]),
    default="letters",
    show_default=True,
    help="Default option labels A, B, C, … or 1, 2, 3, … (numeric: at most 9 candidates, one "
    "digit each; an asv.v1 candidate's own label wins).",
)
@click.option(
    "--direct-layout",
    type=click.Choice(["mapping-last", "options"]),
    default="mapping-last",
    show_default=True,
    help="Direct prompt: candidates by id with the label mapping last (prefix-cache friendly), "
    "or the spec's 'A: id - text' option list before the evidence.",
)
@click.option(
    "--fallback-policy",
    type=click.Choice(["floor", "error"]),
    default="floor",
    show_default=True,
    help="A label absent from the top-k list: score it at the floor (flagged) or stop.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=None,
    help="States in flight (default 1 local, 4 remote).",
)
@click.option(
    "--audit-n",
    default=100,
    show_default=True,
    type=click.IntRange(min=0),
    help="Transitions per audit sample.",
)
@click.option(
    "--lambda",
    "lam",
    type=float,
    default=0.0,
    show_default=True,
    help="λ of net_asv = ΔH − λ·C (spec §6.1).",
)
@click.option(
    "--cost-weights",
    default="",
    help="Weights of the step cost C, e.g. p=1,c=2,t=0.1,l=0.01,r=1 (per 1000 prompt / completion "
    "tokens, per tool call, per second, per risk unit); unset weights are 0.",
)
@click.option("--no-cache", is_flag=True, help="Do not use the LLM response cache.")
@click.option(
    "--dump-prompts",
    "dump_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Write the exact prompts (redacted, as sent) to DIR/<trajectory>/<slice>.state-NNN."
    "<channel>.<rationale|score-permK>.json and exit without calling a model.",
)
@store_option
@label_option
def evaluate_cmd(
    paths: tuple[str, ...],
    candidates: str,
    outdir: str,
    runs: tuple[str, ...],
    reference: str | None,
    repo: str | None,
    labels: tuple[str, ...],
    max_steps: int | None,
    store_url: str | None,
    run_label: str | None,
    dump_dir: str | None,
    evaluator: str | None,
    **options: Any,
) -> int:
    """Replay each trajectory through an evaluator LLM.

    At every state the evaluator puts a belief on a fixed candidate set; a step's value is how
    it moved that belief, reported per channel.

    Writes summary.json, steps.jsonl, states.jsonl, CSV tables and report.md into --out.
    Open-QA task rows become an asv.v1 file with `agentlens stepvalue adapt-open-qa`.
    """
    if evaluator is None and not dump_dir:
        raise click.UsageError(
            "Missing option '--evaluator' (only --dump-prompts DIR runs without a model)."
        )
    request = EvaluateRequest(evaluator=evaluator or PROMPTS_ONLY, **options)
    config = request.config()
    if store_url and not paths:
        raise ConfigError("--store needs trace files (PATHS): an asv.v1 file alone has none")
    inputs, problems = _problems(
        paths, candidates, runs, labels, max_steps, reference=reference, repo=repo
    )
    if dump_dir:
        written = write_prompts(problems, config, request.evaluator, dump_dir)
        console.print(
            f"wrote {counted(len(written), 'prompt')} under {dump_dir}",
            highlight=False,
        )
        return inputs.exit_code()
    result = evaluate_request(request, problems, config)
    paths_out = write_outputs(result, outdir)
    console.print(work_done(result, request.evaluator), highlight=False)
    console.print(f"report: {paths_out['report']}", highlight=False)
    if store_url and inputs.loaded:
        trajectories = inputs.loaded.trajectories
        save_run(store_url, *stepvalue_run(request.evaluator, run_label, trajectories, result))
    failed_calls = _report_call_errors(result.costs.errors)
    return max(inputs.exit_code(), failed_calls)


def _report_call_errors(errors: list[str], shown: int = 5) -> int:
    """Failed evaluator calls leave their rows unscored (`missing_labels`): one `failed:` line
    per distinct error (the first few; summary.json keeps them all), and exit code 1."""
    distinct = list(dict.fromkeys(errors))
    for line in distinct[:shown]:
        say("failed", line)  # a server's error text: controls shown inert, a quoted key masked
    if len(distinct) > shown:
        err_console.print(f"… and {len(distinct) - shown} more in summary.json", highlight=False)
    if errors:
        err_console.print(f"{len(errors)} evaluator calls failed", highlight=False)
    return 1 if errors else 0


@stepvalue.command("adapt-open-qa")
@click.argument("tasks", type=click.Path())
@click.argument("paths", nargs=-1, required=True)
@click.option("--out", "-o", required=True, type=click.Path(), help="The asv.v1 JSONL to write.")
@click.option(
    "--max-steps", type=click.IntRange(min=1), default=None, help="Keep only the first N steps."
)
@click.option(
    "--skip-missing", is_flag=True, help="Leave out task rows whose trajectory was not given."
)
def adapt_open_qa(
    tasks: str, paths: tuple[str, ...], out: str, max_steps: int | None, skip_missing: bool
) -> int:
    """Join reviewed open-QA tasks with their trajectories.

    Joins the task rows (TASKS.jsonl: four candidate answers with exactly one
    none-of-the-above, a gold id, review.status approved/accepted) with the trajectories they name,
    into an asv.v1 file for `agentlens stepvalue --candidates OUT`."""
    rows = load_tasks(tasks)
    loaded = load_inputs(paths)
    problems, missing = join(
        rows,
        loaded.trajectories,
        tasks_path=tasks,
        max_steps=max_steps,
        skip_missing=skip_missing,
    )
    write_asv(problems, out)
    steps = sum(len(p.transitions) for p in problems)
    used = {p.notes.get("source") for p in problems}
    unused = sum(1 for t in loaded.trajectories if t.source.path not in used)
    console.print(
        f"{len(problems)} of {counted(len(rows), 'task row')} -> {out} ({counted(steps, 'step')}); "
        f"{counted(len(missing), 'row')} without a trajectory, "
        f"{counted(unused, 'trajectory')} without a row",
        highlight=False,
    )
    return report_failures(loaded)


@stepvalue.command("adapt")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--candidates",
    type=click.Choice(["fault-localisation", "outcome"]),
    required=True,
    help="Candidate set derived from the runs.",
)
@click.option("--out", "-o", required=True, type=click.Path(), help="The asv.v1 JSONL to write.")
@_source_options
def adapt(
    paths: tuple[str, ...],
    candidates: str,
    out: str,
    runs: tuple[str, ...],
    reference: str | None,
    repo: str | None,
    labels: tuple[str, ...],
    max_steps: int | None,
) -> int:
    """Freeze trajectories into an asv.v1 file to score later.

    Trajectories of any format AgentLens reads, with derived candidates and projected,
    redacted states, into an asv.v1 file (the released tool's `asv adapt-react`); score it later
    with `agentlens stepvalue --candidates OUT`."""
    inputs, problems = _problems(
        paths, candidates, runs, labels, max_steps, reference=reference, repo=repo
    )
    write_asv(problems, out)
    steps = sum(len(p.transitions) for p in problems)
    console.print(
        f"{counted(len(problems), 'trajectory')} -> {out} ({counted(steps, 'step')})",
        highlight=False,
    )
    return inputs.exit_code()


def _problems(
    paths: tuple[str, ...],
    candidates: str,
    runs: tuple[str, ...],
    labels: tuple[str, ...],
    max_steps: int | None,
    *,
    reference: str | None,
    repo: str | None,
) -> tuple[_Inputs, list[Problem]]:
    """The inputs `_source_options` names, read and turned into problems (no paths: an asv.v1
    `candidates` file alone); trajectories that cannot be posed are left out, each named."""
    loaded = load_inputs(paths, labels=labels) if paths else None
    pool = load_inputs(runs, labels=labels).trajectories if runs else []
    trajectories = loaded.trajectories if loaded else []
    skipped: list[str] = []
    problems = build_problems(
        trajectories, candidates, runs=pool, max_steps=max_steps, reference=reference, repo=repo,
        skipped=skipped,
    )  # fmt: skip
    if skipped and not problems:
        raise ConfigError(skipped[0])
    return _Inputs(loaded, list(dict.fromkeys(skipped))), problems


@dataclass(frozen=True)
class _Inputs:
    """What was read, and the trajectories that could not be posed (one reason each)."""

    loaded: ReadResult | None
    skipped: list[str]

    def exit_code(self) -> int:
        """One `failed:` line per run left out (after the results), then the read's failures."""
        for line in self.skipped:
            say("failed", line)
        read = report_failures(self.loaded) if self.loaded else 0
        return max(read, 1 if self.skipped else 0)
