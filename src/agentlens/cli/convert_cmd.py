"""`agentlens convert PATH… --to atif|jsonl|otel -o DIR`: rewrite traces in a portable format.

Output layout (one file per unit the target format holds):
* `jsonl`: `DIR/<input stem>.jsonl` per input file, every trajectory of that file on its own line
  (the canonical model; `agentlens inspect` reads it back);
* `atif`: `DIR/<trajectory id>.json` per trajectory, ATIF v1.8 (ATIF holds one trajectory per file);
* `otel`: `DIR/<input stem>.otlp.json` per input file, one OTLP/JSON export request whose traces
  (GenAI semantic conventions) are that file's trajectories: for Phoenix, Langfuse, a collector;
* `hf`: DIR is one Hugging Face dataset (`datasets.load_from_disk(DIR)`), a row per trajectory
  with its chat messages; `--scores ROWS` adds the process scores `agentlens cohort --out` wrote.
Existing files are only replaced with `--force`. Unreadable inputs are reported and skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby
from pathlib import Path

import click
import orjson

from agentlens.cli._app import console, say
from agentlens.cli._inputs import read_options, report_failures, stream_inputs
from agentlens.errors import ConfigError
from agentlens.file_names import FileStems
from agentlens.formats.atif_writer import to_atif
from agentlens.formats.jsonl import dump_jsonl
from agentlens.list_text import counted
from agentlens.trajectory import Trajectory

TRACE_SUFFIXES = {".json", ".jsonl", ".traj", ".eval"}


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--to", "target", type=click.Choice(["atif", "jsonl", "otel", "hf"]), required=True,
              help="atif: one JSON per trajectory; jsonl: canonical JSONL; otel: OTLP/JSON; "
              "hf: a Hugging Face dataset (agentlens[hf]).")  # fmt: skip
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False), required=True,
              help="Folder to write into (created if missing).")  # fmt: skip
@click.option("--force", is_flag=True, help="Replace existing output files.")
@click.option("--scores", "scores_path", type=click.Path(exists=True, dir_okay=False),
              help="hf: join the rows `cohort --out` wrote (.jsonl/.csv/.parquet) by trajectory id.")  # fmt: skip
@read_options
def convert(
    paths: tuple[str, ...],
    target: str,
    out_dir: str,
    force: bool,
    scores_path: str | None,
    lenient: bool,
    format: str | None,
    labels: tuple[str, ...],
) -> int:
    """Convert traces to ATIF, canonical JSONL, OTLP or a dataset.

    ATIF (one JSON per trajectory), canonical JSONL or OTLP/JSON (one file
    per input) or a Hugging Face dataset (`--to hf`)."""
    if scores_path and target != "hf":
        raise ConfigError("--scores goes with --to hf")
    if target == "hf":
        from agentlens.formats.hf_writer import require_datasets

        require_datasets()
    stream = stream_inputs(paths, lenient=lenient, labels=labels, format=format)
    out = Path(out_dir)
    if target == "hf":  # a dataset is written at once: its rows are gathered first
        trajectories = list(stream)
        if not trajectories:  # `datasets` can neither build nor load back a dataset of no rows
            console.print(f"no trajectory read: no dataset written to {out}", markup=False)
            return report_failures(stream)
        _write_hf(trajectories, out, scores_path, force)  # `save_to_disk` makes the folder
        what = f"a dataset of {counted(len(trajectories), 'row')}"
    else:
        out.mkdir(parents=True, exist_ok=True)
        what = counted(write_all(stream, target, out, force=force), f"{target} file")
    console.print(f"wrote {what} to {out}", markup=False)
    return report_failures(stream)


def write_all(trajectories: Iterable[Trajectory], target: str, out: Path, *, force: bool) -> int:
    """Write `trajectories` under `out` in `target` format, one input file's (or one
    trajectory's) at a time; returns how many files were written."""
    if target == "atif":
        names = FileStems("trajectory")
        for traj in trajectories:
            _write_atif(traj, out / f"{names.add(traj.id)}.json", force)
        return names.count
    files: dict[str, Path] = {}  # input -> its output, kept for an input that comes back
    names = FileStems("trajectory")
    for key, group in groupby(trajectories, key=lambda t: t.source.path or t.id):
        batch = list(group)
        if key in files:  # a file named twice: its repeats are dropped, the rest go with it
            _append(target, batch, files[key])
            continue
        files[key] = out / f"{names.add(_stem(Path(key).name))}.jsonl"
        if target == "jsonl":
            _write_jsonl(batch, files[key], force)
        else:
            files[key] = _write_otel(batch, files[key].with_suffix(".otlp.json"), force)
    return names.count


def _append(target: str, batch: list[Trajectory], path: Path) -> None:
    if target == "jsonl":
        with path.open("ab") as handle:
            dump_jsonl(batch, handle)
        return
    from agentlens.formats.otel_writer import to_otlp

    doc = orjson.loads(path.read_bytes())
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans += to_otlp(batch)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))


def _stem(name: str) -> str:
    """`x.traj.json` -> `x`, `gemini-2.5-pro-run.json` -> `gemini-2.5-pro-run` (dots kept)."""
    while Path(name).suffix in TRACE_SUFFIXES:
        name = name[: -len(Path(name).suffix)]
    return name or "trajectories"


def _write_jsonl(group: list[Trajectory], path: Path, force: bool) -> Path:
    _check_free(path, force)
    dump_jsonl(group, path)
    return path


def _write_atif(traj: Trajectory, path: Path, force: bool) -> Path:
    _check_free(path, force)
    path.write_bytes(orjson.dumps(to_atif(traj), option=orjson.OPT_INDENT_2))
    return path


def _write_otel(group: list[Trajectory], path: Path, force: bool) -> Path:
    from agentlens.formats.otel_writer import to_otlp

    _check_free(path, force)
    path.write_bytes(orjson.dumps(to_otlp(group), option=orjson.OPT_INDENT_2))
    return path


def _write_hf(trajectories: list[Trajectory], out: Path, scores: str | None, force: bool) -> Path:
    from agentlens.formats.hf_writer import write_hf
    from agentlens.process.cohort_rows import read_score_rows

    rows = read_score_rows(scores) if scores else []
    unmatched = {str(r.get("trajectory_id")) for r in rows} - {t.id for t in trajectories}
    if unmatched:  # rows of other runs, or of these runs read under other ids
        example = sorted(unmatched)[0]
        say(
            "warning",
            f"{len(unmatched)} of {len(rows)} --scores rows match no run read (e.g. {example})",
        )
    return write_hf(trajectories, out, scores=rows, force=force)


def _check_free(path: Path, force: bool) -> None:
    if path.exists() and not force:
        raise ConfigError(f"{path} exists; pass --force to replace it or choose another -o")
