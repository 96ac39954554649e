"""Reference persistence (versioned JSON) and export (Graphviz DOT, Mermaid)."""

from __future__ import annotations

from dataclasses import MISSING, Field, fields
from pathlib import Path
from typing import Annotated, Any, Literal, cast, get_type_hints

import msgspec
import orjson

from agentlens.errors import ConfigError
from agentlens.process.profiles import PROFILES, Profile
from agentlens.process.pta import Edge, Reference
from agentlens.process.states import ProcState

FORMAT = "agentlens.reference/1"
_SKIP = {"source", "step_index", "term", "mfiles"}
_SAVED = [f for f in fields(ProcState) if f.name not in _SKIP]
_FIELDS = [f.name for f in _SAVED]
_STAGE_COLOUR = {"E": "#60a5fa", "I": "#facc15", "V": "#4ade80", "O": "#a78bfa", "": "#e5e7eb"}

_Count = Annotated[int, msgspec.Meta(ge=0)]
# What a saved state's field must hold beyond its `ProcState` type, checked on read (a wrong one
# would fail every run scored against the reference, blaming the run); `uid` must be given.
_CHECKED: dict[str, Any] = {
    "step_no": _Count,
    "uid": str,
    "stage": Literal["E", "I", "V", "O", ""],
    "input_tokens": _Count,
    "output_tokens": _Count,
    "support": _Count,
}


def _saved_field(
    field: Field[Any], types: dict[str, Any]
) -> tuple[str, Any] | tuple[str, Any, Any]:
    kind = _CHECKED.get(field.name, types[field.name])
    if field.name == "uid" or (field.default is MISSING and field.default_factory is MISSING):
        return field.name, kind
    if field.default_factory is not MISSING:
        return field.name, kind, msgspec.field(default_factory=field.default_factory)
    return field.name, kind, field.default


# the saved fields of `ProcState`, with their types, defaults and the checks above
_Node = msgspec.defstruct(
    "_Node", [_saved_field(f, get_type_hints(ProcState)) for f in _SAVED], kw_only=True
)
_Document = msgspec.defstruct(
    "_Document",
    [
        ("nodes", list[_Node]),  # type: ignore[valid-type]
        ("edges", list[tuple[str, str, str, str]]),
        ("initial", str),
        ("terminals", Annotated[list[str], msgspec.Meta(min_length=1)]),
        ("donors", list[str], []),
        ("tasks", list[str], []),
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
    """A reference file written by `agentlens reference build`; any problem is one `ConfigError`
    line naming the file."""
    try:
        doc = orjson.loads(Path(path).read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the reference: {exc}") from exc
    try:
        return reference_from_json(doc)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def reference_from_json(doc: dict[str, Any]) -> Reference:
    """A reference saved by `reference_to_json`; a malformed one is a one-line `ConfigError`."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ConfigError(f"not an AgentLens reference (expected format {FORMAT!r})")
    try:
        typed = msgspec.convert(doc, _Document)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"malformed reference: {exc}") from None
    reference = _reference(typed, doc.get("profile", "paper"))
    linked = [reference.initial, *reference.terminals]
    linked += [end for e in reference.edges for end in (e.source, e.target)]
    if missing := [uid for uid in linked if uid not in reference.nodes]:
        raise ConfigError(f"malformed reference: {missing[0]!r:.60} names no node")
    return reference


def _reference(doc: Any, profile: Any) -> Reference:
    """Built from the checked document: each node's fields are `ProcState`'s saved ones."""
    nodes = {}
    for item in doc.nodes:
        node = ProcState(**msgspec.structs.asdict(item))
        nodes[node.uid] = node
    return Reference(
        nodes=nodes,
        edges=[Edge(*e) for e in doc.edges],
        initial=doc.initial,
        terminals=list(doc.terminals),
        donors=list(doc.donors),
        tasks=list(doc.tasks),
        profile=_profile(profile),
    )


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
