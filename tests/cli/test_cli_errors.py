"""What any command prints when something goes wrong outside the readers: one line, no traceback
(unless --debug), and text from traces printed as written (no rich markup or emoji codes)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import BENCH
from tests.whole_process import agentlens

RUN = next((BENCH / "trajectories" / "psf__requests-1724").glob("*-pass-*.json"))
EVALUATE = ["stepvalue", "evaluate", str(RUN), "--candidates", "outcome", "--evaluator", "openai:x"]


def test_trace_text_is_not_rendered_as_markup_or_emoji(
    run_cli: Callable[..., object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentlens.cli._app import console

    hostile = tmp_path / "a:x:[bold]b[red]c.json"  # the id (file stem) is shown in the table
    shutil.copy(RUN, hostile)
    narrow = run_cli("inspect", str(hostile))  # 80 columns: a block of lines per trajectory
    assert narrow.code == 0  # type: ignore[attr-defined]
    assert narrow.out.splitlines()[1].startswith("a:x:[bold]b[red]c  passed")  # type: ignore[attr-defined]
    monkeypatch.setattr(console, "width", 60 + console.width)  # wide: the table
    result = run_cli("inspect", str(hostile))
    rows = [line.split("│") for line in result.out.splitlines() if line.startswith("│")]  # type: ignore[attr-defined]
    first_column = "".join(cells[1].strip() for cells in rows)  # a long id wraps in its cell
    assert first_column == "a:x:[bold]b[red]c"


@pytest.mark.parametrize("command", ["score", "label"])
def test_markup_in_a_trace_id_is_printed_not_parsed(
    command: str, run_cli: Callable[..., object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentlens.cli._app import console

    monkeypatch.setattr(console, "width", 300)  # the whole id on one line of the table
    runs = sorted(RUN.parent.glob("*-pass-*.json"))[:3]
    for number, run in enumerate(runs):  # as markup, rich would drop both tags from the table
        shutil.copy(run, tmp_path / f"run-{number}[bold][link=x]-pass-{number}.json")
    reference = tmp_path / "ref" / "ref.json"
    assert run_cli("reference", "build", str(tmp_path), "-o", str(reference)).code == 0  # type: ignore[attr-defined]
    args = ("--reference", str(reference)) if command == "score" else ()
    result = run_cli(command, str(tmp_path), *args)
    assert result.code == 0, result.err  # type: ignore[attr-defined]
    assert "run-0[bold][link=x]-pass-0" in result.out  # type: ignore[attr-defined]


def test_output_files_may_name_folders_that_do_not_exist_yet(
    run_cli: Callable[..., object], tmp_path: Path
) -> None:
    task = str(RUN.parent)
    reference = tmp_path / "a" / "ref.json"
    assert run_cli("reference", "build", task, "-o", str(reference)).code == 0  # type: ignore[attr-defined]
    csv = tmp_path / "b" / "c" / "scores.csv"
    assert run_cli("score", task, "--reference", str(reference), "--csv", str(csv)).code == 0  # type: ignore[attr-defined]
    md = tmp_path / "d" / "compare.md"
    assert run_cli("compare", task, task, "--md", str(md)).code == 0  # type: ignore[attr-defined]
    assert reference.stat().st_size and csv.read_text().startswith("task_id,model,trajectory_id,")
    assert md.read_text().startswith("# Run comparison")


def test_an_unwritable_output_folder_is_one_line(
    run_cli: Callable[..., object], tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = run_cli("convert", str(RUN), "--to", "jsonl", "-o", str(blocker / "out"))
    assert result.code == 2  # type: ignore[attr-defined]
    err = result.err.strip()  # type: ignore[attr-defined]
    assert err.startswith("error: ") and str(blocker) in err and "\n" not in err


@pytest.mark.parametrize("option", ["--csv", "--parquet"])
def test_an_unwritable_score_file_is_refused_before_scoring(
    option: str, run_cli: Callable[..., object], tmp_path: Path
) -> None:
    """As `cohort --out`: the scores were computed (donor warnings and all), then lost to the
    write."""
    task = str(BENCH / "trajectories" / "psf__requests-1724")
    reference = tmp_path / "ref.json"
    assert run_cli("reference", "build", task, "-o", str(reference)).code == 0  # type: ignore[attr-defined]
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = run_cli("score", task, "--reference", str(reference), option, str(blocker / "s"))
    assert result.code == 2  # type: ignore[attr-defined]
    err = result.err.strip()  # type: ignore[attr-defined]
    assert err.startswith("error: ") and "is a file, not a folder" in err and "\n" not in err


def test_an_unexpected_exception_is_one_line_and_debug_shows_it(
    run_cli: Callable[..., object], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentlens.cli import inspect_cmd

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("injected fault")

    monkeypatch.setattr(inspect_cmd, "stream_inputs", broken)
    result = run_cli("inspect", str(RUN))
    assert result.code == 3  # type: ignore[attr-defined]
    err = result.err.strip()  # type: ignore[attr-defined]
    assert "injected fault" in err and "--debug" in err and "Traceback" not in err
    with pytest.raises(RuntimeError, match="injected fault"):
        run_cli("--debug", "inspect", str(RUN))
    # after the command too, as users type it (was "No such option: --debug", exit 2)
    with pytest.raises(RuntimeError, match="injected fault"):
        run_cli("inspect", "--debug", str(RUN))


def test_a_folder_without_traces_is_an_error_not_an_empty_success(
    run_cli: Callable[..., object], tmp_path: Path
) -> None:
    (tmp_path / "notes.md").write_text("no traces here")  # a sidecar: passed over silently
    (tmp_path / "data.bin").write_bytes(bytes(range(256)))  # walked, not a trace: skipped
    for command in (["inspect"], ["convert", "--to", "jsonl", "-o", str(tmp_path / "out")]):
        result = run_cli(*command, str(tmp_path))
        assert result.code == 2  # type: ignore[attr-defined]
        err = result.err  # type: ignore[attr-defined]
        assert f"no trace files in {tmp_path} (1 non-trace file skipped)" in err


def test_no_trace_files_names_why_the_first_files_were_skipped(
    data_dir: Path, tmp_path: Path
) -> None:
    """Without `--debug` too: when nothing was read, why each file was skipped is the answer
    (six run folders that are links: five named, then how to see the sixth)."""
    for n in range(6):
        (tmp_path / f"run{n}").symlink_to(data_dir / "formats" / "copilot-cli")
    shown = agentlens("inspect", str(tmp_path))
    lines = shown.stderr.splitlines()
    named = [line for line in lines if line.startswith("skipped: ")]
    assert len(named) == 5 and all("a link to a folder, not followed" in n for n in named)
    assert "(--debug names all 6)" in lines
    assert f"no trace files in {tmp_path} (6 non-trace files skipped)" in shown.stderr
    assert shown.returncode == 2


@pytest.mark.parametrize("command", ["inspect", "cohort"])
def test_no_trace_files_under_debug_names_each_file_skipped(
    data_dir: Path, tmp_path: Path, command: str
) -> None:
    """`--debug` names every skipped file with its reason, except where it mattered most: with
    nothing read, "no trace files in runs (1 non-trace file skipped)" said neither which nor
    why (here a run folder that is a link, not followed)."""
    (tmp_path / "copilot").symlink_to(data_dir / "formats" / "copilot-cli")
    shown = agentlens("--debug", command, str(tmp_path))
    note = f"skipped: {tmp_path / 'copilot'}: a link to a folder, not followed: name it to read it"
    assert note in shown.stderr.splitlines()
    assert f"no trace files in {tmp_path} (1 non-trace file skipped)" in shown.stderr


@pytest.mark.parametrize(
    "args",
    [
        [*EVALUATE, "-b", "0"],
        [*EVALUATE, "--max-steps", "0"],
        [*EVALUATE, "--concurrency", "0"],
        ["reference", "build", str(RUN), "-o", "unused.json", "--k", "-1"],
        ["cohort", str(RUN), "--k", "0"],
        ["cohort", str(RUN), "--boot", "-5"],
        ["qi", "--formal", "85", "--component", "EndResult=0.5"],
        ["review", str(RUN), "--judge", "openai:x", "--max-tokens", "0"],
    ],
    ids=[
        "permutations",
        "max-steps",
        "concurrency",
        "reference-k",
        "cohort-k",
        "boot",
        "qi-formal",
        "review-max-tokens",
    ],
)
def test_counts_out_of_range_are_usage_errors(
    run_cli: Callable[..., object], args: list[str]
) -> None:
    """Checked by the option itself, before any work (a negative --boot used to crash numpy)."""
    result = run_cli(*args)
    assert result.code == 2  # type: ignore[attr-defined]
    assert "is not in the range" in result.err and "Traceback" not in result.err  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", [["inspect", "--json"], ["label", "--json"], ["inspect"]])
def test_a_reader_that_stops_early_is_not_an_error(command: list[str]) -> None:
    """`agentlens inspect --json DIR | head -1`: once the reader has what it wanted the command
    ends quietly with exit 0 (click turned the closed pipe into exit 1, as if inputs failed)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    args = [sys.executable, "-m", "agentlens", *command, str(BENCH / "trajectories")]
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline().strip()
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=300) == 0, err
    assert "Traceback" not in err and "Exception ignored" not in err


