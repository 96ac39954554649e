"""The one rule for "did this step fail", on real steps of ../shared/data whose format has no
error flag: code a result only shows (a diff, a file window, a file read, an echoed heredoc) is
no error report; real failures still are. `benchmarks/step_failure.py` counts every change."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlens.formats.load import read_path
from agentlens.reviews.judge.compact import compact
from agentlens.reviews.telemetry import trajectory_telemetry
from agentlens.step_failure import failed
from agentlens.stepvalue.projection import coding_states
from agentlens.trajectory import Step, Trajectory
from agentlens.viewer.payload import step_dict, totals
from tests.conftest import BENCH, DATA

RUNS = BENCH / "trajectories"
JAVA = DATA / "swe-agent-java"
DEEPSEEK_4486 = (
    JAVA / "20240825_SWE-agent_deepseek-coder-v2/trajs/fasterxml__jackson-databind-4486.traj"
)
SWE_AGENT = DATA / "formats" / "swe-agent"


def step(path: Path, index: int) -> Step:
    (traj,) = read_path(path)
    found = traj.steps[index]
    assert found.index == index and found.is_error is None  # a verdict the rule infers
    return found


@pytest.mark.parametrize(
    ("path", "index", "what"),
    [
        (DEEPSEEK_4486, 9, "SWE-agent's `submit`: the patch, whose Java says `throws Exception`"),
        (DEEPSEEK_4486, 7, "SWE-agent's `open` window of EnumDeserializer.java"),
        (DEEPSEEK_4486, 4, "SWE-agent's `edit`: the edited file's window"),
        (
            RUNS
            / "astropy__astropy-13236/astropy__astropy-13236-logs-gpt-4.1-fail-24923087457_pta.json",
            6,
            "`head -1260 table.py | tail -40`: `except Exception:` in the file",
        ),
        (
            RUNS
            / "pallets__flask-5014/pallets__flask-5014-logs-gpt-5.3-codex-pass-25000713727_pta.json",
            4,
            "`cat > repro.py <<'PY'`: the heredoc echoed back, `except Exception as e:`",
        ),
        (
            RUNS / "pydata__xarray-3993/pydata__xarray-3993-logs-gpt-4o-fail-25007092954_pta.json",
            20,
            'an edit\'s `cat -n` snippet: `print(f"Error in DataArray.integrate: {e}")`',
        ),
    ],
)
def test_code_a_result_only_shows_is_no_failure(path: Path, index: int, what: str) -> None:
    assert not failed(step(path, index)), what


@pytest.mark.parametrize(
    ("path", "index", "what"),
    [
        (DEEPSEEK_4486, 5, "`javac: command not found`"),
        (
            RUNS
            / "sphinx-doc__sphinx-10323/sphinx-doc__sphinx-10323-logs-gpt-4.1-fail-24959197350_pta.json",
            41,
            "`ls -l /testbed/index.rst`: No such file or directory (a listing that failed)",
        ),
        (
            RUNS
            / "django__django-11066/django__django-11066-logs-gpt-4o-pass-25007092492_pta.json",
            17,
            "the editor's `ERROR: No replacement was performed` (missed before)",
        ),
        (
            RUNS
            / "astropy__astropy-13236/astropy__astropy-13236-logs-gpt-4o-fail-25007092492_pta.json",
            9,
            "`python reproduce_issue.py`: a SyntaxError without a traceback header (missed before)",
        ),
        (
            RUNS
            / "pylint-dev__pylint-4970/pylint-dev__pylint-4970-logs-gemini-2.5-pro-fail-24945658058_pta.json",
            30,
            "`The file was edited successfully. ERROR: Invalid `path` parameter` (missed before)",
        ),
        (SWE_AGENT / "ctf__crypto__BabyEncryption.traj", 9, "an edit SWE-agent's linter refused"),
        (
            SWE_AGENT / "ctf__forensics__flash.traj",
            2,
            "`strings: 'flash_….img': No such file` (the program's own diagnostic, cut short)",
        ),
    ],
)
def test_real_failures_still_count(path: Path, index: int, what: str) -> None:
    assert failed(step(path, index)), what


def test_the_judge_sees_swe_agent_java_submits_as_code_and_javac_as_an_error() -> None:
    """The judge's transcript marked the submitted patch, the file window and the edit ` ERROR`
    because the Java they show says `Exception`; now only the failed `javac` is."""
    (traj,) = read_path(DEEPSEEK_4486)
    lines = compact(traj, 10**6).text.splitlines()
    marked = sorted(int(x[2 : x.index("]")]) for x in lines if x.startswith("[S") and " ERROR" in x)
    assert marked == [5]


def test_every_caller_asks_the_same_rule() -> None:
    """Telemetry, the viewer and step value's `last_status` give the judge's verdict."""
    (traj,) = read_path(DEEPSEEK_4486)
    assert trajectory_telemetry(traj).tools["submit"] == [1, 1]
    assert totals(traj)["errors"] == 1
    assert [step_dict(s, None)["failed"] for s in traj.steps].count(True) == 1
    states = coding_states(traj)
    status = {s.index: states[i + 1]["last_status"] for i, s in enumerate(_agent_steps(traj))}
    assert status[5] == "error" and status[9] == status[7] == "ok"


def _agent_steps(traj: Trajectory) -> list[Step]:
    return [s for s in traj.steps if s.kind in ("tool", "agent")]


def shell_step(command: str, observation: str) -> Step:
    return Step(index=0, kind="tool", command=command, observation=observation)


GO_TEST = """--- FAIL: TestParse (0.00s)
    parse_test.go:14: unexpected error: bad token
