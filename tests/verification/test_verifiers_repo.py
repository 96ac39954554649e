"""Verifiers on a real git repository: real edits, a real pytest run, real ruff."""

from __future__ import annotations

import json
import os
import shutil
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from agentlens.demo.tiny_repo import DEMO_SCENARIO, apply_fix, create_repo, git
from agentlens.scenarios.scenario import Scenario, load_scenario, run_scenario
from agentlens.verification import repo_git
from agentlens.verification.tree_copy import remove_tree
from agentlens.verification.verifiers import build_verifier, run_verifier
from agentlens.verification.verifiers.base import VerifyContext
from tests.conftest import needed

NO_PLUGINS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


@pytest.fixture(scope="module")
def base_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return create_repo(tmp_path_factory.mktemp("base") / "calc")


@pytest.fixture
def fixed_repo(base_repo: Path, tmp_path: Path) -> Path:
    repo = tmp_path / "calc"
    shutil.copytree(base_repo, repo)
    apply_fix(repo)
    return repo


def check(spec: dict, repo: Path, **kw) -> tuple[str, str, dict]:
    result = run_verifier(spec, VerifyContext(repo=repo, **kw))
    return result.status, result.reason, result.metrics


def test_changes_are_seen_against_the_base_revision(fixed_repo: Path) -> None:
    (fixed_repo / "notes.txt").write_text("untracked\n")
    status, reason, metrics = check(
        {"type": "NoChangesVerifier", "allowed_globs": ["calc/*", "tests/*"]}, fixed_repo
    )
    assert (status, metrics["unexpected_changed"]) == ("fail", ["notes.txt"])
    assert "notes.txt" in reason
    status, _, metrics = check(
        {
            "type": "no_changes",
            "allowed_files": ["notes.txt"],
            "allowed_globs": ["calc/*", "tests/*"],
        },
        fixed_repo,
    )
    assert status == "pass"
    status, _, metrics = check(
        {"type": "NoChangesVerifier", "allowed_globs": ["*"], "forbidden_globs": ["tests/*"]},
        fixed_repo,
    )
    assert (status, metrics["forbidden_changed"]) == ("fail", ["tests/test_ops.py"])


def test_target_files_and_new_files(fixed_repo: Path, base_repo: Path) -> None:
    assert (
        check({"type": "YesChangesVerifier", "target_files": ["calc/ops.py"]}, fixed_repo)[0]
        == "pass"
    )
    assert (
        check({"type": "YesChangesVerifier", "target_globs": ["docs/*"]}, fixed_repo)[0] == "fail"
    )
    assert (
        check({"type": "YesChangesVerifier", "target_files": ["calc/ops.py"]}, base_repo)[0]
        == "fail"
    )
    (fixed_repo / "calc" / "mul.py").write_text("def mul(a, b):\n    return a * b\n")
    assert (
        check({"type": "NewFileRegExpVerifier", "reg_exp_pattern": r"calc/\w+\.py$"}, fixed_repo)[0]
        == "pass"
    )
    # A new file committed by the agent still counts as new against the base revision.
    git(fixed_repo, "add", "-A")
    git(fixed_repo, "commit", "-q", "-m", "agent commit")
    base = git(fixed_repo, "rev-list", "--max-parents=0", "HEAD").strip()
    status, _, metrics = check(
        {"type": "NewFileRegExpVerifier", "reg_exp_pattern": r"mul\.py$"}, fixed_repo, base_ref=base
    )
    assert (status, metrics["matching"]) == ("pass", ["calc/mul.py"])
    assert (
        check(
            {"type": "NewFileRegExpVerifier", "reg_exp_pattern": r"\.rs$"},
            fixed_repo,
            base_ref=base,
        )[0]
        == "fail"
    )


