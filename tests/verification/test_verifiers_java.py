"""Verifiers on a real Java project: javac -Xlint diagnostics, a plain-Java test run, Java regex
counts with comments stripped."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlens.demo.tiny_repo import git
from agentlens.verification.verifiers import run_verifier
from agentlens.verification.verifiers.base import VerifyContext

CALC = """package demo;

import java.util.ArrayList;
import java.util.List;

public class Calc {
    // TODO remove raw list
    public int add(int a, int b) { return a + b; }
    /* TODO: subtract */
    public int sub(int a, int b) { return a - b; }
    public List history() { return new ArrayList(); } // TODO raw types
}
"""
TEST = """package demo;

public class CalcCheck {
    public static void main(String[] args) {
        Calc c = new Calc();
        if (c.add(2, 3) != 5 || c.sub(3, 2) != 1) { System.out.println("FAILED"); System.exit(1); }
        System.out.println("ALL CHECKS PASSED");
    }
}
"""


@pytest.fixture
def java_repo(tmp_path: Path) -> Path:
    if not __import__("shutil").which("javac"):
        pytest.skip("javac not installed")
    src = tmp_path / "proj" / "src" / "demo"
    src.mkdir(parents=True)
    (src / "Calc.java").write_text(CALC)
    (src / "CalcCheck.java").write_text(TEST)
    repo = tmp_path / "proj"
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return repo


def check(spec: dict, repo: Path) -> tuple[str, str, dict]:
    result = run_verifier(spec, VerifyContext(repo=repo))
    return result.status, result.reason, result.metrics


def test_javac_warnings_and_errors(java_repo: Path) -> None:
    spec = {"type": "StaticAnalysisVerifier", "tool": "javac", "path": "src"}
    status, reason, metrics = check(spec, java_repo)
    # Two raw-type uses in history(): `List` and `new ArrayList()`.
    assert (status, metrics["errors"], metrics["warnings"]) == ("pass", 0, 2), reason
    assert check({**spec, "include_warnings": True}, java_repo)[0] == "fail"
    calc = java_repo / "src" / "demo" / "Calc.java"
    calc.write_text(calc.read_text().replace("return a - b;", "return a - c;"))
    status, reason, metrics = check(
        {"type": "NoFileErrorsVerifier", "path": "src", "languages": ["java"]}, java_repo
    )
    assert (status, metrics["errors"]) == ("fail", 1), reason


def test_plain_java_test_run_through_build_task(java_repo: Path) -> None:
    spec = {
        "type": "RunBuildSystemTaskVerifier",
        "command": "mkdir -p out && javac -d out $(find src -name '*.java') && java -cp out demo.CalcCheck",
        "reg_exp_pattern": "^ALL CHECKS PASSED$",
        "strict_count": True,
    }
    assert check(spec, java_repo)[0] == "pass"
    calc = java_repo / "src" / "demo" / "Calc.java"
    calc.write_text(calc.read_text().replace("return a - b;", "return a + b;"))
    status, reason, _ = check(spec, java_repo)
    assert status == "fail" and "matched 0x" in reason


def test_java_regex_count_ignores_comments(java_repo: Path) -> None:
    spec = {
        "type": "JavaFileRegExpCountVerifier",
        "search_in": "src",
        "reg_exp_pattern": "TODO",
        "strict_count": True,
    }
    assert check({**spec, "num_expected": 3}, java_repo)[0] == "pass"
    assert check({**spec, "num_expected": 0, "uncommented_only": True}, java_repo)[0] == "pass"
    spec = {
        "type": "JavaFileRegExpCountVerifier",
        "search_in": "src",
        "reg_exp_pattern": r"public int \w+",
    }
    assert check({**spec, "num_expected": 2, "strict_count": True}, java_repo)[0] == "pass"


def test_java_regex_count_searches_every_file_of_a_folder() -> None:
    """Spec §3 / the released verifier: a folder is searched in every file but class files (the
    build file and resources count too, not only .java sources). Real Maven project: the
    expected count comes from walking its files here."""
    import re

    project = Path(__file__).parent / "data" / "maven_project"
    files = [p for p in project.rglob("*") if p.is_file() and p.suffix != ".class"]
    expected = sum(len(re.findall("junit", p.read_text())) for p in files)
    in_java = sum(len(re.findall("junit", p.read_text())) for p in files if p.suffix == ".java")
    assert expected > in_java  # pom.xml names the junit dependency
    spec = {
        "type": "JavaFileRegExpCountVerifier",
        "search_in": ".",
        "reg_exp_pattern": "junit",
        "strict_count": True,
        "num_expected": expected,
    }
    status, reason, metrics = check(spec, project)
    assert (status, metrics["count"]) == ("pass", expected), reason
