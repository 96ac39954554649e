"""The model of a SWE-agent run, which the `.traj` itself does not reliably name: the run
directory's `metadata.yaml` (read once per directory), the replay config, or the run directory's name.
(The verdicts beside `trajs/` are `agentlens.outcomes`' job.)"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentlens.formats import _openhands_common as common

MODEL_LINE = re.compile(r"^name:\s*(.+)$", re.MULTILINE)
PLACEHOLDER_MODELS = {"replay", "instant_empty_submit", "human", "human_thought"}


def run_model(path: Path, doc: dict[str, Any]) -> str | None:
    """The model: `metadata.yaml` of the run directory, else the replay config, else the run
    directory's name (`<model>__<dataset>__<config>__t-...`)."""
    parent = path.parent
    name = parent.name
    run_dir = parent.parent if name == "trajs" else parent
    model = _metadata_model(str(run_dir)) or _replay_model(doc.get("replay_config"))
    if model:
        return model
    return name.split("__")[0] if "__t-" in name else None


@lru_cache(maxsize=256)
def _metadata_model(run_dir: str) -> str | None:
    try:
        text = (Path(run_dir) / "metadata.yaml").read_text(errors="replace")
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