def test_exact_file_match_options(fixed_repo: Path) -> None:
    """Released semantics (spec §3): trailing spaces never matter, `trim` strips the text's ends
    (not indentation), `ignore_empty_lines` drops blank lines, other changes fail by default."""
    lines = (fixed_repo / "calc" / "ops.py").read_text().splitlines()
    (fixed_repo / "spaced.py").write_text("\n\n" + "\n\n".join(x + "  " for x in lines) + "\n\n")
    (fixed_repo / "indented.py").write_text("\n".join("  " + x for x in lines))
    spec = {
        "type": "ExactFileMatchVerifier",
        "file_matches": [{"actual_file_path": "calc/ops.py", "expected_file_path": "spaced.py"}],
        "check_other_files_unchanged": False,
    }
    assert check(spec, fixed_repo)[0] == "fail"  # blank lines inserted
    assert check({**spec, "ignore_empty_lines": True}, fixed_repo)[0] == "pass"
    indented = {
        **spec,
        "file_matches": [{**spec["file_matches"][0], "expected_file_path": "indented.py"}],
    }
    assert check({**indented, "trim": True, "ignore_empty_lines": True}, fixed_repo)[0] == "fail"
    default = {k: v for k, v in spec.items() if k != "check_other_files_unchanged"}
    status, reason, _ = check({**default, "ignore_empty_lines": True}, fixed_repo)
    assert status == "fail" and "tests/test_ops.py" in reason


def test_exact_file_match_reads_expected_files_from_the_scenario_folder(
    fixed_repo: Path, tmp_path: Path
) -> None:
    """The released scenarios keep expected files beside `config.json`."""
    folder = tmp_path / "scenarios" / "fix_sub"
    folder.mkdir(parents=True)
    (folder / "expected_ops.py").write_text((fixed_repo / "calc" / "ops.py").read_text())
    match = {"actual_file_path": "calc/ops.py", "expected_file_path": "expected_ops.py"}
    config = {
        "verifiers": [
            {
                "type": "ExactFileMatchVerifier",
                "file_matches": [match],
                "check_other_files_unchanged": False,
            }
        ]
    }
    (folder / "config.json").write_text(json.dumps(config))
    result = run_scenario(load_scenario(folder / "config.json"), fixed_repo)
    assert result.results[0].status == "pass", result.results[0].reason


def test_regex_counts_with_and_without_comments(fixed_repo: Path) -> None:
    (fixed_repo / "calc" / "extra.py").write_text("# TODO: one\nx = 1  # TODO: two\ny = 'TODO'\n")
    spec = {"type": "PythonFileRegExpCountVerifier", "search_in": "calc", "reg_exp_pattern": "TODO"}
    assert check({**spec, "strict_count": True, "num_expected": 3}, fixed_repo)[0] == "pass"
    assert (
        check(
            {**spec, "uncommented_only": True, "strict_count": True, "num_expected": 1}, fixed_repo
        )[0]
        == "pass"
    )
    assert check({**spec, "num_expected": 4}, fixed_repo)[0] == "fail"
    assert check({**spec, "search_in": "missing"}, fixed_repo)[0] == "error"


def test_pytest_run_fails_before_the_fix_and_passes_after(
    base_repo: Path, fixed_repo: Path
) -> None:
    spec = {
        "type": "RunTestsVerifier",
        "runner": "pytest",
        "command": ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        "env": NO_PLUGINS,
    }
    status, reason, metrics = check(spec, base_repo)
    assert (status, metrics["tests"], metrics["failures"], metrics["passed"]) == ("fail", 2, 1, 1)
    status, reason, metrics = check(spec, fixed_repo)
    assert (status, metrics["tests"], metrics["failures"]) == ("pass", 3, 0), reason
    # Commands run in a scratch copy: the repository under review is untouched.
    assert not (fixed_repo / ".pytest_cache").exists()
    assert "?? " not in git(base_repo, "status", "--porcelain")


def test_unittest_with_coverage(fixed_repo: Path) -> None:
    needed("coverage")
    cmd = "python -m coverage run -m unittest discover -s tests -t . && python -m coverage json -o coverage.json"
    (fixed_repo / "tests" / "__init__.py").write_text("")
    (fixed_repo / "tests" / "test_ut.py").write_text(
        "import unittest\nfrom calc.ops import add\n\n\nclass T(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(1, 1), 2)\n"
    )
    status, reason, metrics = check(
        {"type": "RunTestsVerifier", "runner": "unittest", "command": cmd, "min_coverage": 50},
        fixed_repo,
    )
    assert status == "pass", reason
    assert metrics["tests"] == 1 and metrics["coverage_percent"] >= 50
    status, reason, _ = check(
        {"type": "RunTestsVerifier", "runner": "unittest", "command": cmd, "min_coverage": 100},
        fixed_repo,
    )
    assert status == "fail" and "coverage" in reason


