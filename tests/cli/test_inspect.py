from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agentlens.formats import READERS
from tests.conftest import BENCH, DATA, FORMATS

TASK = "psf__requests-1724"


def test_glob_and_json_lines_match_the_files(run_cli: Callable[..., object]) -> None:
    pattern = str(BENCH / "trajectories" / TASK / "*-pass-*.json")
    expected = sorted(str(p) for p in (BENCH / "trajectories" / TASK).glob("*-pass-*.json"))
    result = run_cli("inspect", "--json", pattern)
    assert result.code == 0  # type: ignore[attr-defined]
    rows = [json.loads(line) for line in result.out.splitlines()]  # type: ignore[attr-defined]
    assert sorted(r["path"] for r in rows) == expected
    assert {r["outcome"] for r in rows} == {"passed"}
    for row in rows:
        raw = json.loads(Path(row["path"]).read_bytes())
        assert row["tool_calls"] == len(raw["states"]) - 1


def test_directory_walk_skips_sidecars_and_labels_outcomes(run_cli: Callable[..., object]) -> None:
    gemini = FORMATS / "gemini-cli"
    result = run_cli("inspect", "--json", str(gemini))
    assert result.code == 0  # type: ignore[attr-defined]
    (row,) = [json.loads(line) for line in result.out.splitlines()]  # type: ignore[attr-defined]
    assert row["format"] == "gemini-cli"


def test_explicit_labels_show_their_source(run_cli: Callable[..., object]) -> None:
    task_dir = BENCH / "trajectories" / TASK
    labels = BENCH / "annotations" / "trajectories.csv"
    result = run_cli("inspect", "--json", "--labels", str(labels), str(task_dir))
    rows = [json.loads(line) for line in result.out.splitlines()]  # type: ignore[attr-defined]
    assert len(rows) == len(list(task_dir.glob("*.json")))
    assert {r["outcome_source"] for r in rows} == {"labels:csv"}


def test_missing_labels_file_is_a_one_line_error(run_cli: Callable[..., object]) -> None:
    result = run_cli("inspect", "--labels", "/nonexistent/labels.csv", str(BENCH / "trajectories"))
    assert result.code == 2  # type: ignore[attr-defined]
    assert result.err.strip().splitlines() == [  # type: ignore[attr-defined]
        "error: --labels /nonexistent/labels.csv: no such file or directory"
    ]


def test_a_glob_matching_nothing_is_a_failure(run_cli: Callable[..., object]) -> None:
    result = run_cli("inspect", "--json", "/nonexistent/dir/*.json", str(FORMATS / "gemini-cli"))
    assert result.code == 1  # type: ignore[attr-defined]
    # no file, so no format to call unknown
    assert "failed: /nonexistent/dir/*.json: no file matches this pattern" in (
        result.err  # type: ignore[attr-defined]
    )
    assert len(result.out.splitlines()) == 1  # type: ignore[attr-defined]


def test_forced_format(run_cli: Callable[..., object]) -> None:
    gemini = str(FORMATS / "gemini-cli")
    assert run_cli("inspect", "--format", "gemini-cli", "--json", gemini).code == 0  # type: ignore[attr-defined]
    wrong = run_cli("inspect", "--format", "atif", gemini)
    assert wrong.code == 1  # type: ignore[attr-defined]
    assert "[atif]" in wrong.err  # type: ignore[attr-defined]
    unknown = run_cli("inspect", "--format", "nosuch", gemini)
    assert unknown.code == 2  # type: ignore[attr-defined]
    assert "unknown format 'nosuch'" in unknown.err  # type: ignore[attr-defined]


def test_a_broken_sub_agent_file_is_a_warning_naming_it(
    run_cli: Callable[..., object], tmp_path: Path
) -> None:
    claude = FORMATS / "claude-code/marot-spotter"
    main = tmp_path / "session.jsonl"
    main.write_bytes((claude / "short.jsonl").read_bytes())
    sub = tmp_path / "session/subagents/agent-broken.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_bytes(b"\xff\xfe not json at all\n")
    result = run_cli("inspect", str(main))
    assert result.code == 0  # type: ignore[attr-defined]  # the session itself was read
    warnings = [line for line in result.err.splitlines() if line.startswith("warning:")]  # type: ignore[attr-defined]
    assert len(warnings) == 1 and str(sub) in warnings[0], result.err  # type: ignore[attr-defined]


MINI = FORMATS.parent / "mini-swe-agent-swebv"


def _json_rows(run_cli: Callable[..., object], path: Path) -> list[dict[str, object]]:
    result = run_cli("inspect", "--json", str(path))
    return [json.loads(line) for line in result.out.splitlines()]  # type: ignore[attr-defined]


def test_narrow_output_gives_four_lines_per_trajectory(run_cli: Callable[..., object]) -> None:
    rows = _json_rows(run_cli, MINI)
    result = run_cli("inspect", str(MINI))  # captured output is 80 columns wide: the line layout
    assert result.code == 0  # type: ignore[attr-defined]
    lines = result.out.splitlines()  # type: ignore[attr-defined]
    assert lines[0] == f"{len(rows)} trajectories"
    for row, block in zip(rows, [lines[i : i + 4] for i in range(1, len(lines), 4)], strict=True):
        raw = json.loads(Path(str(row["path"])).read_bytes())
        assert block[0] == f"{row['id']}  {row['outcome']} ({row['outcome_source']})"
        assert block[1] == f"  mini-swe-agent · task {raw['instance_id']} · {row['model']}"
        assert block[2].startswith(f"  {row['steps']} steps · tokens ")
        tools = dict(part.rsplit(" ", 1) for part in block[3].removeprefix("  tools: ").split(", "))
        assert sum(map(int, tools.values())) == row["tool_calls"]


