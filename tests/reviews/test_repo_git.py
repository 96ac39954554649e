"""AgentLens's own git calls on an agent's repository run sandboxed: the agent writes
`.git/config` and `.gitattributes`, and git runs the programs they name (a clean filter while it
adds or diffs a changed file, a textconv driver while it prints a diff). Each planted program
tries to create a file on the host; it must not appear, and the diff must still be right. What
AgentLens reads from a verified copy on the host (report files) does not follow links out of it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentlens.cli.review_cmd import _diff
from agentlens.demo.tiny_repo import create_repo
from agentlens.errors import ConfigError
from agentlens.scenarios.agents._shell import run_shell
from agentlens.scenarios.workspace import changes_since_base, prepare
from agentlens.stepvalue.candidates.tracked import tracked_from_repo
from agentlens.verification import repo_git
from agentlens.verification.repo_git import run_git
from agentlens.verification.verifiers.base import VerifyContext

SRC = str(Path(__file__).resolve().parents[2] / "src")


def plant(repo: Path, marker: Path) -> None:
    """What an agent's shell can do in its repository: name programs for git to run."""
    config = [("filter.evil.clean", f"touch {marker}.clean; cat"),
              ("diff.evil.textconv", f"touch {marker}.textconv; cat")]  # fmt: skip
    for key, value in config:
        subprocess.run(["git", "-C", str(repo), "config", key, value], check=True)
    (repo / ".gitattributes").write_text("*.py filter=evil diff=evil\n")
    ops = repo / "calc" / "ops.py"
    ops.write_text(ops.read_text() + "# changed by the agent\n")
    os.utime(ops, (0, 0))  # stat-dirty: git must read it, through the filter


def ran_on_host(marker: Path) -> list[str]:
    return [kind for kind in ("clean", "textconv") if Path(f"{marker}.{kind}").exists()]


def verify(repo: Path, tmp_path: Path, *extra: str) -> dict[str, object]:
    """`verify --repo` as a user in the repository's folder gives it: a relative path."""
    scenario = tmp_path / "scenario.json"
    checks = [{"type": "NoChangesVerifier", "name": "changes", "allowed_globs": ["*", "**/*"]}]
    scenario.write_text(json.dumps({"verifiers": checks}))
    argv = [sys.executable, "-m", "agentlens", "verify", str(scenario), "--repo", repo.name]
    done = subprocess.run([*argv, "--json", *extra], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": SRC},
                          cwd=repo.parent)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["results"][0]["verifier_results"][0]  # type: ignore[no-any-return]


def test_verify_runs_no_program_the_repository_names(tmp_path: Path) -> None:
    repo, marker = create_repo(tmp_path / "calc"), tmp_path / "host-marker"
    plant(repo, marker)
    result = verify(repo, tmp_path)
    assert ran_on_host(marker) == []
    assert result["reason"] == "2 changed files, all allowed"  # .gitattributes, calc/ops.py


def test_without_the_sandbox_the_planted_filter_does_not_run_either(tmp_path: Path) -> None:
    """Uncontained, git ran the agent's clean filter on the host (the sandbox was the only
    wall); each filter driver the repository's config names is now switched off as well
    (`repo_git.plain_view`): a clean filter could show git a file's base text."""
    repo, marker = create_repo(tmp_path / "calc"), tmp_path / "host-marker"
    plant(repo, marker)
    result = verify(repo, tmp_path, "--no-sandbox")
    assert ran_on_host(marker) == []
    assert result["reason"] == "2 changed files, all allowed"


def test_the_workspace_diff_runs_no_program_the_agent_named(tmp_path: Path) -> None:
    project, marker = create_repo(tmp_path / "calc"), tmp_path / "host-marker"
    workspace = prepare(project, tmp_path / "attempt-1" / "repo")
    marker_inside = json.dumps(str(marker))
    script = (
        f"git config filter.evil.clean 'touch '{marker_inside}'.clean; cat' && "
        f"git config diff.evil.textconv 'touch '{marker_inside}'.textconv; cat' && "
        "printf '*.py filter=evil diff=evil\\n' > .gitattributes && "
        "echo '# changed by the agent' >> calc/ops.py"
    )
    shell = asyncio.run(run_shell(script, workspace.path, timeout_s=60))
    assert shell.returncode == 0, shell.output
    diff, changed = changes_since_base(workspace)
    assert ran_on_host(marker) == []
    assert changed == [".gitattributes", "calc/ops.py"] and "+# changed by the agent" in diff


