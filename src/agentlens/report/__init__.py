"""The static HTML report of stored runs: one self-contained file (inline CSS and SVG, no
JavaScript, a Content-Security-Policy that forbids loading anything). Every text from a trace or
a result is escaped. `render_report(store, run_ids)` gives the document."""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from agentlens import __version__
from agentlens.list_text import counted
from agentlens.report.compare import comparison, overview_note, run_name
from agentlens.report.html import definitions, el, page, text
from agentlens.report.imports import import_sections
from agentlens.report.process import score_sections
from agentlens.report.reviews import review_sections
from agentlens.report.scenarios import scenario_sections
from agentlens.report.scores import ScoreRow, score_rows
from agentlens.report.select import select_runs
from agentlens.report.stepvalue import stepvalue_sections
from agentlens.store import Record, Run, SqlStore, printable_url
from agentlens.store.model import INCOMPLETE_NOTE

__all__ = ["render_report", "select_runs"]


def render_report(store: SqlStore, run_ids: Sequence[str]) -> str:
    """The report of these runs (ids or unique prefixes), in the order given."""
    runs = {run.id: run for run in map(store.run, run_ids)}
    loaded = [(run, store.records(run.id)) for run in runs.values()]
    scored = [(run, score_rows(records)) for run, records in loaded if run.kind == "score"]
    parts: list[tuple[str, str, str]] = []
    if len(scored) >= 2:
        parts.append(("overview", "All score runs", _overview(scored)))
    for i, (run, records) in enumerate(loaded, start=1):
        parts.append((f"run-{i}", f"{run.kind} run {run_name(run)}", _run_section(run, records)))
    body = "".join(el("section", inner, id=anchor, class_="run") for anchor, _, inner in parts)
    kinds = ", ".join(dict.fromkeys(run.kind for run, _ in loaded))
    source = printable_url(store.url)
    subtitle = f"{counted(len(loaded), 'run')} ({kinds}) from {source} · agentlens {__version__}"
    contents = [(anchor, title) for anchor, title, _ in parts]
    return page("AgentLens report", subtitle, contents, body)


def _overview(scored: Sequence[tuple[Run, list[ScoreRow]]]) -> str:
    rows = [row for _, run_rows in scored for row in run_rows]
    compared = comparison(scored)
    shared = text("h3", "Score changes between runs") + compared if compared else ""
    sections = score_sections(rows, trajectories="none")
    return text("h2", "All score runs") + overview_note(len(scored)) + sections + shared


def _run_section(run: Run, records: list[Record]) -> str:
    if run.kind == "score":
        inner = score_sections(score_rows(records), profile=_profile(run))
    elif run.kind == "review":
        inner = review_sections(records)
    elif run.kind == "import":
        inner = import_sections(records)
    elif run.kind == "scenario":
        inner = scenario_sections(records)
    elif run.kind == "stepvalue":
        inner = stepvalue_sections(records, run.summary)
    else:
        inner = text("p", f"The report has no view of {run.kind} runs yet.", class_="note")
    title = el("h2", text("span", run.kind, class_="kind") + text("span", run.label or run.id[:12]))
    return title + _run_facts(run) + inner


def _profile(run: Run) -> str | None:
    """The scoring profile of a score run: its settings, else its scorer (`process/<p>/1`)."""
    named = run.settings.get("profile")
    if isinstance(named, str):
        return named
    parts = (run.scorer or "").split("/")
    return parts[1] if len(parts) == 3 and parts[0] == "process" else None


def _run_facts(run: Run) -> str:
    facts: list[tuple[str, object]] = [
        ("run id", run.id), ("kind", run.kind), ("scorer", run.scorer), ("label", run.label),
        ("created", f"{run.created:%Y-%m-%d %H:%M:%S %Z}"), ("agentlens", run.agentlens_version),
        ("records", run.n_records if run.complete else f"{run.n_records} ({INCOMPLETE_NOTE})"),
    ]  # fmt: skip
    facts += [(f"settings.{k}", _setting(v)) for k, v in run.settings.items()]
    if isinstance(run.summary.get("judge"), str):
        facts.append(("judge", run.summary["judge"]))
    return definitions(facts)


def _setting(value: object) -> str:
    if isinstance(value, str):
        return value
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS, default=str).decode()