def test_timeout_is_an_error_and_fails_the_scenario(fixed_repo: Path) -> None:
    scenario = Scenario(
        "slow", [{"type": "CommandVerifier", "command": "sleep 5", "timeout_ms": 300}]
    )
    result = run_scenario(scenario, fixed_repo)
    assert result.results[0].status == "error" and not result.passed
    assert result.results[0].duration_s < 3


def test_clean_environment_hides_secrets(fixed_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    spec = {"type": "CommandVerifier", "command": "env", "forbidden_pattern": "sk-secret|OPENAI"}
    assert check(spec, fixed_repo)[0] == "pass"


def test_ruff_and_build_command(fixed_repo: Path) -> None:
    assert (
        check({"type": "StaticAnalysisVerifier", "tool": "ruff", "path": "calc"}, fixed_repo)[0]
        == "pass"
    )
    (fixed_repo / "calc" / "bad.py").write_text("import os\n")
    status, _, metrics = check(
        {"type": "StaticAnalysisVerifier", "tool": "ruff", "path": "calc"}, fixed_repo
    )
    assert (status, metrics["errors"]) == ("fail", 1)
    spec = {
        "type": "RunBuildSystemTaskVerifier",
        "command": "python -m compileall -q calc && echo BUILD SUCCESS",
        "reg_exp_pattern": r"^BUILD SUCCESS",
    }
    assert check(spec, fixed_repo)[0] == "pass"


def test_mypy_static_analysis(fixed_repo: Path) -> None:
    spec = {
        "type": "StaticAnalysisVerifier",
        "tool": "mypy",
        "path": "calc",
        "args": ["--ignore-missing-imports"],
    }
    assert check(spec, fixed_repo)[0] == "pass"
    (fixed_repo / "calc" / "typed.py").write_text("def f() -> int:\n    return 'x'\n")
    status, _, metrics = check(spec, fixed_repo)
    assert (status, metrics["errors"]) == ("fail", 1)


def test_demo_scenario_passes_only_after_the_fix(base_repo: Path, fixed_repo: Path) -> None:
    scenario = Scenario("fix_sub", list(DEMO_SCENARIO["verifiers"]))  # type: ignore[arg-type]
    after = run_scenario(scenario, fixed_repo)
    assert after.passed, [r.reason for r in after.results]
    before = run_scenario(scenario, base_repo)
    assert not before.passed
    assert 0 < before.fraction_passed < 1


def test_unknown_verifier_type_is_a_config_error() -> None:
    from agentlens.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown verifier type"):
        build_verifier({"type": "Nope"})
    with pytest.raises(ConfigError, match="fields"):
        build_verifier({"type": "YesChangesVerifier", "bogus": 1})


def test_static_analysis_crash_is_an_error_not_a_pass(fixed_repo: Path) -> None:
    spec = {"type": "StaticAnalysisVerifier", "tool": "mypy", "path": "missing_dir"}
    status, reason, _ = check(spec, fixed_repo)
    assert status == "error" and "exited 2 without diagnostics" in reason


def test_forbidden_globs_alone_allow_every_other_change(fixed_repo: Path) -> None:
    """Spec §3 / released NoChangesVerifier: with only `forbidden_globs`, changes outside them are
    allowed (the fix edits calc/ops.py; pyproject.toml is untouched)."""
    status, _, metrics = check(
        {"type": "NoChangesVerifier", "forbidden_globs": ["pyproject.toml"]}, fixed_repo
    )
    assert (status, metrics["unexpected_changed"], metrics["forbidden_changed"]) == ("pass", [], [])
    (fixed_repo / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    status, _, metrics = check(
        {"type": "NoChangesVerifier", "forbidden_globs": ["pyproject.toml"]}, fixed_repo
    )
    assert (status, metrics["forbidden_changed"]) == ("fail", ["pyproject.toml"])
    status, _, _ = check({"type": "NoChangesVerifier"}, fixed_repo)  # no rules: nothing may change
    assert status == "fail"


def test_names_outside_ascii_are_matched_as_they_are(base_repo: Path, tmp_path: Path) -> None:
    """git quotes such a name per line (`"calc/caf\\303\\251.py"`): an edited `calc/café.py`
    escaped `forbidden_globs`, failed `allowed_globs` and was never a changed target."""
    repo = tmp_path / "calc"
    shutil.copytree(base_repo, repo)
    (repo / "calc" / "café.py").write_text("X = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a file named outside ascii")
    (repo / "calc" / "café.py").write_text("X = 2\n")
    (repo / "tests" / "tést_new.py").write_text("")
    forbidden = {"type": "NoChangesVerifier", "forbidden_globs": ["calc/*.py", "tests/*"]}
    _, _, metrics = check(forbidden, repo)
    assert metrics["forbidden_changed"] == ["calc/café.py", "tests/tést_new.py"]
    allowed = {"type": "NoChangesVerifier", "allowed_globs": ["calc/*", "tests/*"]}
    assert check(allowed, repo)[0] == "pass"
    target = {"type": "YesChangesVerifier", "target_files": ["calc/café.py"]}
    assert check(target, repo)[0] == "pass"
    new = {"type": "NewFileRegExpVerifier", "reg_exp_pattern": "^tests/tést_"}
    assert check(new, repo)[0] == "pass"


def test_a_verifier_that_raises_fails_alone(fixed_repo: Path) -> None:
    """Spec §3: exceptions count as failure of that verifier; the others still run."""
    scenario = Scenario(
        "broken",
        [
            {"type": "ChatRegExpCountVerifier", "reg_exp_pattern": "("},  # no trajectory either
            {"type": "PythonFileRegExpCountVerifier", "search_in": "calc", "reg_exp_pattern": "("},
            {"type": "ExactFileMatchVerifier", "file_matches": [{"actual_file_path": "x"}]},
            {"type": "YesChangesVerifier", "target_files": ["calc/ops.py"]},
        ],
    )
    result = run_scenario(scenario, fixed_repo)
    assert [r.status for r in result.results] == ["error", "error", "error", "pass"]
    # `re.error` (3.11) is `re.PatternError` from 3.13
    assert "error" in result.results[1].reason.lower() and not result.passed


def test_globs_have_the_released_java_semantics(fixed_repo: Path) -> None:
    """Spec §3: the released verifiers match globs with Java's PathMatcher, where `*` stays in
    one folder and `**` crosses folders."""
    (fixed_repo / "calc" / "sub").mkdir()
    (fixed_repo / "calc" / "sub" / "deep.py").write_text("X = 1\n")
    spec = {"type": "NoChangesVerifier", "allowed_globs": ["calc/*", "tests/*"]}
    status, _, metrics = check(spec, fixed_repo)
    assert (status, metrics["unexpected_changed"]) == ("fail", ["calc/sub/deep.py"])
    assert check({**spec, "allowed_globs": ["calc/**", "tests/*"]}, fixed_repo)[0] == "pass"
    forbidden = {"type": "NoChangesVerifier", "forbidden_globs": ["*.py"]}
    assert check(forbidden, fixed_repo)[0] == "pass"  # no .py file changed at the top level
    assert check({**forbidden, "forbidden_globs": ["**/*.py"]}, fixed_repo)[0] == "fail"
    targets = {"type": "YesChangesVerifier", "target_globs": ["calc/*/*.py"]}
    assert check(targets, fixed_repo)[0] == "pass"


@pytest.mark.parametrize(
    ("path", "glob", "matches"),
    [
        ("src/A.java", "src/*", True),
        ("src/x/A.java", "src/*", False),
        ("src/x/A.java", "src/**", True),
        ("src", "src/**", False),
        ("A.java", "**/*.java", False),
        ("m/pom.xml", "*.xml", False),
        ("a.md", "*.{txt,md}", True),
        ("a1", "a[!0-9]", False),
        ("a/b", "a?b", False),
        ("src\\A.java", "src\\*", False),  # the pattern's "\" is a separator; the path is posix
        ("src/A.java", "src\\*", True),
    ],
)
def test_glob_table(path: str, glob: str, matches: bool) -> None:
    from agentlens.verification.verifiers.globs import glob_match

    assert glob_match(path, glob) is matches


def test_python_tests_run_in_the_projects_venv(fixed_repo: Path) -> None:
    """Spec §3, released PythonRunTestsVerifier: the project's `.venv` (default `venv_path`) goes
    first on PATH. A module installed only in that venv is importable by the tests."""
    import site as sitelib
    import subprocess
    import sys

    venv = fixed_repo / ".venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)],
        check=True,
    )
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "marker_only_in_venv.py").write_text("VALUE = 42\n")
    # this test run's own packages (pytest), which `--system-site-packages` misses when the
    # tests themselves run in a virtualenv
    (site / "running.pth").write_text("\n".join(sitelib.getsitepackages()) + "\n")
    (fixed_repo / "tests" / "test_marker.py").write_text(
        "from marker_only_in_venv import VALUE\n\n\ndef test_marker():\n    assert VALUE == 42\n"
    )
    spec = {
        "type": "PythonRunTestsVerifier",
        "command": ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        "env": NO_PLUGINS,
    }
    status, reason, metrics = check(spec, fixed_repo)
    assert (status, metrics["failures"], metrics["errors"]) == ("pass", 0, 0), reason
    without = {**spec, "type": "RunTestsVerifier", "runner": "pytest"}
    assert check(without, fixed_repo)[0] != "pass"  # the system Python lacks the module


