"""`agentlens convert PATH… --to atif|jsonl|otel -o DIR`: rewrite traces in a portable format.

Output layout (one file per unit the target format holds):
* `jsonl`: `DIR/<input stem>.jsonl` per input file, every trajectory of that file on its own line
  (the canonical model; `agentlens inspect` reads it back);
* `atif`: `DIR/<input stem>.json` per trajectory, ATIF v1.8 (ATIF holds one trajectory per file:
  an input holding several gives `<input stem>.1.json`, `<input stem>.2.json`, … in its order);
* `otel`: `DIR/<input stem>.otlp.json` per input file, one OTLP/JSON export request whose traces
  (GenAI semantic conventions) are that file's trajectories: for Phoenix, Langfuse, a collector;
* `hf`: DIR is one Hugging Face dataset (`datasets.load_from_disk(DIR)`), a row per trajectory
  with its chat messages; `--scores ROWS` adds the process scores `agentlens cohort --out` wrote.
Two inputs of one name (`x/s.json`, `y/s.json`) give `s` and `s-2`, the second said on stderr.
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
from agentlens.file_names import FileStems, file_stem
from agentlens.formats.atif_writer import to_atif
from agentlens.formats.jsonl import dump_jsonl
from agentlens.list_text import counted
from agentlens.trajectory import Trajectory

TRACE_SUFFIXES = {".json", ".jsonl", ".traj", ".eval"}


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--to", "target", type=click.Choice(["atif", "jsonl", "otel", "hf"]), required=True,
              help="Files named after each input: atif: <input>.json, one per trajectory "
              "(<input>.1.json, <input>.2.json, … for an input of several); jsonl: canonical "
              "<input>.jsonl; otel: OTLP/JSON <input>.otlp.json; hf: a Hugging Face dataset "
              "(agentlens[hf]). A second input of one name gets <input>-2.")  # fmt: skip
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
    """Write `trajectories` under `out` in `target` format, one input file's at a time, each
    output named after its input; returns how many files were written."""
    if target == "atif":
        return _write_atif_files(trajectories, out, force)
    files: dict[str, Path] = {}  # input -> its output, kept for an input that comes back
    names = FileStems("trajectory")
    suffix = ".jsonl" if target == "jsonl" else ".otlp.json"
    for key, group in groupby(trajectories, key=_input_of):
        batch = list(group)
        if key in files:  # a file named twice: its repeats are dropped, the rest go with it
            _append(target, batch, files[key])
            continue
        files[key] = out / f"{_output_stem(names, key, suffix)}{suffix}"
        if target == "jsonl":
            _write_jsonl(batch, files[key], force)
        else:
            _write_otel(batch, files[key], force)
    return names.count


def _write_atif_files(trajectories: Iterable[Trajectory], out: Path, force: bool) -> int:
    """One ATIF file per trajectory, named after its input; an input of several numbers them
    (each number's name taken too, so an input `a.1.json` cannot meet input `a`'s first)."""
    names = FileStems("trajectory")
    stems: dict[str, str] = {}  # input -> its stem, and how many of its trajectories came
    written: dict[str, int] = {}
    for key, group in groupby(trajectories, key=_input_of):
        batch = list(group)
        if key not in stems:
            stems[key] = _output_stem(names, key, ".json")
        for traj in batch:
            written[key] = written.get(key, 0) + 1
            several = len(batch) > 1 or written[key] > 1
            name = names.add(f"{stems[key]}.{written[key]}") if several else stems[key]
            _write_atif(traj, out / f"{name}.json", force)
    return sum(written.values())


def _input_of(traj: Trajectory) -> str:
    return traj.source.path or traj.id


def _output_stem(names: FileStems, key: str, suffix: str) -> str:
    """The input's stem, once; a second input of that name gets `-2`, said on stderr."""
    wanted = file_stem(_stem(Path(key).name), names.fallback)
    name = names.add(_stem(Path(key).name))
    if name != wanted:
        say(
            "note",
            f"{key}: {wanted}{suffix} is another input's, so it is written as {name}{suffix}",
        )
    return name


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
