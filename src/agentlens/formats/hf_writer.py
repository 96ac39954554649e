"""`agentlens convert --to hf -o DIR`: a Hugging Face `datasets` dataset saved with
`save_to_disk`, one row per trajectory (`datasets.load_from_disk(DIR)` reads it back).

Each row holds the run as chat `messages` (OpenAI/TRL shape: a model turn with tool calls is one
`assistant` message with `tool_calls`, each result a `tool` message naming its `tool_call_id`;
arguments are JSON text so every row has one schema), the ids, the outcome and the usage.
Process scores are not computed here: `--scores ROWS` joins the rows `agentlens cohort --out`
wrote (.jsonl or .csv) by trajectory id into `process_score`, `process_only`, `tier`, `profile`,
`mechanism` and `verdict`; a run with no row has them empty. Texts are already redacted: every
reader's output passes the one redaction pass (`agentlens.redaction`) before it gets here.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from agentlens.errors import ConfigError
from agentlens.formats.atif_writer import turn_groups
from agentlens.trajectory import Step, Trajectory

INSTALL_HINT = "the hf export needs the `datasets` package: pip install 'agentlens[hf]'"
SCORE_COLUMNS = {  # dataset column <- cohort row column
    "process_score": "composite",
    "tier": "quality_tier",
    "profile": "profile",
    "mechanism": "mechanism",
    "verdict": "verdict",
}
Row = Mapping[str, object]


def require_datasets() -> None:
    """The install hint before anything is read or made, when `datasets` is not installed."""
    if importlib.util.find_spec("datasets") is None:
        raise ConfigError(INSTALL_HINT)


def write_hf(
    trajectories: Sequence[Trajectory], out: Path, *, scores: Sequence[Row] = (), force: bool
) -> Path:
    """Save the dataset under `out`; returns `out`. An existing dataset is kept without `force`."""
    try:
        import datasets
    except ImportError:
        raise ConfigError(INSTALL_HINT) from None
    if (out / "dataset_info.json").exists() and not force:
        raise ConfigError(f"{out} holds a dataset; pass --force to replace it or choose another -o")
    by_id = {str(row.get("trajectory_id")): row for row in scores}
    rows = [hf_row(t, by_id.get(t.id)) for t in trajectories]
    datasets.disable_progress_bars()  # the CLI reports what it wrote in one line
    datasets.Dataset.from_list(rows, features=_features(datasets)).save_to_disk(str(out))
    return out


def hf_row(traj: Trajectory, score: Row | None = None) -> dict[str, Any]:
    usage = traj.usage_known()
    row: dict[str, Any] = {
        "id": traj.id,
        "task_id": traj.task_id,
        "model": traj.model,
        "agent": traj.agent.name,
        "source_format": traj.source.format,
        "source_path": traj.source.path,
        "outcome": traj.outcome.status,
        "outcome_source": traj.outcome.source,
        "task": traj.task,
        "messages": messages(traj.steps),
        "n_steps": len(traj.steps),
        "n_tool_calls": len(traj.tool_steps),
        "n_subagents": len(traj.subtrajectories),
        "prompt_tokens": usage.prompt_tokens if usage else None,
        "completion_tokens": usage.completion_tokens if usage else None,
        "cost_usd": traj.cost_total(),
    }
    return row | _scores(score)


def _scores(score: Row | None) -> dict[str, Any]:
    out: dict[str, Any] = {name: None for name in (*SCORE_COLUMNS, "process_only")}
    if score is None:
        return out
    for name, column in SCORE_COLUMNS.items():
        value = score.get(column, score.get("quality_score") if column == "composite" else None)
        out[name] = None if value is None else (str(value) if name != "process_score" else value)
    if out["process_score"] is not None:
        out["process_score"] = float(out["process_score"])
        leak = score.get("outcome_term")  # the `sdk-compat` +10 for a pass (spec §8.2)
        out["process_only"] = out["process_score"] - float(leak or 0.0)  # type: ignore[arg-type]
    return out


def messages(steps: list[Step]) -> list[dict[str, Any]]:
    """The steps as chat messages, in order."""
    out: list[dict[str, Any]] = []
    for group in turn_groups(steps):
        first = group[0]
        if first.kind != "tool":
            role = "assistant" if first.kind == "agent" else first.kind
            out.append(_message(role, first.text))
            continue
        calls = [_call(s) for s in group]
        out.append(_message("assistant", first.text, tool_calls=calls))
        out += [_result(step, call["id"]) for step, call in zip(group, calls, strict=True)]
    return out


def _message(role: str, content: str, **fields: Any) -> dict[str, Any]:
    return {"role": role, "content": content, "tool_calls": [], "tool_call_id": None,
            "name": None} | fields  # fmt: skip


def _call(step: Step) -> dict[str, str]:
    arguments = orjson.dumps(step.arguments, default=str).decode()
    return {"id": step.call_id or f"call_{step.index}", "name": step.tool_name or "unknown",
            "arguments": arguments}  # fmt: skip


def _result(step: Step, call_id: str) -> dict[str, Any]:
    return _message("tool", step.observation or "", tool_call_id=call_id, name=step.tool_name)


def _features(datasets: Any) -> Any:
    text = datasets.Value("string")
    call = {"id": text, "name": text, "arguments": text}
    message = {"role": text, "content": text, "tool_calls": [call], "tool_call_id": text,
               "name": text}  # fmt: skip
    columns: dict[str, Any] = dict.fromkeys(
        ("id", "task_id", "model", "agent", "source_format", "source_path", "outcome",
         "outcome_source", "task", "tier", "profile", "mechanism", "verdict"), text)  # fmt: skip
    columns |= dict.fromkeys(("n_steps", "n_tool_calls", "n_subagents"), datasets.Value("int32"))
    columns |= dict.fromkeys(("prompt_tokens", "completion_tokens"), datasets.Value("int64"))
    columns |= dict.fromkeys(
        ("cost_usd", "process_score", "process_only"), datasets.Value("float64")
    )
    return datasets.Features(columns | {"messages": [message]})
