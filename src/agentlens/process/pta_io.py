"""Reference persistence (versioned JSON) and export (Graphviz DOT, Mermaid)."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Annotated, Any, Literal, cast, get_type_hints

import msgspec
import orjson

from agentlens.bounded_read import read_named
from agentlens.errors import ConfigError
from agentlens.process.calibrated import BASELINE_KEY, DonorBaseline
from agentlens.process.profiles import PROFILES, Profile
from agentlens.process.pta import Edge, Reference
from agentlens.process.states import ProcState

FORMAT = "agentlens.reference/1"
_SKIP = {"source", "step_index", "term", "mfiles"}
_SAVED = [f for f in fields(ProcState) if f.name not in _SKIP]
_FIELDS = [f.name for f in _SAVED]
_STAGE_COLOUR = {"E": "#60a5fa", "I": "#facc15", "V": "#4ade80", "O": "#a78bfa", "": "#e5e7eb"}

_Count = Annotated[int, msgspec.Meta(ge=0)]
_Share = Annotated[float, msgspec.Meta(ge=0, le=1)]
MAX_MEAN_STATES = 100_000
"""The most states a donor baseline's mean run may have: far beyond any agent's run (the longest
of the 544 runs in ../shared/data has 150 tool calls), so more is a damaged file, not a long task."""
_HINTS = get_type_hints(ProcState)
# What a saved state's field must hold beyond its `ProcState` type, checked on read (a wrong one
# would fail every run scored against the reference, blaming the run).
_CHECKED: dict[str, Any] = {
    "step_no": _Count,
    "stage": Literal["E", "I", "V", "O", ""],
    "input_tokens": _Count,
    "output_tokens": _Count,
    "support": _Count,
}
# the saved fields of `ProcState`, with their types and the checks above; every one is written,
# so every one must be there: a field left out would be read as its default, another state
_Node = msgspec.defstruct(
    "_Node",
    [(f.name, _CHECKED.get(f.name, _HINTS[f.name])) for f in _SAVED],
    kw_only=True,
)


class _Baseline(msgspec.Struct, forbid_unknown_fields=True):
    """`donor_baseline` as `reference build` saves it (`calibrated.DonorBaseline`): shares in
    0-1, a length no run reaches beyond `MAX_MEAN_STATES`."""

    f1: _Share
    cov: _Share
    n_states: Annotated[float, msgspec.Meta(ge=0, le=MAX_MEAN_STATES)]
    reason: Annotated[str, msgspec.Meta(max_length=200)]


_Document = msgspec.defstruct(
    "_Document",
    [
        ("profile", str),
        ("nodes", list[_Node]),  # type: ignore[valid-type]
        ("edges", list[tuple[str, str, str, str]]),
        ("initial", str),
        ("terminals", Annotated[list[str], msgspec.Meta(min_length=1)]),
        ("donors", list[str], []),
        ("tasks", list[str], []),
        # none in a file of another profile or of an older version: the dev tasks' mean is used
        ("donor_baseline", _Baseline | None, None),
    ],
)


def reference_to_json(ref: Reference) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "profile": ref.profile,
        "donors": ref.donors,
        "tasks": ref.tasks,
        "initial": ref.initial,
        "terminals": ref.terminals,
        "nodes": [{k: getattr(n, k) for k in _FIELDS} for n in ref.nodes.values()],
        "edges": [[e.id, e.source, e.target, e.action] for e in ref.edges],
    }


def read_reference(path: str | Path) -> Reference:
    """A reference file written by `agentlens reference build`, with its donors' baseline; any
    problem is one `ConfigError` line naming the file (and the field, for a wrong value)."""
    try:
        doc = _json(read_named(path))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the reference: {exc}") from exc
    try:
        return reference_from_json(doc)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def _json(data: bytes) -> Any:
    """The document; NaN and Infinity (what Python's `json.dump` writes for such floats) are
    read too, so that the check of their field names it rather than a column of the file."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        try:
            return json.loads(data)
        except ValueError:
            raise exc from None


def reference_from_json(doc: dict[str, Any]) -> Reference:
    """A reference saved by `reference_to_json`; a malformed one is a one-line `ConfigError`."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ConfigError(f"not an AgentLens reference (expected format {FORMAT!r})")
    try:
        typed = msgspec.convert(doc, _Document)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"malformed reference: {exc}") from None
    reference = _reference(typed)
    linked = [reference.initial, *reference.terminals]
    linked += [end for e in reference.edges for end in (e.source, e.target)]
    if missing := [uid for uid in linked if uid not in reference.nodes]:
        raise ConfigError(f"malformed reference: {missing[0]!r:.60} names no node")
    return reference


def _reference(doc: Any) -> Reference:
    """Built from the checked document: each node's fields are `ProcState`'s saved ones."""
    nodes = {}
    for item in doc.nodes:
        node = ProcState(**msgspec.structs.asdict(item))
        nodes[node.uid] = node
    reference = Reference(
        nodes=nodes,
        edges=[Edge(*e) for e in doc.edges],
        initial=doc.initial,
        terminals=list(doc.terminals),
        donors=list(doc.donors),
        tasks=list(doc.tasks),
        profile=_profile(doc.profile),
    )
    if (saved := doc.donor_baseline) is not None:
        baseline = DonorBaseline(saved.f1, saved.cov, saved.n_states, saved.reason)
        reference.cached(BASELINE_KEY, lambda: baseline)
    return reference


def _profile(name: Any) -> Profile:
    if not isinstance(name, str) or name not in PROFILES:
        raise ConfigError(f"reference names an unknown profile {name!r}; one of {sorted(PROFILES)}")
    return cast(Profile, name)


def _label(node: ProcState) -> str:
    what = node.file_path or node.command[:40] or node.resulting_state
    text = f"{node.stage or '·'} {node.tool or 'start'}\\n{what}\\n×{node.support}"
    return text.replace('"', "'")


def reference_to_dot(ref: Reference) -> str:
    lines = ["digraph reference {", "  rankdir=LR;", "  node [shape=box, style=filled];"]
    for uid, node in ref.nodes.items():
        shape = ", peripheries=2" if uid in ref.terminals else ""
        colour = _STAGE_COLOUR.get(node.stage, "#e5e7eb")
        lines.append(f'  "{uid}" [label="{_label(node)}", fillcolor="{colour}"{shape}];')
    lines += [f'  "{e.source}" -> "{e.target}";' for e in ref.edges]
    return "\n".join([*lines, "}"]) + "\n"


def reference_to_mermaid(ref: Reference) -> str:
    ids = {uid: f"n{i}" for i, uid in enumerate(ref.nodes)}
    lines = ["flowchart LR"]
    for uid, node in ref.nodes.items():
        text = _label(node).replace("\\n", "<br/>").replace("[", "(").replace("]", ")")
        lines.append(f'  {ids[uid]}["{text}"]')
    lines += [f"  {ids[e.source]} --> {ids[e.target]}" for e in ref.edges]
    for stage, colour in _STAGE_COLOUR.items():
        members = [ids[u] for u, n in ref.nodes.items() if n.stage == stage]
        if stage and members:
            lines.append(f"  classDef stage{stage} fill:{colour}")
            lines.append(f"  class {','.join(members)} stage{stage}")
    return "\n".join(lines) + "\n"
