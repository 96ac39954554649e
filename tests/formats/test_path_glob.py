"""Globs over hostile run folders, built from real shared files: past its first wildcard a glob
goes through no link to a folder (it names the link, for the batch to skip with its reason), a
folder it cannot list is a failure naming it, a link loop is skipped for what it is, a file
named like the glob does not stand for it, and a pattern that names nothing says how to match a
`[` in a real name (`docs/security.md`, "Folders and files")."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.whole_process import SRC, agentlens

GEMINI = "formats/gemini-cli/session-2025-10-27T19-55-981c87cb.json"
CLAUDE = "formats/claude-code/marot-spotter/short.jsonl"
LINK_SKIPPED = "a link to a folder, not followed: name it to read it"


def _runs_beside_an_outside_folder(data_dir: Path, tmp_path: Path) -> Path:
    """`runs/task0/y/session.json`, and two ways out to `outside/y/secret.jsonl`: a task folder
    that is a link (`runs/task1 -> ../outside`) and a fixed name after a wildcard that is one
    (`runs/task2/y -> ../../outside/y`)."""
    runs = tmp_path / "runs"
    (runs / "task0" / "y").mkdir(parents=True)
    (runs / "task0" / "y" / "session.json").write_bytes((data_dir / GEMINI).read_bytes())
    (tmp_path / "outside" / "y").mkdir(parents=True)
    (tmp_path / "outside" / "y" / "secret.jsonl").write_bytes((data_dir / CLAUDE).read_bytes())
    (runs / "task1").symlink_to("../outside")
    (runs / "task2").mkdir()
    (runs / "task2" / "y").symlink_to("../../outside/y")
    return runs


@pytest.mark.parametrize("pattern", ["*/y/*", "*/y", "*/y/**", "t*/y/*.json*", "**/y/*"])
def test_a_glob_reads_nothing_through_a_link_to_a_folder_past_its_first_wildcard(
    data_dir: Path, tmp_path: Path, pattern: str
) -> None:
    """`glob` followed `runs/task1 -> ../outside` (a wildcard met it) and `runs/task2/y ->
    ../../outside/y` (a fixed name after a wildcard): `runs/*/y/*` read `outside`'s file, then
    again ("read twice", exit 1). Each link is now one skipped line naming it, as in a walk."""
    runs = _runs_beside_an_outside_folder(data_dir, tmp_path)
    shown = agentlens("--debug", "inspect", "--json", f"{runs}/{pattern}")
    assert "secret" not in shown.stdout + shown.stderr
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 1
    skipped = [line for line in shown.stderr.splitlines() if line.startswith("skipped: ")]
    links = (runs / "task1", runs / "task2" / "y")
    assert sorted(skipped) == [f"skipped: {link}: {LINK_SKIPPED}" for link in links]


def test_two_globs_that_meet_the_same_link_skip_it_once(data_dir: Path, tmp_path: Path) -> None:
    """`runs/*/y/*.json runs/*/y/*.jsonl` both name `runs/task1` and `runs/task2/y`: the second
    time, each was a "read twice" failure (exit 1), though neither was read at all."""
    runs = _runs_beside_an_outside_folder(data_dir, tmp_path)
    shown = agentlens("--debug", "inspect", "--json", f"{runs}/*/y/*.json", f"{runs}/*/y/*.jsonl")
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 1
    assert shown.stderr.count(LINK_SKIPPED) == 2, shown.stderr


def test_a_folder_named_before_the_first_wildcard_is_followed_as_a_link(
    data_dir: Path, tmp_path: Path
) -> None:
    """What the user typed is theirs: a data folder that is a link, named before the first
    wildcard, is followed, as it is walked when named alone."""
    runs = _runs_beside_an_outside_folder(data_dir, tmp_path)
    (tmp_path / "data").symlink_to(runs / "task0")
    shown = agentlens("inspect", "--json", f"{tmp_path}/data/*/*.json")
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 1


def test_a_link_typed_before_two_stars_alone_is_walked(data_dir: Path, tmp_path: Path) -> None:
    """`data/**` names `data` itself, which the user typed: a link there was skipped as "not
    followed" (and nothing read, exit 2), while `data/**/*.json` went through it."""
    runs = _runs_beside_an_outside_folder(data_dir, tmp_path)
    (tmp_path / "data").symlink_to(runs / "task0")
    for pattern in ("data/**", "data/**/"):
        shown = agentlens("inspect", "--json", f"{tmp_path}/{pattern}")
        assert shown.returncode == 0, shown.stderr
        assert len(shown.stdout.splitlines()) == 1