FAIL
FAIL\texample.com/parse\t0.003s
"""


def test_a_go_test_failure_is_no_diff_header() -> None:
    """`--- FAIL:` of `go test` began "diff mode" and hid the failure; a header needs `+++ `."""
    assert failed(shell_step("go test ./...", GO_TEST))


def test_a_diff_with_its_header_still_is_code() -> None:
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-raise ValueError\n+raise TypeError\n"
    assert not failed(shell_step("git diff", diff))


@pytest.mark.parametrize(
    ("command", "observation"),
    [
        ("make build", "12:01:01 compiling\n12:01:02 Error: build failed\n"),
        ("python run.py 2>&1 | grep -n Error", "3:ValueError: bad\n"),
    ],
)
def test_numbered_lines_outside_a_listing_are_the_tools_report(
    command: str, observation: str
) -> None:
    """A clock time or a lone `grep -n` hit is no file listing: its error counts."""
    assert failed(shell_step(command, observation))


def test_a_run_of_consecutive_numbers_still_is_a_listing() -> None:
    listing = "41:    try:\n42:        run()\n43:    except ValueError as error:\n"
    assert not failed(shell_step("python show.py", listing))


@pytest.mark.parametrize(
    ("command", "observation"),
    [
        ("cat src/io.py", 'def read(path):\n    raise OSError("No such file or directory")\n'),
        ("grep -rn 'Permission denied' src", 'src/io.py:3:    msg = "Permission denied"\n'),
        ("grep -rn 'Permission denied' src", "src/io.py:3:# Permission denied\n"),
    ],
)
def test_file_text_a_read_shows_is_no_access_failure(command: str, observation: str) -> None:
    assert not failed(shell_step(command, observation))


@pytest.mark.parametrize(
    "observation",
    [
        "cat: x.py: No such file or directory\n",
        "grep: src/secret: Permission denied\n",
        "bash: rg: command not found\n",
        "/bin/sh: 1: rg: not found\n",
    ],
)
def test_the_programs_own_diagnostic_is_an_access_failure(observation: str) -> None:
    assert failed(shell_step("cat x.py", observation))


def test_the_verdict_cache_keeps_digests_not_the_text() -> None:
    """Whole results and commands as keys held ~130 MB of CJK/emoji text for the viewer's
    lifetime (`benchmarks/step_failure_cache.py`); a 16-byte digest stands for them now."""
    from agentlens import step_failure

    wide = shell_step("echo " + "🙂" * 4000, "错误🙂" * 2000)
    assert not failed(wide) and failed(shell_step("go test ./...", GO_TEST))
    assert all(len(key) == 16 for key in step_failure._verdicts)
    assert len(step_failure._verdicts) <= step_failure.CACHED_VERDICTS
