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

import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import click
import orjson

from agentlens.cli._app import console, err_console
from agentlens.cli._inputs import load_inputs, read_options, report_failures
from agentlens.errors import ConfigError
from agentlens.formats.atif_writer import to_atif
from agentlens.formats.jsonl import dump_jsonl
from agentlens.trajectory import Trajectory

TRACE_SUFFIXES = {".json", ".jsonl", ".traj", ".eval"}
UNSAFE = re.compile(r"[^A-Za-z0-9._@+-]+")


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--to", "target", type=click.Choice(["atif", "jsonl", "otel", "hf"]), required=True)
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False), required=True)
@click.option("--force", is_flag=True, help="Replace existing output files.")
@click.option("--scores", "scores_path", type=click.Path(exists=True, dir_okay=False),
              help="hf: join the rows `cohort --out` wrote (.jsonl/.csv) by trajectory id.")  # fmt: skip
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
    """Convert traces to ATIF (one JSON per trajectory), canonical JSONL or OTLP/JSON (one file
    per input) or a Hugging Face dataset (`--to hf`)."""
    if scores_path and target != "hf":
        raise ConfigError("--scores goes with --to hf")
    result = load_inputs(paths, lenient=lenient, labels=labels, format=format)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if target == "hf":
        written = [_write_hf(result.trajectories, out, scores_path, force)]
    else:
        written = write_all(result.trajectories, target, out, force=force)
    what = (
        f"a dataset of {len(result.trajectories)} rows"
        if target == "hf"
        else f"{len(written)} {target} file(s)"
    )
    console.print(f"wrote {what} to {out}", markup=False)
    return report_failures(result)


def write_all(trajectories: list[Trajectory], target: str, out: Path, *, force: bool) -> list[Path]:
    """Write `trajectories` under `out` in `target` format; returns the files written."""
    if target == "jsonl":
        return [_write_jsonl(group, path, force) for path, group in _by_input(trajectories, out)]
    if target == "otel":
        pairs = _by_input(trajectories, out)
        return [_write_otel(group, path.with_suffix(".otlp.json"), force) for path, group in pairs]
    return [_write_atif(traj, path, force) for traj, path in _atif_names(trajectories, out)]


def _by_input(trajectories: Iterable[Trajectory], out: Path) -> list[tuple[Path, list[Trajectory]]]:
    groups: dict[str, list[Trajectory]] = defaultdict(list)
    for traj in trajectories:
        groups[traj.source.path or traj.id].append(traj)
    names = _unique(_stem(Path(source).name) for source in groups)
    return [
        (out / f"{name}.jsonl", group) for name, group in zip(names, groups.values(), strict=True)
    ]


def _stem(name: str) -> str:
    """`x.traj.json` -> `x`, `gemini-2.5-pro-run.json` -> `gemini-2.5-pro-run` (dots kept)."""
    while Path(name).suffix in TRACE_SUFFIXES:
        name = name[: -len(Path(name).suffix)]
    return name or "trajectories"


def _atif_names(trajectories: list[Trajectory], out: Path) -> list[tuple[Trajectory, Path]]:
    names = _unique(t.id for t in trajectories)
    return [(t, out / f"{name}.json") for t, name in zip(trajectories, names, strict=True)]


def _unique(names: Iterable[str]) -> list[str]:
    seen: dict[str, int] = {}
    unique = []
    for raw in names:
        name = UNSAFE.sub("_", raw).strip("._") or "trajectory"
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name}-{seen[name]}")
    return unique


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
    from agentlens.formats.hf_writer import read_score_rows, write_hf

    rows = read_score_rows(scores) if scores else []
    unmatched = {str(r.get("trajectory_id")) for r in rows} - {t.id for t in trajectories}
    if unmatched:  # rows of other runs, or of these runs read under other ids
        example = sorted(unmatched)[0]
        warn = f"warning: {len(unmatched)} of {len(rows)} --scores rows match no run read (e.g. {example})"
        err_console.print(warn, markup=False, highlight=False, soft_wrap=True)
    return write_hf(trajectories, out, scores=rows, force=force)


def _check_free(path: Path, force: bool) -> None:
    if path.exists() and not force:
        raise ConfigError(f"{path} exists; pass --force to replace it or choose another -o")
