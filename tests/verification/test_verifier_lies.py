"""Lies a repository tells verifiers, with real bubblewrap on real repositories (the demo's calc
repository, the Maven project of `data/`): a printed line or a planted report must not turn a
failing run into a pass, nor into a skipped, unscored check."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from agentlens.demo.tiny_repo import create_repo, git
from agentlens.verification import base_index, isolation
from agentlens.verification.repo_git import run_git
from agentlens.verification.verifiers.base import VerifierSetupError, VerifyContext
from agentlens.verification.verifiers.build import RunBuildSystemTaskVerifier
from agentlens.verification.verifiers.static_analysis import StaticAnalysisVerifier
from agentlens.verification.verifiers.tests_run import RunTestsVerifier

DATA = Path(__file__).parent / "data"
PASSING_REPORT = DATA / "test_output" / "gradle_test-results" / "pass" / "TEST-demo.CalcTest.xml"


@pytest.fixture(autouse=True)
def _needs_bubblewrap() -> None:
    isolation.bubblewrap()  # the CI installs it; without it these tests must fail, not skip


@pytest.fixture
def calc(tmp_path: Path) -> Path:
    return create_repo(tmp_path / "calc")  # test_sub fails: the bug is not fixed


def test_a_planted_module_error_does_not_skip_a_failing_suite(calc: Path) -> None:
    """A conftest importing `pytest.<anything>` broke collection with `No module named
    'pytest.…'`: read as "pytest is not installed", the failing suite was skipped, unscored."""
    (calc / "conftest.py").write_text("import pytest.plugins_of_this_repository\n")
    tests = RunTestsVerifier(command=[sys.executable, "-m", "pytest", "-q"])
    result = tests.verify(VerifyContext(calc))
    assert result.status == "error" and "missing_tool" not in result.metrics, result.reason


def test_mypy_output_quoting_the_agent_does_not_skip_the_check(calc: Path) -> None:
    """No code of the agent runs under mypy, yet its text reaches the output: a revealed
    literal "No module named mypy" turned 1 type error into "skipped: install mypy"."""
    (calc / "typed.py").write_text('x: int = "s"\nreveal_type("No module named mypy")\n')
    lint = StaticAnalysisVerifier(tool="mypy", path="typed.py")
    result = lint.verify(VerifyContext(calc))
    assert (result.status, result.metrics.get("errors")) == ("fail", 1), result.reason


def test_reports_the_repository_brought_are_not_the_runs(tmp_path: Path) -> None:
    """Maven with its tests switched off (the agent's pom) ran none, yet a passing JUnit report
    planted in `target/surefire-reports/` (a real one, of the Gradle run in `data/`) was read
    as its result: "4 tests: 3 passed, 0 failed", a pass."""
    repo = tmp_path / "maven_project"
    shutil.copytree(DATA / "maven_project", repo)
    pom = repo / "pom.xml"
    skip = "<properties><skipTests>true</skipTests>"
    pom.write_text(pom.read_text().replace("<properties>", skip))
    reports = repo / "target" / "surefire-reports"
    reports.mkdir(parents=True)
    shutil.copy(PASSING_REPORT, reports)
    result = RunTestsVerifier(runner="maven").verify(VerifyContext(repo, timeout_s=120))
    assert result.status == "error" and "Tests are skipped" in result.metrics["output_tail"]


def test_a_test_printing_build_success_does_not_pass_a_failed_build(tmp_path: Path) -> None:
    """The spec's own pattern, `\\[INFO\\] BUILD SUCCESS`, matched once in a failed Maven build
    (2 of the project's tests fail; exit code 1, `BUILD FAILURE`): the once was the agent's
    test printing it. The build task passed."""
    repo = tmp_path / "maven_project"
    shutil.copytree(DATA / "maven_project", repo)
    test = repo / "src" / "test" / "java" / "demo" / "CalcTest.java"
    says = '    @Test public void says() { System.out.println("[INFO] BUILD SUCCESS"); }\n}'
    test.write_text(test.read_text().rstrip().removesuffix("}") + says.lstrip("\n"))
    spec = RunBuildSystemTaskVerifier(
        build_system_name="maven", tasks=["test"], reg_exp_pattern=r"\[INFO\] BUILD SUCCESS"
    )
    result = spec.verify(VerifyContext(repo, timeout_s=120))
    assert (result.status, result.metrics["count"]) == ("fail", 1), result.reason
    assert result.reason.endswith("but exit code 1")


PASS_EVERY_TEST = (
    "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n"
    "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n"
)


def test_a_conftest_the_agent_ignores_itself_is_still_a_change(calc: Path) -> None:
    """Untracked files were listed with git's own ignore rules, which the agent writes too: a
    conftest passing every test, named in `.git/info/exclude`, in `core.excludesFile` or in a
    `.gitignore` it added, was no change at all to `forbidden_globs: [conftest.py]`."""
    (calc / "conftest.py").write_text(PASS_EVERY_TEST)
    (calc / ".git" / "info" / "exclude").write_text("conftest.py\n")
    (calc / "tests" / "conftest.py").write_text(PASS_EVERY_TEST)
    (calc / "tests" / ".gitignore").write_text(".gitignore\nconftest.py\n")
    (calc / "calc" / "conftest.py").write_text(PASS_EVERY_TEST)
    (calc / "elsewhere").write_text("calc/conftest.py\n")
    git(calc, "config", "core.excludesFile", str(calc / "elsewhere"))
    changed = VerifyContext(calc).changed_files()
    assert changed == {
        "conftest.py",
        "tests/conftest.py",
        "tests/.gitignore",
        "calc/conftest.py",
        "elsewhere",
    }


def test_what_the_base_revisions_gitignore_ignores_is_no_change(calc: Path) -> None:
    """A rule of the base revision ignores build output, also in a `.gitignore` the agent
    edited; the line the agent added hides nothing."""
    (calc / ".gitignore").write_text("build/\n*.log\n")
    git(calc, "add", ".gitignore")
    git(calc, "commit", "-q", "-m", "ignore build output")
    (calc / "build").mkdir()
    (calc / "build" / "out.txt").write_text("built\n")
    (calc / "run.log").write_text("ran\n")
    assert VerifyContext(calc).changed_files() == set()
    (calc / ".gitignore").write_text("build/\n*.log\nconftest.py\n")
    (calc / "conftest.py").write_text(PASS_EVERY_TEST)
    assert VerifyContext(calc).changed_files() == {".gitignore", "conftest.py"}


def test_a_folder_is_judged_by_its_rule_and_the_files_of_a_hidden_one_listed(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each ignored file was judged on its own: a base-ignored `node_modules/` of 2,000 files
    asked git for the base `.gitignore` 2,000 times (60,000 files: over ten minutes per
    listing). A folder is one rule now; the files of a folder only the agent hides are named."""
    (calc / ".gitignore").write_text("node_modules/\n")
    git(calc, "add", ".gitignore")
    git(calc, "commit", "-q", "-m", "ignore node_modules")
    for package in range(20):
        folder = calc / "node_modules" / f"p{package}"
        folder.mkdir(parents=True)
        for number in range(100):
            (folder / f"f{number}.js").write_text("x")
    (calc / "vendored" / "deep").mkdir(parents=True)
    (calc / "vendored" / "deep" / "conftest.py").write_text(PASS_EVERY_TEST)
    (calc / "vendored" / "notes.txt").write_text("n")
    (calc / ".git" / "info" / "exclude").write_text("vendored/\n")
    calls = []

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(args[1:3])
        return run_git(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(base_index, "run_git", counted)
    changed = VerifyContext(calc).changed_files()
    assert changed == {"vendored/deep/conftest.py", "vendored/notes.txt"}
    assert len(calls) < 12, calls


PASSING_TEST = "def test_sub():\n    assert True\n"


def _pristine_copy(repo: Path) -> Path:
    """The base revision's files, kept where the agent may write and git lists nothing."""
    pristine = repo / ".git" / "pristine"
    shutil.copytree(repo, pristine, ignore=shutil.ignore_patterns(".git"))
    return pristine


@pytest.mark.parametrize("trick", ["core.worktree", "skip-worktree", "assume-unchanged", "filter"])
def test_an_edited_test_the_repository_tells_git_to_overlook_is_a_change(
    calc: Path, trick: str
) -> None:
    """The agent writes the repository's config and index: each of these showed git a test it
    had edited as unchanged, so `forbidden_globs: [tests/*]` passed beside the edited test."""
    pristine = _pristine_copy(calc)
    (calc / "tests" / "test_ops.py").write_text(PASSING_TEST)
    if trick == "core.worktree":
        git(calc, "config", "core.worktree", "pristine")  # relative to .git
    elif trick == "filter":  # a clean filter showing git the base text
        git(calc, "config", "filter.same.clean", f"cat {pristine}/%f")
        (calc / ".git" / "info" / "attributes").write_text("tests/* filter=same\n")
    else:
        git(calc, "update-index", f"--{trick}", "tests/test_ops.py")
    assert VerifyContext(calc).changed_files() == {"tests/test_ops.py"}


def test_a_base_the_agent_replaced_with_its_own_commit_is_still_the_base(calc: Path) -> None:
    """`git replace BASE ITS_COMMIT` made git read the agent's commit wherever the base was
    named, even by its hash: the edited test was no change since it."""
    base = git(calc, "rev-parse", "HEAD").strip()
    (calc / "tests" / "test_ops.py").write_text(PASSING_TEST)
    git(calc, "commit", "-q", "-am", "tests pass")
    git(calc, "replace", "-f", base, "HEAD")
    assert VerifyContext(calc, base_ref=base).changed_files() == {"tests/test_ops.py"}


def test_a_base_commit_object_the_agent_rewrote_is_an_error(calc: Path) -> None:
    """git reads a loose object by its file name without checking its hash when it diffs: the
    base commit's file overwritten with the agent's commit made `git diff BASE` empty. Read
    into an index, the object is checked: the listing fails, it never passes."""
    base = git(calc, "rev-parse", "HEAD").strip()
    (calc / "tests" / "test_ops.py").write_text(PASSING_TEST)
    git(calc, "commit", "-q", "-am", "tests pass")
    head = git(calc, "rev-parse", "HEAD").strip()
    objects = calc / ".git" / "objects"
    planted = objects / base[:2] / base[2:]
    planted.chmod(0o644)
    planted.write_bytes((objects / head[:2] / head[2:]).read_bytes())
    with pytest.raises(VerifierSetupError, match=f"hash mismatch {base}"):
        VerifyContext(calc, base_ref=base).changed_files()
