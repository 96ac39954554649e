"""What a scenario run gives its judge beyond the transcript (spec §5.2): the final diff of its
own workspace and the formal checks' verdicts, both kept with the run. `agentlens review` uses
them for every scenario trajectory, so reviewing a whole `OUT/trajectories` folder gives each run
its own diff rather than one `--repo` for all."""

from __future__ import annotations

from pathlib import Path

from agentlens.errors import AgentLensError
from agentlens.list_text import counted
from agentlens.reviews.judge.prompt import ReviewContext
from agentlens.scenarios.ide_errors import IdeReport
from agentlens.scenarios.session import FORMAT
from agentlens.scenarios.workspace import Workspace, WorkspaceGitError, diff_since_base
from agentlens.trajectory import Trajectory


def scenario_context(traj: Trajectory) -> ReviewContext | None:
    """None for trajectories that did not come from `agentlens run`."""
    if traj.source.format != FORMAT:
        return None
    return ReviewContext(
        final_diff=_diff(traj), formal_summary=formal_summary(traj), ide_errors=ide_summary(traj)
    )


def ide_summary(traj: Trajectory) -> str | None:
    """The IDE errors kept with the run (`metadata.ide_errors`), as the simulator saw them last."""
    saved = traj.metadata.get("ide_errors")
    if not isinstance(saved, dict):
        return None
    return IdeReport.from_dict(saved).render()


def formal_summary(traj: Trajectory) -> str | None:
    formal = traj.metadata.get("formal")
    if not isinstance(formal, dict):
        return None
    results = [r for r in formal.get("verifier_results") or [] if isinstance(r, dict)]
    verdict = "PASS" if formal.get("formal_verification_result") == 1 else "FAIL"
    passed = sum(1 for r in results if r.get("status") == "pass")
    lines = [f"{verdict}: {passed} of {counted(len(results), 'verifier')} passed"]
    lines += [f"- {r.get('type')}: {r.get('status')} ({r.get('reason')})" for r in results]
    return "\n".join(lines)


def _diff(traj: Trajectory) -> str | None:
    """The workspace's changes since its base, when the workspace is still there; when git
    cannot give them whole (the agent's filter killed for memory, a workspace replaced by a
    link), AgentLens's note of why, so the judge never reviews part of a diff as all of it."""
    path, base = Path(traj.source.path), traj.metadata.get("base_revision")
    if not base or not (path / ".git").exists():
        return None
    try:
        return diff_since_base(Workspace(path, str(base)))
    except WorkspaceGitError as exc:  # its message holds git's stderr: the agent's to write
        why = f": {exc.stopped}" if exc.stopped else ""
        return f"(AgentLens cannot show the final diff: {exc.call} failed{why})"
    except AgentLensError as exc:
        return f"(AgentLens cannot show the final diff: {exc})"
