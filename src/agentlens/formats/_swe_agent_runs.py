"""The model of a SWE-agent run, which the `.traj` itself does not reliably name: the run
directory's `metadata.yaml`, the replay config, or the run directory's name; and the run name
that prefixes trajectory ids. Folder facts are worked out once per folder.
(The verdicts beside `trajs/` are `agentlens.outcomes`' job.)"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from agentlens.formats import _openhands_common as common
from agentlens.formats.limits import read_bounded

MODEL_LINE = re.compile(r"^name:\s*(.+)$", re.MULTILINE)
PLACEHOLDER_MODELS = {"replay", "instant_empty_submit", "human", "human_thought"}


class RunFolder(NamedTuple):
    """What a `.traj`'s folder says about its run: the run name that prefixes trajectory ids
    (`<run>/trajs/<id>.traj`), the model of `metadata.yaml` and the model in the folder name."""

    run_name: str | None
    metadata_model: str | None
    name_model: str | None


def run_folder(path: Path) -> RunFolder:
    """The folder facts of a `.traj`, worked out once per folder (a run has many files)."""
    return _run_folder(os.path.dirname(str(path)))


@lru_cache(maxsize=256)
def _run_folder(folder_text: str) -> RunFolder:
    folder = Path(folder_text)  # "" (a bare file name) is ".", as `Path.parent` says
    name = folder.name
    in_trajs = name == "trajs"
    return RunFolder(
        run_name=folder.parent.name if in_trajs else None,
        metadata_model=_metadata_model(str(folder.parent if in_trajs else folder)),
        name_model=name.split("__")[0] if "__t-" in name else None,
    )


def run_model(folder: RunFolder, doc: dict[str, Any]) -> str | None:
    """The model: `metadata.yaml` of the run directory, else the replay config, else the run
    directory's name (`<model>__<dataset>__<config>__t-...`)."""
    return folder.metadata_model or _replay_model(doc.get("replay_config")) or folder.name_model


@lru_cache(maxsize=256)
def _metadata_model(run_dir: str) -> str | None:
    try:
        text = read_bounded(Path(run_dir) / "metadata.yaml").decode(errors="replace")
    except OSError:
        return None
    match = MODEL_LINE.search(text)
    if match is None:
        return None
    return match[1].split("+")[-1].strip().strip("\"'") or None


def _replay_model(config: Any) -> str | None:
    if isinstance(config, str):
        config = common.parse_arguments(config)
    agent = common.as_dict(common.as_dict(config).get("agent"))
    name = common.as_dict(agent.get("model")).get("name")
    return str(name) if name and name not in PLACEHOLDER_MODELS else None