@pytest.mark.parametrize(
    ("command", "written"),
    [
        (["score", "--json", "--reference", "{ref}", "--csv", "{out}/s.csv",
          "--parquet", "{out}/s.parquet"], ["s.csv", "s.parquet"]),
        (["cohort", "--protocol", "agentlens-bench", "--out", "{out}/rows.jsonl"], ["rows.jsonl"]),
    ],
)  # fmt: skip
def test_a_reader_that_is_gone_still_gets_the_output_files(
    command: list[str], written: list[str], run_cli: Callable[..., object], tmp_path: Path
) -> None:
    """`agentlens score --json --csv s.csv … | head -1`: the files asked for are the product,
    stdout only a view of it; they were lost (exit 0) when the reader left before the print."""
    import os
    import subprocess
    import sys

    task = BENCH / "trajectories" / "psf__requests-1724"
    ref = tmp_path / "ref.json"
    assert run_cli("reference", "build", str(task), "-o", str(ref)).code == 0  # type: ignore[attr-defined]
    args = [a.format(ref=ref, out=tmp_path) for a in command]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line: every print fails
    try:
        done = subprocess.run(
            [sys.executable, "-m", "agentlens", *args, str(task)],
            stdout=write_end, stderr=subprocess.PIPE, env=env, timeout=300, check=False,
        )  # fmt: skip
    finally:
        os.close(write_end)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "Traceback" not in err
    made = [name for name in written if (tmp_path / name).is_file()]
    assert made == written and all((tmp_path / name).stat().st_size > 0 for name in made)