def test_a_recursive_glob_names_a_link_to_a_folder_it_would_have_walked(
    data_dir: Path, tmp_path: Path
) -> None:
    """`runs/**/*.json` passed `runs/task0/more -> ../../outside` by without a word, where the
    folder walk names every link to a folder it does not follow."""
    runs = _runs_beside_an_outside_folder(data_dir, tmp_path)
    (runs / "task0" / "more").symlink_to("../../outside")
    shown = agentlens("--debug", "inspect", "--json", f"{runs}/**/*.json")
    assert shown.returncode == 0, shown.stderr
    assert f"skipped: {runs / 'task0' / 'more'}: {LINK_SKIPPED}" in shown.stderr.splitlines()


def test_a_link_loop_or_a_link_to_nothing_is_skipped_for_what_it_is(
    data_dir: Path, tmp_path: Path
) -> None:
    """`runs/*` met `loop -> loop` and `gone -> nowhere`, names without a suffix, and skipped
    each as a "sidecar (an outcome, metadata or notes file, by its name)"."""
    runs = _runs_beside_an_outside_folder(data_dir, tmp_path)
    (runs / "loop").symlink_to("loop")
    (runs / "gone").symlink_to("nowhere")
    for spec in (f"{runs}/*", str(runs)):
        shown = agentlens("--debug", "inspect", "--json", spec)
        assert shown.returncode == 0, shown.stderr
        lines = shown.stderr.splitlines()
        assert f"skipped: {runs / 'loop'}: cannot read: Too many levels of symbolic links" in lines
        assert f"skipped: {runs / 'gone'}: cannot read: No such file or directory" in lines