def test_the_review_diff_runs_no_program_the_repository_names(tmp_path: Path) -> None:
    repo, marker = create_repo(tmp_path / "calc"), tmp_path / "host-marker"
    plant(repo, marker)
    diff = _diff(str(repo), "HEAD")
    assert ran_on_host(marker) == []
    assert "+# changed by the agent" in diff


def plant_every_hook(repo: Path, marker: Path) -> None:
    """Every key of `.git/config` that names a program git runs while it lists, diffs or adds:
    each appends its name to `marker` on the host."""
    hooks = repo.parent / "hooks"
    hooks.mkdir()
    keys = ["core.fsmonitor", "core.pager", "diff.external", "diff.evil.textconv",
            "filter.evil.clean", "filter.evil.smudge", "filter.evil.process"]  # fmt: skip
    for key in keys:
        program = repo.parent / key
        program.write_text(f"#!/bin/sh\necho {key} >> {marker}\ncat\n")
        program.chmod(0o755)
        subprocess.run(["git", "-C", str(repo), "config", key, str(program)], check=True)
    for name in ("post-index-change", "pre-commit", "reference-transaction"):
        (hooks / name).write_text(f"#!/bin/sh\necho hook {name} >> {marker}\n")
        (hooks / name).chmod(0o755)
    subprocess.run(["git", "-C", str(repo), "config", "core.hooksPath", str(hooks)], check=True)
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    ops = repo / "calc" / "ops.py"
    ops.write_text(ops.read_text() + "# changed by the agent\n")
    os.utime(ops, (0, 0))


def test_no_git_call_runs_a_program_the_agents_config_names_on_the_host(tmp_path: Path) -> None:
    """The verifiers' changed and new files, the review diff and a checkout's tracked files,
    with fsmonitor, pager, external diff, textconv, filters and a hooks folder planted. The
    same plant run by a plain `git diff` on the host runs the agent's programs (the control)."""
    repo, marker = create_repo(tmp_path / "calc"), tmp_path / "host-marker"
    plant_every_hook(repo, marker)
    context = VerifyContext(repo=repo)
    assert context.changed_files() == {".gitattributes", "calc/ops.py"}
    assert context.new_files() == {".gitattributes"}
    assert "+# changed by the agent" in _diff(str(repo), "HEAD")
    assert "calc/ops.py" in tracked_from_repo(repo).paths
    assert not marker.exists(), marker.read_text()
    subprocess.run(["git", "-C", str(repo), "diff"], capture_output=True, check=False)
    assert {"core.fsmonitor", "diff.external"} <= set(marker.read_text().split())


@pytest.mark.parametrize("key", ["diff.external", "diff.evil.textconv"])
def test_the_agents_diff_programs_do_not_write_the_diffs_shown(tmp_path: Path, key: str) -> None:
    """An external diff or a textconv driver kept in the repository itself is visible to the
    sandboxed git, which ran it: what it printed was the diff the review and the judge saw."""
    project = create_repo(tmp_path / "calc")
    workspace = prepare(project, tmp_path / "attempt-1" / "repo")
    for repo in (project, workspace.path):
        fake = repo / ".quiet.sh"
        fake.write_text("#!/bin/sh\necho nothing changed, $((6 * 7)) times\n")
        fake.chmod(0o755)
        git = ["git", "-c", "safe.directory=*", "-C", str(repo)]  # the workspace is `nobody`'s
        subprocess.run([*git, "config", key, str(fake)], check=True)
        (repo / ".git" / "info").mkdir(exist_ok=True)
        (repo / ".git" / "info" / "attributes").write_text("*.py diff=evil\n")
        ops = repo / "calc" / "ops.py"
        ops.write_text(ops.read_text() + "# changed by the agent\n")
    for diff in (_diff(str(project), "HEAD"), changes_since_base(workspace)[0]):
        assert "+# changed by the agent" in diff and "42 times" not in diff, diff