def test_build_task_released_defaults(fixed_repo: Path) -> None:
    """Spec §3, released RunBuildSystemTaskVerifier: `strict_count` defaults to true, and with
    no pattern the task passes iff it ran without error (exit 0); an empty pattern used to
    match every output, so a broken build passed."""
    twice = {
        "type": "RunBuildSystemTaskVerifier",
        "command": "echo BUILD SUCCESS && echo BUILD SUCCESS",
        "reg_exp_pattern": "^BUILD SUCCESS",
    }
    assert check(twice, fixed_repo)[0] == "fail"  # 2 matches, exactly 1 expected
    assert check({**twice, "strict_count": False}, fixed_repo)[0] == "pass"
    (fixed_repo / "calc" / "broken.py").write_text("def f(:\n")
    build = {"type": "RunBuildSystemTaskVerifier", "command": "python -m compileall -q calc"}
    status, reason, metrics = check(build, fixed_repo)
    assert (status, metrics["exit_code"]) == ("fail", 1), reason
    (fixed_repo / "calc" / "broken.py").unlink()
    assert check(build, fixed_repo)[0] == "pass"


def test_exact_file_match_does_not_read_a_file_linked_out_of_the_repository(
    fixed_repo: Path, tmp_path: Path
) -> None:
    """The agent's file is a link to a host file (here one equal to the expected text; a link
    to /proc/kmsg would block the read for ever): it is not the agent's file, it differs."""
    host = tmp_path / "host-ops.py"
    host.write_text((fixed_repo / "calc" / "ops.py").read_text())
    (fixed_repo / "calc" / "linked.py").symlink_to(host)
    match = {"actual_file_path": "calc/linked.py", "expected_file_path": "calc/ops.py"}
    spec = {"type": "ExactFileMatchVerifier", "file_matches": [match],
            "check_other_files_unchanged": False}  # fmt: skip
    status, reason, _ = check(spec, fixed_repo)
    assert (status, reason) == ("fail", "1 of 1 file differs: calc/linked.py")
    inside = {**match, "actual_file_path": "calc/ops.py"}
    assert check({**spec, "file_matches": [inside]}, fixed_repo)[0] == "pass"