def _without_permission_override() -> list[str]:
    """A command prefix under which a folder without permissions cannot be read: as root, the
    capabilities that override them dropped (`setpriv`)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("root without setpriv: no folder is unreadable")
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


@pytest.mark.parametrize("pattern", ["*/session.json", "*/*.json", "**/*.json", "lo*/x"])
def test_a_folder_a_glob_cannot_list_is_a_failure_naming_it(
    data_dir: Path, tmp_path: Path, pattern: str
) -> None:
    """`glob` passes over a folder it cannot list: a run folder without read permission was
    left out of `runs/*/*.json` without a word, and the command said all was well (exit 0)."""
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "session.json").write_bytes((data_dir / GEMINI).read_bytes())
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "session.json").write_bytes((data_dir / GEMINI).read_bytes())
    locked.chmod(0)
    command = [sys.executable, "-m", "agentlens", "inspect", "--json", f"{tmp_path}/{pattern}"]
    env = {**os.environ, "PYTHONPATH": SRC}
    try:
        shown = subprocess.run([*_without_permission_override(), *command], env=env,
                               capture_output=True, text=True, timeout=60)  # fmt: skip
    finally:
        locked.chmod(0o755)
    assert shown.returncode == 1, shown.stderr
    fixed = pattern.split("/")[-1]  # a fixed name is looked up: the path it would be fails
    named = locked if glob.has_magic(fixed) else locked / fixed
    assert f"failed: {named} [format unknown]: cannot read: Permission denied" in shown.stderr
    assert "Traceback" not in shown.stderr
    assert len(shown.stdout.splitlines()) == (0 if pattern.startswith("lo") else 1)


def _run_without_permission_override(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "agentlens", *args]
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run([*_without_permission_override(), *command], env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip


@pytest.mark.parametrize(("spec", "failed"), [("", "notes.md"), ("/*/s.json", "s.json")])
def test_a_folder_that_can_be_listed_but_not_searched_fails_one_file_and_the_batch_goes_on(
    data_dir: Path, tmp_path: Path, spec: str, failed: str
) -> None:
    """`runs/noexec` (mode 644) holding `notes.md`: `Path.is_file` raised on it, and the batch
    stopped at one bare `error:` line (exit 2), the good trace never reported. `runs/*/s.json`
    also named the whole folder, so the batch failed `notes.md`, which the user never asked
    for: it fails `runs/noexec/s.json` now."""
    runs = tmp_path / "runs"
    (runs / "good").mkdir(parents=True)
    (runs / "good" / "s.json").write_bytes((data_dir / GEMINI).read_bytes())
    noexec = runs / "noexec"
    noexec.mkdir()
    (noexec / "notes.md").write_text("notes\n")
    noexec.chmod(0o644)
    try:
        shown = _run_without_permission_override("inspect", "--json", f"{runs}{spec}")
    finally:
        noexec.chmod(0o755)
    assert shown.returncode == 1, shown.stderr
    assert shown.stderr.splitlines() == [
        f"failed: {noexec / failed} [format unknown]: cannot read: Permission denied",
        "1 file failed; 1 trajectory read",
    ]
    assert len(shown.stdout.splitlines()) == 1


def test_a_file_deeper_than_path_max_fails_alone(data_dir: Path, tmp_path: Path) -> None:
    """A tree 20 folders of 250 `d`s deep: `Path.is_file` raised `ENAMETOOLONG` on the first
    folder too deep to list (named like a sidecar: no suffix), and the batch stopped (exit 2)
    with a 4,000-character `error:` line. It is one `failed:` line, naming that folder."""
    (tmp_path / "good.json").write_bytes((data_dir / GEMINI).read_bytes())
    folder = os.open(tmp_path, os.O_RDONLY)
    for _ in range(20):  # built a folder at a time: the whole path is too long to name
        os.mkdir("d" * 250, dir_fd=folder)
        below = os.open("d" * 250, os.O_RDONLY, dir_fd=folder)
        os.close(folder)
        folder = below
    deep = os.open("notes.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=folder)
    os.close(deep)
    os.close(folder)
    shown = agentlens("inspect", "--json", str(tmp_path))
    assert shown.returncode == 1, shown.stderr
    lines = shown.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("failed: "), shown.stderr
    assert lines[0].endswith(" [format unknown]: cannot read: File name too long")
    assert len(shown.stdout.splitlines()) == 1


def test_a_pattern_that_names_nothing_says_how_to_match_a_bracket_in_a_name(
    data_dir: Path, tmp_path: Path
) -> None:
    """A run folder `br[1]` (a real name) in `runs/br[1]/*`: `[1]` is a set of characters, and
    the line said only "no file matches this pattern"."""
    from agentlens.formats.stream import read_paths

    (tmp_path / "br[1]").mkdir()
    (tmp_path / "br[1]" / "session.json").write_bytes((data_dir / GEMINI).read_bytes())
    failures = read_paths([f"{tmp_path}/br[1]/*", f"{tmp_path}/br[12]/*"]).failures
    escaped = f"{tmp_path}/br[[]1]/*"
    assert [failure.reason for failure in failures] == [
        f"no file matches this pattern; {escaped} would (`[[]` is a `[`)",
        "no file matches this pattern",  # no real name it could have meant
    ]
    assert len(read_paths([escaped]).trajectories) == 1


def test_a_file_named_like_the_glob_does_not_stand_for_it(data_dir: Path, tmp_path: Path) -> None:
    """A run folder holding a file named `*.json*` took `runs/*.json*` for that one name: the
    two real traces beside it were left unread without a word, and the planted file failed."""
    (tmp_path / "a.json").write_bytes((data_dir / GEMINI).read_bytes())
    (tmp_path / "b.jsonl").write_bytes((data_dir / CLAUDE).read_bytes())
    (tmp_path / "*.json*").write_text('{"note": "planted"}')
    shown = agentlens("inspect", "--json", f"{tmp_path}/*.json*")
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 2
    assert shown.stderr == "skipped 1 non-trace file\n"


def test_a_real_name_a_glob_names_nothing_by_is_read_as_written(
    data_dir: Path, tmp_path: Path
) -> None:
    """As in a shell: `run[1].json` names no `run1.json`, so it is the file of that name."""
    (tmp_path / "run[1].json").write_bytes((data_dir / GEMINI).read_bytes())
    shown = agentlens("inspect", "--json", f"{tmp_path}/run[1].json")
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 1


def test_a_real_name_with_wildcards_named_among_others_is_read_too(
    data_dir: Path, tmp_path: Path
) -> None:
    """`find -print0 | xargs -0` names `runs/a.json runs/[ab].json`: `[ab].json` stood for its
    glob's match `a.json` alone, so it was never read, and `a.json` failed as "read twice"."""
    from agentlens.formats.load import is_pattern

    for name in ("a.json", "[ab].json"):
        (tmp_path / name).write_bytes((data_dir / GEMINI).read_bytes())
    shown = agentlens("inspect", "--json", f"{tmp_path}/a.json", f"{tmp_path}/[ab].json")
    assert shown.returncode == 0, shown.stderr
    assert f'"path":"{tmp_path}/[ab].json"' in shown.stdout, shown.stderr
    assert len(shown.stdout.splitlines()) == 2
    assert is_pattern(f"{tmp_path}/[ab].json")  # as reading takes it: its glob names a.json
    (tmp_path / "run[1].json").write_bytes(b"{}")
    assert not is_pattern(f"{tmp_path}/run[1].json")  # no run1.json: the real name alone