def test_a_report_linked_to_a_host_file_is_not_read(tmp_path: Path) -> None:
    """Report files are read on the host after the run: one that links out of the copy (here
    to a host coverage report claiming 100 %) is not AgentLens's to read."""
    repo = create_repo(tmp_path / "calc")
    host_report = tmp_path / "host-coverage.json"
    host_report.write_text(json.dumps({"totals": {"covered_lines": 50, "num_statements": 50}}))
    (repo / "coverage.json").symlink_to(host_report)
    scenario = tmp_path / "scenario.json"
    pytest = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "not sub"]
    check = {"type": "RunTestsVerifier", "name": "tests", "command": pytest, "min_coverage": 90}
    scenario.write_text(json.dumps({"verifiers": [check]}))
    argv = [sys.executable, "-m", "agentlens", "verify", str(scenario), "--repo", str(repo)]
    done = subprocess.run([*argv, "--json"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": SRC})  # fmt: skip
    result = json.loads(done.stdout)["results"][0]["verifier_results"][0]
    assert "line coverage" not in result["reason"]
    assert result["reason"].endswith("; no coverage report found")


def test_a_linked_worktree_is_diffed_in_the_sandbox(tmp_path: Path) -> None:
    """A worktree's `.git` is a file naming its git folder elsewhere: that folder (and the
    common one) is shown read-only, so its changes are still found."""
    main = create_repo(tmp_path / "calc")
    linked = tmp_path / "linked"
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(linked)], check=True)
    (linked / "calc" / "ops.py").write_text("changed\n")
    assert verify(linked, tmp_path)["reason"] == "1 changed file, all allowed"


def private_repo(tmp_path: Path) -> Path:
    """Another repository on the host, with words committed that no review may show."""
    private = create_repo(tmp_path / "private")
    (private / "notes.txt").write_text("the private words\n")
    subprocess.run(["git", "-C", str(private), "add", "notes.txt"], check=True)
    subprocess.run(["git", "-C", str(private), "-c", "user.name=u", "-c", "user.email=u@x",
                    "commit", "-qm", "notes"], check=True)  # fmt: skip
    return private


def git_shows(repo: Path) -> str:
    """What git itself, unsandboxed, diffs there: the tests below can fail."""
    git = ["git", "-C", str(repo), "diff", "HEAD"]
    return subprocess.run(git, capture_output=True, text=True, check=True).stdout


def test_a_git_file_naming_another_repositorys_git_folder_shows_nothing_of_it(
    tmp_path: Path,
) -> None:
    """A hostile repository's `.git` file may name any git folder on the host; bound, its
    committed files would be diffed against the work tree and reach the review. Only a
    worktree that its git folder names back (git's own link) is linked."""
    private, hostile = private_repo(tmp_path), tmp_path / "hostile"
    hostile.mkdir()
    (hostile / ".git").write_text(f"gitdir: {private / '.git'}\n")
    assert "private words" in git_shows(hostile)
    with pytest.raises(ConfigError) as failed:  # git finds no repository there: said, not ""
        _diff(str(hostile), "HEAD")
    assert "private words" not in str(failed.value)
    assert "git diff HEAD failed: not a git repository" in str(failed.value)


def test_a_git_folder_made_in_the_repository_names_no_common_folder(tmp_path: Path) -> None:
    """The agent can write a worktree's git folder, back-link and all, inside its repository:
    its `commondir` file must not bring another repository's git folder in."""
    private, hostile = private_repo(tmp_path), tmp_path / "hostile"
    made = hostile / "made"
    made.mkdir(parents=True)
    (hostile / ".git").write_text("gitdir: made\n")
    (made / "gitdir").write_text(f"{hostile / '.git'}\n")
    (made / "commondir").write_text(f"{private / '.git'}\n")
    (made / "HEAD").write_text((private / ".git" / "HEAD").read_text())
    assert "private words" in git_shows(hostile)
    with pytest.raises(ConfigError) as failed:  # git finds no usable git folder: said, not ""
        _diff(str(hostile), "HEAD")
    assert "private words" not in str(failed.value)
    assert "git diff HEAD failed: fatal: " in str(failed.value)


