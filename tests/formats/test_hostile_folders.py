"""Input folders and files built to stop the walker or the opener: a tree deeper than Python's
recursion limit, a file cut short while it is read, a FIFO put in a file's place after it was
looked at, and a kernel file whose size says nothing (`/proc/kmsg`). Each costs at most its own
line; the batch goes on and nothing waits for ever (`docs/security.md`, "Folders and files")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.whole_process import SRC, agentlens

GEMINI = "formats/gemini-cli/session-2025-10-27T19-55-981c87cb.json"
CLAUDE = "formats/claude-code/marot-spotter/short.jsonl"


def python(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                          text=True, env=env, timeout=60)  # fmt: skip


@pytest.mark.parametrize("named", ["folder", "glob"])
def test_a_tree_deeper_than_the_recursion_limit_is_walked(
    data_dir: Path, tmp_path: Path, named: str
) -> None:
    """`os.walk` and `glob`'s `**` (Python 3.11) nest a call per folder: a trace 1100 folders
    down stopped every command with `internal error (RecursionError)`, named as its folder or
    as `folder/**/*.json`, and no file of the batch was read."""
    session = (data_dir / GEMINI).read_bytes()
    deep = str(tmp_path)
    for _ in range(1100):  # one at a time: `mkdir(parents=True)` recurses too
        deep += "/d"
        os.mkdir(deep)
    Path(deep, "deep.json").write_bytes(session)
    (tmp_path / "top.json").write_bytes(session)
    spec = str(tmp_path) if named == "folder" else f"{tmp_path}/**/*.json"
    try:
        shown = agentlens("inspect", "--json", spec)
    finally:
        _remove_deep(Path(deep))
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert len(shown.stdout.splitlines()) == 2


def _remove_deep(deep: Path) -> None:
    """One folder at a time, from the bottom: `shutil.rmtree` (pytest's clean-up) recurses."""
    (deep / "deep.json").unlink()
    while deep.name == "d":
        deep.rmdir()
        deep = deep.parent


CUT_WHILE_READ = """
import sys
from agentlens.formats import load
from agentlens.formats.claude_code import ClaudeCodeReader

load.LINES_FROM = 1  # a file past the first 64 KiB is read as a large one
read = ClaudeCodeReader.read

def cut_then_read(self, path, data):  # another process cuts the file as it is being read
    with open(path, "r+b") as handle:
        handle.truncate(int(sys.argv[2]))
    return read(self, path, data)

ClaudeCodeReader.read = cut_then_read
try:
    trajectory = load.read_path(sys.argv[1])[0]
    print(len(trajectory.steps), "steps")
    print(*trajectory.metadata.get("warnings", []), sep="\\n")
except load.TraceError as exc:
    print("failed:", exc.reason)
"""


def test_a_large_file_cut_short_while_read_ends_early(data_dir: Path, tmp_path: Path) -> None:
    """A large JSONL file was mapped (mmap): cut short while being read (a log rotated by
    copytruncate), its pages past the new end killed the process with SIGBUS, no line said."""
    big = tmp_path / "session.jsonl"
    big.write_bytes((data_dir / CLAUDE).read_bytes() * 20)
    assert big.stat().st_size > 128 * 1024
    shown = python(CUT_WHILE_READ, str(big), "4096")
    assert shown.returncode == 0, (shown.returncode, shown.stderr[-2000:])
    assert " steps\n" in shown.stdout or shown.stdout.startswith("failed: "), shown.stdout


@pytest.mark.parametrize("cut", ["to nothing", "at a line's end"])
def test_a_large_file_cut_at_a_line_while_read_says_so(
    data_dir: Path, tmp_path: Path, cut: str
) -> None:
    """Cut at a line's end while read (copytruncate leaves 0 bytes), a large JSONL file gave a
    shorter trajectory with no warning: it looked like a whole run (or "0 steps read: is it
    really claude-code?")."""
    session = (data_dir / CLAUDE).read_bytes()
    big = tmp_path / "session.jsonl"
    big.write_bytes(session * 20)
    size = 0 if cut == "to nothing" else len(session) * 10
    shown = python(CUT_WHILE_READ, str(big), str(size))
    assert shown.returncode == 0, (shown.returncode, shown.stderr[-2000:])
    said = f"file shrank from {len(session) * 20} to {size} bytes while it was read"
    assert said in shown.stdout, shown.stdout
    assert "is it really" not in shown.stdout, shown.stdout


SWAPPED = """
import os, sys
from agentlens.formats import load

load._refuse_special = lambda path: None  # the FIFO took the file's place after this look
try:
    load.read_path(sys.argv[1])
except load.NotAFileError as exc:
    print(exc.reason)
"""


def test_a_fifo_swapped_in_after_the_check_is_not_waited_for(tmp_path: Path) -> None:
    """The file was checked by its path, then opened by its path: a FIFO put there in between
    was opened, and the open waited for a writer for ever."""
    os.mkfifo(tmp_path / "run.jsonl")
    shown = python(SWAPPED, str(tmp_path / "run.jsonl"))
    assert shown.stdout == "cannot read a FIFO: only regular files are traces\n", shown.stderr


SWAPPED_LARGE = """
import os, sys
from agentlens.formats import load

path, large = sys.argv[1], sys.argv[2]
os_open = os.open

def swap_then_open(name, *args, **kwargs):  # a larger file takes the place of the one looked at
    if os.fspath(name) == path and os.path.exists(large):
        os.replace(large, path)
    return os_open(name, *args, **kwargs)

load.check_file_size(load.Path(path))  # the look by path: under the cap
os.open = swap_then_open
try:
    load.read_path(path)
    print("read")
except load.TraceError as exc:
    print(exc.reason)
"""


def test_a_file_over_the_cap_swapped_in_after_the_look_is_refused(
    data_dir: Path, tmp_path: Path
) -> None:
    """The input cap was checked on the path's `stat`, then the path was opened: a file swapped
    in between (a sparse 100 GiB one) was read whatever its size. The cap is now checked on the
    open file. Here a real trace padded to 2 MiB (sparse) under a 1 MiB cap."""
    session = tmp_path / "session.json"
    session.write_bytes((data_dir / GEMINI).read_bytes())
    large = tmp_path / "large.json"
    with large.open("wb") as handle:
        handle.write((data_dir / GEMINI).read_bytes())
        handle.truncate(2 << 20)
    env = {**os.environ, "PYTHONPATH": SRC, "AGENTLENS_MAX_FILE_SIZE": "1M"}
    shown = subprocess.run([sys.executable, "-c", SWAPPED_LARGE, str(session), str(large)],
                           capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    assert not large.exists(), "the swap was not made"
    expected = "file is 2.0 MiB, over the 1.0 MiB input cap (raise it with --max-file-size"
    assert shown.stdout.startswith(expected), (shown.stdout, shown.stderr[-2000:])


KMSG = Path("/proc/kmsg")
needs_kmsg = pytest.mark.skipif(
    not os.access(KMSG, os.R_OK) or os.geteuid() != 0, reason="needs /proc/kmsg readable (root)"
)


@needs_kmsg
@pytest.mark.parametrize("name", ["kmsg.jsonl", "results.json"])
def test_a_link_to_proc_kmsg_is_not_read(data_dir: Path, tmp_path: Path, name: str) -> None:
    """`/proc/kmsg` is a regular file of size 0 whose read waits for the next kernel message
    (and takes it from the host's log): a link to it named like a trace, or like a trial's
    `results.json` beside one, hung the batch. A file of size 0 is now not read at all."""
    (tmp_path / "session.json").write_bytes((data_dir / GEMINI).read_bytes())
    (tmp_path / name).symlink_to(KMSG)
    shown = agentlens("inspect", "--json", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 1


def test_a_recursive_glob_follows_no_link_to_a_folder(data_dir: Path, tmp_path: Path) -> None:
    """`glob`'s `**` follows links to folders: two links to their own folder (`a -> .`, `b -> .`)
    made `folder/**/*.json` try 2^40 paths, a hang. It now goes as a folder walk does."""
    (tmp_path / "session.json").write_bytes((data_dir / GEMINI).read_bytes())
    (tmp_path / "a").symlink_to(".")
    (tmp_path / "b").symlink_to(".")
    shown = agentlens("inspect", "--json", f"{tmp_path}/**/*.json")
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 1


def test_a_glob_ending_in_two_stars_reads_each_file_once(data_dir: Path, tmp_path: Path) -> None:
    """`runs/**` named the folders as well as the files below them: each folder was walked,
    and every file it held was then a "read twice" failure (exit 1)."""
    (tmp_path / "run" / "task").mkdir(parents=True)
    (tmp_path / "run" / "task" / "session.json").write_bytes((data_dir / GEMINI).read_bytes())
    shown = agentlens("inspect", "--json", f"{tmp_path}/**")
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 1


def test_a_recursive_glob_reads_a_file_in_a_folder_it_names_once(
    data_dir: Path, tmp_path: Path
) -> None:
    """`plain/**/*` named `plain/sub` as well as `plain/sub/a.jsonl`: the folder was walked, and
    its file was then a "read twice" failure (exit 1)."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.jsonl").write_bytes((data_dir / CLAUDE).read_bytes())
    shown = agentlens("inspect", "--json", f"{tmp_path}/**/*")
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 1


def test_a_recursive_glob_skips_a_link_to_a_folder_it_matches(
    data_dir: Path, tmp_path: Path
) -> None:
    """`gl/**/*` matched the links `gl/a -> .` and `gl/b -> .` by their names and walked them:
    every file was read again through each (4 "read twice" failures, exit 1). A link to a
    folder is now skipped, with its reason, as a folder walk skips it."""
    (tmp_path / "x.jsonl").write_bytes((data_dir / CLAUDE).read_bytes())
    (tmp_path / "a").symlink_to(".")
    (tmp_path / "b").symlink_to(".")
    shown = agentlens("--debug", "inspect", "--json", f"{tmp_path}/**/*")
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 1
    assert shown.stderr.count("a link to a folder, not followed") == 2, shown.stderr


def test_a_glob_walks_no_link_to_a_folder_a_wildcard_before_two_stars_meets(
    data_dir: Path, tmp_path: Path
) -> None:
    """`*/**/*.jsonl` beside `a -> run`: `glob` follows the link the `*` meets, and the `**`
    below it read `run`'s file again ("read twice", exit 1). The link is now skipped."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "x.jsonl").write_bytes((data_dir / CLAUDE).read_bytes())
    (tmp_path / "a").symlink_to("run")
    shown = agentlens("--debug", "inspect", "--json", f"{tmp_path}/*/**/*.jsonl")
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 1
    assert "a link to a folder, not followed" in shown.stderr, shown.stderr


def test_a_glob_from_the_root_walks_the_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """`/**/b.jsonl` walked the working folder: its head, the part before `**`, was "". (The
    root, which cannot be listed here, is named, for the batch to say why.)"""
    from agentlens.formats.path_glob import expand

    listed: list[str] = []

    def list_nothing(folder: str) -> None:  # the folder the walk starts from, and no further
        listed.append(folder)
        raise PermissionError(folder)

    monkeypatch.setattr(os, "scandir", list_nothing)
    assert list(expand(f"{os.sep}**{os.sep}b.jsonl")) == [os.sep]
    assert listed == [os.sep]


def test_a_recursive_glob_walks_a_hidden_folder_it_names(data_dir: Path, tmp_path: Path) -> None:
    """`h/**/.cache/*.jsonl` found nothing (`glob` finds `h/sub/.cache/x.jsonl`): no hidden
    folder was walked, even one the pattern names."""
    from agentlens.formats.path_glob import expand

    for folder in ("sub/.cache", ".cache", "sub/.other/.cache", ".hid"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "x.jsonl").write_bytes((data_dir / CLAUDE).read_bytes())
    for pattern in ("**/.cache/*.jsonl", "**/.*/*.jsonl", "**/*", "**/.hid/*", "sub/**"):
        absolute = f"{tmp_path}/{pattern}"
        assert sorted(expand(absolute)) == _files_glob_names(absolute), pattern
    assert list(expand(f"{tmp_path}/**/.cache/*.jsonl"))


def _files_glob_names(pattern: str) -> list[str]:
    """What `glob` names, less what lies in a folder it names (the batch walks that folder)."""
    import glob

    named = [os.path.normpath(p) for p in glob.glob(pattern, recursive=True)]
    folders = {p for p in named if os.path.isdir(p) and not os.path.islink(p)}
    return sorted(p for p in named if not any(p.startswith(f + os.sep) for f in folders))


@pytest.mark.parametrize(
    "pattern",
    ["**/*.json", "**/*.jsonl", "formats/*/*.json", "**/trajectories", "formats/c*/**/*.jsonl",
     "formats/**/subagents/*.jsonl", "**/*.eval", "**/*", "formats/**", "**/trajectories/*",
     "*/", "**/", "formats/[cg]*/*", "formats/*/marot-spotter/*", "formats/*/**/*.jsonl",
     "formats//*/*.json"],
)  # fmt: skip
def test_a_recursive_glob_names_what_glob_names_on_real_folders(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, pattern: str
) -> None:
    from agentlens.formats.path_glob import expand

    monkeypatch.chdir(data_dir)
    assert sorted(expand(pattern)) == _files_glob_names(pattern)
    absolute = f"{data_dir}/{pattern}"
    assert sorted(expand(absolute)) == _files_glob_names(absolute)