def test_wide_output_is_a_table_with_short_categories(
    run_cli: Callable[..., object], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentlens.cli._app import console

    monkeypatch.setattr(console, "width", 220)
    result = run_cli("inspect", str(MINI))
    rows = _json_rows(run_cli, MINI)
    out = result.out  # type: ignore[attr-defined]
    assert "tools by category" in out
    for row in rows:
        counts = row["categories"]
        assert isinstance(counts, dict)
        most, n = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]  # shown first
        short = {"run_command": "run", "read_file": "read", "list_dir": "list"}.get(most, most)
        assert f"{short} {n}," in out


def test_token_counts_are_shown_in_k_and_m() -> None:
    from agentlens.cli.inspect_cmd import human

    assert [human(n) for n in (0, 999, 1000, 258_532, 999_949, 1_000_000, 12_100_000)] == [
        "0",
        "999",
        "1.0k",
        "258.5k",
        "999.9k",
        "1.0M",
        "12.1M",
    ]


def test_a_trace_that_records_no_tokens_says_so_rather_than_0(
    run_cli: Callable[..., object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Grok CLI session records no token counts: `tokens 0 in, 0 out` read as a run that
    used none, while its unknown cost beside it said `-`."""
    from agentlens.cli._app import console

    grok = FORMATS / "grok-cli"
    (row,) = _json_rows(run_cli, grok)
    assert [row[k] for k in ("prompt_tokens", "completion_tokens", "cached_tokens")] == [None] * 3
    lines = run_cli("inspect", str(grok)).out.splitlines()  # type: ignore[attr-defined]
    assert "  9 steps · tokens - · cost -" in lines
    monkeypatch.setattr(console, "width", 220)
    table = run_cli("inspect", str(grok)).out  # type: ignore[attr-defined]
    row = next(line for line in table.splitlines() if "grok-session-test" in line)
    assert [cell.strip() for cell in row.split("│")][-3:-1] == ["-", "-"]  # tokens, cost


def test_a_run_with_an_empty_patch_says_why_it_was_never_evaluated(
    run_cli: Callable[..., object],
) -> None:
    """SWE-bench's results.json lists two doubao runs under `empty_patch_ids`: inspect said only
    "not evaluated", which hid that the agent submitted nothing."""
    run = DATA / "swe-agent-java" / "20240825_SWE-agent_doubao-pro-128k"
    result = run_cli("inspect", str(run))
    lines = [line for line in result.out.splitlines() if "not evaluated" in line]  # type: ignore[attr-defined]
    assert len(lines) == 2, result.out  # type: ignore[attr-defined]
    assert all(
        line.endswith("unknown (results.json: empty patch, not evaluated)") for line in lines
    )


def test_formats_says_what_each_format_reads_not_its_class(
    run_cli: Callable[..., object],
) -> None:
    """`agentlens formats` printed `atif  agentlens.formats.atif:AtifReader`: the class path
    tells a user nothing about which agent's files a format takes."""
    result = run_cli("formats")
    assert result.code == 0  # type: ignore[attr-defined]
    lines = result.out.splitlines()[:-1]  # type: ignore[attr-defined]  # last: the build line
    assert [line.split()[0] for line in lines] == list(READERS)
    assert not any(":" in line.split()[1] or "agentlens.formats" in line for line in lines)
    assert "atif               ATIF v1.0 - v1.8" in lines[list(READERS).index("atif")]
    assert all(len(line) <= 80 for line in lines)  # one terminal line each


def test_json_names_the_converted_file_read_beside_its_original(
    run_cli: Callable[..., object], tmp_path: Path
) -> None:
    trace = next((DATA / "mini-swe-agent-swebv" / "trajs").glob("*/*.traj.json"))
    assert run_cli("convert", str(trace), "--to", "jsonl", "-o", str(tmp_path)).code == 0  # type: ignore[attr-defined]
    (converted,) = tmp_path.glob("*.jsonl")
    result = run_cli("inspect", "--json", str(converted))
    (row,) = [json.loads(line) for line in result.out.splitlines()]  # type: ignore[attr-defined]
    assert (row["path"], row["read_from"]) == (str(trace), str(converted))


def test_lenient_says_it_matters_only_with_format_or_strict(run_cli: Callable[..., object]) -> None:
    """`--lenient` said "Accept non-conformant files", yet a detected ATIF look-alike is read
    best-effort without it; only `--format` or `--strict` refuse one unless `--lenient`."""
    look_alike = str(FORMATS / "atif-like-openagents" / "trajectory.json")
    assert run_cli("inspect", look_alike).code == 0  # type: ignore[attr-defined]
    assert run_cli("inspect", "--strict", look_alike).code == 1  # type: ignore[attr-defined]
    assert run_cli("inspect", "--strict", "--lenient", look_alike).code == 0  # type: ignore[attr-defined]
    shown = " ".join(run_cli("inspect", "--help").out.split())  # type: ignore[attr-defined]
    assert "--lenient With --format or --strict:" in shown


@pytest.mark.parametrize("command", [["inspect"], ["cohort"], ["convert", "--to", "jsonl"]])
def test_a_file_named_twice_is_read_once_with_a_note(
    command: list[str], tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    """`inspect F F` said `failed: F [format unknown]: read twice` and exited 1, though F was
    read (its format known) and nothing was lost: a note now, naming no format, and exit 0."""
    trace = str(FORMATS / "swe-agent" / "ctf__crypto__katy.traj")
    out = ["-o", str(tmp_path)] if command[0] == "convert" else []
    result = run_cli(*command, *out, trace, trace)
    assert f"note: {trace}: named again: read once" in result.err  # type: ignore[attr-defined]
    assert "failed" not in result.err  # type: ignore[attr-defined]
    assert result.code == 0  # type: ignore[attr-defined]
