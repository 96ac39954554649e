"""`scripts/labeler_vs_release.py`: where the derived state fields part from the release's own
(docs/profiles.md, row 7)."""

from __future__ import annotations

from pathlib import Path

from agentlens.formats import read_path
from tests.process.label_scripts import script


def test_each_deviation_is_counted_under_its_own_kind() -> None:
    release = script("labeler_vs_release")
    found = release.FieldDeviations()
    for ours, theirs in (
        ("file_modify_failed:a.py", "file_modified:a.py"),
        ("file_modify_failed:a.py", "file_modify_failed:a.py"),
        ("file_modified:a.py", "file_modify_failed:a.py"),
        ("dir_listed:src", "dir_listed:"),
        ("dir_listed:", "dir_listed:"),
        ("tool_result:think:success", "tool_result:think:error"),
        ("terminal:ls", "terminal:ls"),
    ):
        release.count_deviation(found, ours, theirs)
    assert found == release.FieldDeviations(2, 1, 1, 1, 2, 1, 1, 1)


def test_the_refused_edits_the_release_calls_modified_say_edited_successfully(
    data_dir: Path,
) -> None:
    """A gemini run whose editor refused 16 replacements: the release's converter prefixes "The
    file was edited successfully." to each refusal and calls the edit made."""
    task = "astropy__astropy-13236"
    name = f"{task}-logs-gemini-2.5-pro-fail-24945658083_pta.json"
    runs = read_path(data_dir / "agentlens-bench-dev" / "trajectories" / task / name)
    found = script("labeler_vs_release").field_deviations(runs)
    assert (found.refused_edits, found.refused_called_modified, found.made_edits) == (16, 16, 1)
    previews = [
        s.raw["log_entry"]["response_preview"]
        for s in runs[0].steps
        if s.kind == "tool" and str(s.raw.get("resulting_state")).startswith("file_modified:")
    ]
    refused = [p for p in previews if "No replacement was performed" in p]
    assert len(refused) == 16
    assert all(p.startswith("The file was edited successfully.") for p in refused)