def test_regexp_counts_skip_files_linked_out_of_the_repository(
    fixed_repo: Path, tmp_path: Path
) -> None:
    """Counted on the host: a link to a host file is not the agent's (nor /proc/kmsg's endless
    read). The files are those searched: "1 match in 2 files" read as if both held one."""
    host = tmp_path / "host-notes.py"
    host.write_text("def sub(a, b):\n" * 5)
    (fixed_repo / "calc" / "linked.py").symlink_to(host)
    spec = {"type": "PythonFileRegExpCountVerifier", "search_in": "calc",
            "reg_exp_pattern": r"def sub\(", "strict_count": True, "num_expected": 1}  # fmt: skip
    status, reason, _ = check(spec, fixed_repo)
    assert (status, reason) == ("pass", "1 match in 2 files searched; expected exactly 1")


def test_a_folder_that_is_no_git_repository_is_one_line_saying_so(
    fixed_repo: Path, tmp_path: Path
) -> None:
    """`verify --repo` on a plain folder gave each repository-state check git's whole `git diff`
    usage text (about 150 lines) as its reason."""
    plain = tmp_path / "plain"
    shutil.copytree(fixed_repo, plain, ignore=shutil.ignore_patterns(".git"))
    status, reason, _ = check(
        {"type": "YesChangesVerifier", "target_files": ["calc/ops.py"]}, plain
    )
    assert status == "error"
    assert "\n" not in reason and len(reason) < 300
    assert "not a git repository" in reason
    assert "usage: git diff" not in reason