def test_a_git_folder_whose_back_link_is_a_fifo_does_not_hang(tmp_path: Path) -> None:
    """The back-link of a git folder the agent made in its repository was read on the host as
    a file: a FIFO there hung every git call of AgentLens's (`verify` waited for ever; as root
    a link to `/proc/kmsg` waits for the kernel's next message and takes it from its log)."""
    hostile = tmp_path / "hostile"
    (hostile / "made").mkdir(parents=True)
    (hostile / ".git").write_text("gitdir: made\n")
    os.mkfifo(hostile / "made" / "gitdir")
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"verifiers": [{"type": "YesChangesVerifier"}]}))
    argv = [sys.executable, "-m", "agentlens", "verify", str(scenario), "--repo", str(hostile)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": SRC})  # fmt: skip
    assert done.returncode == 1 and "not a git repository" in done.stdout, done.stdout


def test_review_and_verify_say_a_folder_is_not_a_repository_in_the_same_words(
    tmp_path: Path,
) -> None:
    """Outside a repository `git diff` prints a warning and then its usage text: `review --repo`
    said the warning, `verify --repo` the reason; both now give `GitResult.failure()`'s line."""
    from agentlens.verification.verifiers.base import VerifierSetupError

    folder = tmp_path / "not-a-repo"
    folder.mkdir()
    with pytest.raises(ConfigError) as review:
        _diff(str(folder), "HEAD")
    with pytest.raises(VerifierSetupError) as verify:
        VerifyContext(folder).changed_files()
    said = "not a git repository (--repo must be the agent's git work tree)"
    assert said in str(review.value) and said in str(verify.value), str(review.value)
    assert "warning" not in str(review.value)


def test_git_is_not_run_when_the_repositorys_filters_cannot_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Failure injection: the look at the repository's config times out. Run anyway, git
    would run the filters it could not switch off."""
    repo = create_repo(tmp_path / "calc")
    calls: list[list[str]] = []
    real = repo_git._run_git

    def config_times_out(repo: Path, args: list[str], *rest: object) -> repo_git.GitResult:
        calls.append(list(args))
        if "config" in args:
            return repo_git._result(list(args), 124, "", "timed out", stopped="timed out after 1 s")
        return real(repo, args, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(repo_git, "_run_git", config_times_out)
    done = run_git(repo, "diff", "HEAD")
    assert done.failure() == "timed out after 1 s (its result would be incomplete)"
    assert [args for args in calls if "diff" in args] == []


def _objects(repo: Path) -> list[str]:
    return sorted(str(p) for p in (repo / ".git" / "objects").rglob("*") if p.is_file())


def test_the_review_diff_shows_what_the_agents_index_and_ignore_rules_hide(
    tmp_path: Path,
) -> None:
    """`review --repo` diffed through the agent's own index: an edit it marked skip-worktree
    was no change, and a new file was never in the diff (a planted conftest the judge never
    saw). Its objects folder is not written (the empty blob of `add -N` goes elsewhere)."""
    repo = create_repo(tmp_path / "calc")
    (repo / "tests" / "test_ops.py").write_text("def test_sub():\n    assert True\n")
    subprocess.run(["git", "-C", str(repo), "update-index", "--skip-worktree",
                    "tests/test_ops.py"], check=True)  # fmt: skip
    (repo / "conftest.py").write_text("# planted by the agent\n")
    (repo / ".git" / "info" / "exclude").write_text("conftest.py\n")
    assert git_shows(repo) == ""  # what git itself shows of it
    before = _objects(repo)
    diff = _diff(str(repo), "HEAD")
    assert "+    assert True" in diff and "+# planted by the agent" in diff, diff
    assert "new file mode" in diff and "b/conftest.py" in diff
    assert _objects(repo) == before


def test_a_nested_repository_without_commits_leaves_the_rest_of_the_review_diff(
    tmp_path: Path,
) -> None:
    """`git init sub` in the agent's repository made `add` fail, and with it the judge's whole
    diff (`'sub/' does not have a commit checked out`): the rest is shown, the nested one not."""
    repo = create_repo(tmp_path / "calc")
    (repo / "conftest.py").write_text("# planted by the agent\n")
    (repo / "sub").mkdir()
    subprocess.run(["git", "init", "-q", str(repo / "sub")], check=True)
    (repo / "sub" / "inner.py").write_text("x = 1\n")
    diff = _diff(str(repo), "HEAD")
    assert "+# planted by the agent" in diff and "b/conftest.py" in diff, diff
    assert "inner.py" not in diff