def test_a_link_named_and_met_by_a_folder_walk_is_read_not_also_skipped(
    data_dir: Path, tmp_path: Path
) -> None:
    """`inspect runs/latest runs`, as the glob case: the walk of `runs` met the link named
    beside it and said "skipped ... not followed: name it to read it"."""
    (tmp_path / "store" / "r1").mkdir(parents=True)
    (tmp_path / "store" / "r1" / "s.json").write_bytes((data_dir / GEMINI).read_bytes())
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "latest").symlink_to("../store/r1")
    runs = tmp_path / "runs"
    shown = agentlens("--debug", "inspect", "--json", f"{runs}/latest", str(runs))
    assert shown.returncode == 0, shown.stderr
    assert LINK_SKIPPED not in shown.stderr
    assert len(shown.stdout.splitlines()) == 1
    alone = agentlens("--debug", "inspect", "--json", f"{runs}/latest", str(tmp_path / "store"))
    # a real repeat still says so, as a note: the file was read once, nothing lost
    assert alone.returncode == 0 and "note: " in alone.stderr and "named again" in alone.stderr


def test_a_link_named_and_met_by_a_glob_is_read_not_also_skipped(
    data_dir: Path, tmp_path: Path
) -> None:
    """`inspect runs/latest 'runs/*'`: `runs/latest -> ../store/r1` was read as named, and also
    reported "skipped ... not followed: name it to read it", though it was named."""
    (tmp_path / "store" / "r1").mkdir(parents=True)
    (tmp_path / "store" / "r1" / "s.json").write_bytes((data_dir / GEMINI).read_bytes())
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "latest").symlink_to("../store/r1")
    runs = tmp_path / "runs"
    shown = agentlens("--debug", "inspect", "--json", f"{runs}/latest", f"{runs}/*")
    assert shown.returncode == 0, shown.stderr
    assert LINK_SKIPPED not in shown.stderr
    assert len(shown.stdout.splitlines()) == 1