def test_a_scenarios_repository_state_checks_list_the_changes_once(
    fixed_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each check listed the changes anew: the base read into an index, the config looked at,
    the work tree walked, once per check of the scenario (here 3 times)."""
    (fixed_repo / "calc" / "mul.py").write_text("def mul(a, b):\n    return a * b\n")
    calls: list[str] = []
    run = repo_git._run_git

    def counted(repo: Path, args: list[str], *rest: Any) -> repo_git.GitResult:
        calls.extend(a for a in args if a in ("read-tree", "config"))
        return run(repo, args, *rest)

    monkeypatch.setattr(repo_git, "_run_git", counted)
    checks = [
        {"type": "YesChangesVerifier", "target_files": ["calc/ops.py"]},
        {"type": "NoChangesVerifier", "allowed_globs": ["calc/*"]},
        {"type": "NewFileRegExpVerifier", "reg_exp_pattern": r"mul\.py$"},
    ]
    result = run_scenario(Scenario(name="listed once", verifiers=checks), fixed_repo)
    assert [r.status for r in result.results] == ["pass", "fail", "pass"]
    assert result.results[1].metrics["unexpected_changed"] == ["tests/test_ops.py"]
    assert sorted(calls) == ["config", "read-tree"]


def test_a_regex_count_holds_one_file_at_a_time(
    fixed_repo: Path,
) -> None:
    """Every file's text was held until all were counted, and each match kept: twenty 60 MB
    test files the agent wrote took the checking process to 1.25 GB (209 MB now)."""
    block = ("def test_x(): pass\n" + "#" * 79 + "\n") * 80_000  # 7.9 MB
    for number in range(10):
        (fixed_repo / "tests" / f"big{number}.py").write_text(block)
    spec = {"type": "PythonFileRegExpCountVerifier", "search_in": "tests",
            "reg_exp_pattern": "^def test_", "num_expected": 800_003, "strict_count": True}  # fmt: skip
    tracemalloc.start()
    try:
        status, reason, _ = check(spec, fixed_repo)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (status, reason.split(";")[0]) == ("pass", "800,003 matches in 11 files searched"), (
        reason
    )
    assert peak < 4 * len(block), peak  # a file's bytes and text, not ten of them


def test_a_listing_that_hangs_ends_by_the_verifiers_timeout_once(fixed_repo: Path) -> None:
    """Each git call of a listing had 60 s, and a failed listing was not kept: a FIFO the
    agent left as `.git/info/exclude` made two checks with a 5 s timeout take 120 s."""
    exclude = fixed_repo / ".git" / "info" / "exclude"
    exclude.unlink()
    os.mkfifo(exclude)
    checks = [
        {"type": "YesChangesVerifier", "target_files": ["calc/ops.py"]},
        {"type": "NoChangesVerifier", "allowed_globs": ["calc/*"]},
    ]
    start = time.monotonic()
    result = run_scenario(
        Scenario(name="hangs", verifiers=checks, verifier_timeout_seconds=2), fixed_repo
    )
    took = time.monotonic() - start
    late = "timed out: listing the changes took over the 2 s timeout"
    assert [(r.status, late in r.reason) for r in result.results] == [("error", True)] * 2
    assert took < 5, took


def test_a_repository_nesting_folders_past_the_recursion_limit_is_counted(
    fixed_repo: Path,
) -> None:
    """`Path.rglob` nests a call per folder: 1,500 nested folders made a regex count an error
    saying only `RecursionError: maximum recursion depth exceeded`."""
    folder = fixed_repo / "tests"
    for _ in range(1500):
        folder /= "d"
        folder.mkdir()
    (folder / "test_deep.py").write_text("def test_deep(): pass\n")
    spec = {"type": "PythonFileRegExpCountVerifier", "search_in": "tests",
            "reg_exp_pattern": "^def test_", "num_expected": 4, "strict_count": True}  # fmt: skip
    try:
        status, reason, _ = check(spec, fixed_repo)
    finally:
        remove_tree(fixed_repo / "tests" / "d")  # pytest's own cleanup nests a call per folder
    assert (status, reason.split(";")[0]) == ("pass", "4 matches in 2 files searched"), reason


def test_a_path_nested_past_any_reader_is_cut_in_a_reason(fixed_repo: Path) -> None:
    """A reason named each path whole: a file 1,500 folders deep made `1 forbidden file
    changed: calc/d/d/d/…` 3,049 characters long. Its head and tail are kept, and the cut said."""
    folder = fixed_repo / "calc"
    for _ in range(1500):
        folder /= "d"
        folder.mkdir()
    (folder / "x.py").write_text("x = 1\n")
    checks = [
        {"type": "NoChangesVerifier", "forbidden_globs": ["calc/**"]},
        {"type": "YesChangesVerifier", "target_files": [f"{folder.relative_to(fixed_repo)}.py"]},
    ]
    try:
        reasons = [check(spec, fixed_repo)[1] for spec in checks]
    finally:
        remove_tree(fixed_repo / "calc" / "d")
    assert all(len(reason) < 400 for reason in reasons), [len(reason) for reason in reasons]
    cut = "d/d…[2,849 characters cut]…d/d/"
    assert reasons[0].startswith("2 forbidden files changed: calc/d/d/") and cut in reasons[0]
    assert reasons[0].endswith("/d/x.py, calc/ops.py"), reasons[0]
    assert reasons[1].startswith("1 target not changed: calc/d/") and reasons[1].endswith("d/d.py")


def test_a_folder_past_path_max_is_cut_in_a_counts_reason(fixed_repo: Path) -> None:
    """Folders nested past PATH_MAX cannot be listed by name, and the reason named the
    folder whole: 4,148 characters."""
    folder = os.open(fixed_repo / "tests", os.O_RDONLY)
    for _ in range(2100):  # 4,200 characters: made from each folder's descriptor, not by name
        os.mkdir("d", dir_fd=folder)
        inner = os.open("d", os.O_RDONLY, dir_fd=folder)
        os.close(folder)
        folder = inner
    os.close(folder)
    spec = {"type": "PythonFileRegExpCountVerifier", "search_in": "tests",
            "reg_exp_pattern": "^def test_", "num_expected": 1}  # fmt: skip
    try:
        status, reason, _ = check(spec, fixed_repo)
    finally:
        remove_tree(fixed_repo / "tests" / "d")
    assert status == "error" and len(reason) < 400, len(reason)
    assert "characters cut]…/d/d/" in reason and reason.endswith("/d/d: File name too long")


def test_a_regex_count_ends_by_the_verifiers_timeout(fixed_repo: Path) -> None:
    """A count had no clock: it read every file the agent left, however many."""
    spec = {"type": "PythonFileRegExpCountVerifier", "search_in": ".", "reg_exp_pattern": "def "}
    status, reason, _ = check(spec, fixed_repo, timeout_s=1e-9)
    assert (status, reason) == (
        "error",
        "VerifierSetupError: counting took over the 1e-09 s timeout",
    )
