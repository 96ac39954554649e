"""State equivalence: the released confidence cascade, first decision wins (spec §4.2).

`a` is the reference (merged / PTA) state, `b` the new or candidate state; the check is not
symmetric. With the LLM tier off, the heuristic tier's verdict is final. Both profiles keep the
release's permissive "same first token" terminal rule (spec decision 9); `base_command_rule=False`
drops it (the paper's cascade ends at grouped targets with Jaccard ≥ 0.5).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from agentlens.process.states import ProcState


@dataclass(frozen=True, slots=True)
class ToolInfo:
    category: str
    strategy: str
    group: str = ""


TOOLS = {
    "read_file": ToolInfo("read", "file_path", "file_read"),
    "replace_string_in_file": ToolInfo("edit", "file_path", "file_edit"),
    "multi_replace_string_in_file": ToolInfo("edit", "file_path", "file_edit"),
    "apply_patch": ToolInfo("edit", "file_path", "file_edit"),
    "edit_file": ToolInfo("edit", "file_path", "file_edit"),
    "create_file": ToolInfo("edit", "file_path", "file_edit"),
    "list_dir": ToolInfo("search", "file_path", "explore"),
    "grep_search": ToolInfo("search", "query", "search"),
    "file_search": ToolInfo("search", "query", "search"),
    "semantic_search": ToolInfo("search", "query", "search"),
    "run_in_terminal": ToolInfo("execute", "command", "terminal"),
    "think": ToolInfo("general", "none"),
}
DEFAULT_TOOL = ToolInfo("general", "identity")
FILE_STATE_PREFIXES = (
    "file_modified:",
    "file_patched:",
    "file_created:",
    "files_modified:",
    "file_modify_failed:",
    "file_create_failed:",
)


def tool_info(tool: str) -> ToolInfo:
    return TOOLS.get(tool, DEFAULT_TOOL)


def same_group(tool_a: str, tool_b: str) -> bool:
    group = tool_info(tool_a).group
    return bool(group) and group == tool_info(tool_b).group


class Equivalence:
    """`check(a, b, position)` → bool. `base_command_rule` keeps the release's permissive
    "same first token of the command" rule; thresholds are the profile's."""

    def __init__(
        self,
        *,
        base_command_rule: bool = True,
        line_overlap_min: float = 0.30,
        search_jaccard_min: float = 0.5,
        query_jaccard_min: float = 0.8,
    ) -> None:
        self.base_command_rule = base_command_rule
        self.line_overlap_min = line_overlap_min
        self.search_jaccard_min = search_jaccard_min
        self.query_jaccard_min = query_jaccard_min

    def check(self, a: ProcState, b: ProcState, position: int) -> bool:
        if position == 0:
            return True
        if a.stage and b.stage and a.stage != b.stage:
            return False
        if a.tool == "run_in_terminal" == b.tool and a.has_entry and b.has_entry:
            return self._terminal_pair(a, b)
        if (
            a.tool == b.tool
            and a.file_path != b.file_path
            and a.file_path
            and b.file_path
            and tool_info(a.tool).category in ("edit", "read")
        ):
            return _other_file(a, b)
        return self.cascade(a, b)

    def cascade(self, a: ProcState, b: ProcState) -> bool:
        """The full cascade for a non-initial position (no terminal shortcut)."""
        if a.stage and b.stage and a.stage != b.stage:
            return False
        exact = _exact(a, b)
        if exact is not None:
            return exact
        info = tool_info(a.tool)
        if info.category in ("edit", "read"):
            if info.category == "edit":
                scope = _scope_match(a, b)
                if scope is not None:
                    return scope
            overlap = self._line_overlap(a, b, info)
            if overlap is not None:
                return overlap
        elif (
            a.resulting_state
            and a.resulting_state == b.resulting_state
            and not (a.content_hash and b.content_hash and a.content_hash != b.content_hash)
        ):
            return True
        if info.strategy == "command":
            terminal = self._terminal(a, b)
            if terminal is not None:
                return terminal
        return self._heuristic(a, b)

    def _line_overlap(self, a: ProcState, b: ProcState, info: ToolInfo) -> bool | None:
        if a.tool != b.tool or not a.file_path or not b.file_path:
            return None
        if a.file_path != b.file_path:
            return False
        if not a.line_range or not b.line_range:
            return True if info.category == "read" else None
        overlap = line_overlap(a.line_range, b.line_range)
        if overlap >= self.line_overlap_min:
            return True
        return None if overlap > 0 else False

    def _terminal_pair(self, a: ProcState, b: ProcState) -> bool:
        """The whole cascade for two terminal calls of one stage: every rule that can decide
        is an "equivalent" rule (exact hash / resulting state / observation, terminal similarity,
        then the heuristic's collapsed-command equality), so the verdict is their disjunction."""
        ha, hb = a.content_hash, b.content_hash
        if ha and ha == hb:
            return True
        if a.resulting_state and a.resulting_state == b.resulting_state and not (ha and hb):
            return True
        if a.observation == b.observation:
            return True
        ka, kb = terminal_key(a), terminal_key(b)
        return bool(self._terminal_keys(ka, kb)) or ka[5] == kb[5]

    def _terminal(self, a: ProcState, b: ProcState) -> bool | None:
        if not a.has_entry or not b.has_entry:
            return None
        return self._terminal_keys(terminal_key(a), terminal_key(b))

    def _terminal_keys(self, ka: TermKey, kb: TermKey) -> bool | None:
        if not ka[0] or not kb[0]:
            return None
        if ka[1] == kb[1]:
            return True
        if ka[2] and ka[2] == kb[2]:
            ta, tb = ka[3], kb[3]
            if not ta or not tb or ta == tb:
                return True
            if ka[2] == "search" and word_jaccard(ta, tb) >= self.search_jaccard_min:
                return True
        if self.base_command_rule and ka[4] and ka[4] == kb[4]:
            return True
        return None

    def _heuristic(self, a: ProcState, b: ProcState) -> bool:
        if a.tool != b.tool:
            return _cross_tool(a, b)
        if not a.has_entry or not b.has_entry:
            if a.is_initial or b.is_initial:
                return a.is_initial and b.is_initial
            return not (a.file_path and b.file_path and a.file_path != b.file_path)
        return self._compare_calls(a, b)

    def _compare_calls(self, a: ProcState, b: ProcState) -> bool:
        info = tool_info(a.tool)
        args_a, args_b = a.args, b.args
        if info.strategy == "file_path":
            pa = eq_normalize_path(args_a.get("filePath") or args_a.get("path", ""))
            pb = eq_normalize_path(args_b.get("filePath") or args_b.get("path", ""))
            if pa != pb:
                return False
            if a.tool == "read_file":
                lines = _read_lines(args_a), _read_lines(args_b)
                if lines[0] is not None and lines[1] is not None:
                    return _read_overlap(lines[0], lines[1], self.line_overlap_min)
            return True
        if info.strategy == "query":
            qa, qb = args_a.get("query", ""), args_b.get("query", "")
            return qa == qb or word_jaccard(qa, qb) > self.query_jaccard_min
        if info.strategy == "command":
            return terminal_key(a)[5] == terminal_key(b)[5]
        return args_a == args_b


TermKey = tuple[bool, str, str, str, str, str]


def terminal_key(state: ProcState) -> TermKey:
    """(has command, normalised, group, target, first token, collapsed), computed once per state."""
    if state.term is None:
        raw = state.args.get("command", "")
        cmd = raw.strip() if isinstance(raw, str) else ""
        norm = normalize_terminal(cmd)
        group = classify_terminal(norm) or ("", "")
        base = norm.split()[0] if norm else ""
        state.term = (bool(cmd), norm, group[0], group[1], base, _collapse(raw))
    return state.term


def _other_file(a: ProcState, b: ProcState) -> bool:
    """Same file tool on two different files: only the exact tier can still say "equivalent"
    (scope needs one file; the line-overlap tier then says "different files")."""
    ha, hb = a.content_hash, b.content_hash
    if ha and ha == hb:
        return True
    if a.resulting_state and a.resulting_state == b.resulting_state and not (ha and hb):
        return True
    return a.observation == b.observation


def _exact(a: ProcState, b: ProcState) -> bool | None:
    if a.tool != b.tool:
        return None if same_group(a.tool, b.tool) else False
    ha, hb = a.content_hash, b.content_hash
    if ha and hb and ha == hb:
        return True
    ra = a.resulting_state
    if ra and ra == b.resulting_state and not (ha and hb):
        return True
    if a.observation == b.observation:
        return True
    return None


def _scope_match(a: ProcState, b: ProcState) -> bool | None:
    if a.tool != b.tool or not a.file_path or a.file_path != b.file_path:
        return None
    for x, y in (
        (a.scope_path, b.scope_path),
        (a.function_name, b.function_name),
        (a.class_name, b.class_name),
    ):
        if x and y:
            return x == y
    sa, sb = description_symbols(a.content_description), description_symbols(b.content_description)
    if sa and sb:
        return bool(sa & sb)
    return None


def _cross_tool(a: ProcState, b: ProcState) -> bool:
    if not same_group(a.tool, b.tool):
        return False
    if not modified_files(a) & modified_files(b):
        return False
    if a.content_hash and b.content_hash and a.content_hash != b.content_hash:
        if a.scope_path and b.scope_path:
            set_a = {s.strip() for s in a.scope_path.split(",")}
            return bool(set_a & {s.strip() for s in b.scope_path.split(",")})
        sa = description_symbols(a.content_description)
        sb = description_symbols(b.content_description)
        if sa and sb:
            return bool(sa & sb)
    return True


def modified_files(state: ProcState) -> frozenset[str]:
    if state.mfiles is None:
        state.mfiles = _modified_files(state)
    return state.mfiles


def _modified_files(state: ProcState) -> frozenset[str]:
    files = {eq_normalize_path(state.file_path)} if state.file_path else set()
    rs = state.resulting_state
    for prefix in FILE_STATE_PREFIXES:
        if rs.startswith(prefix):
            files.update(
                eq_normalize_path(p.strip()) for p in rs[len(prefix) :].split(",") if p.strip()
            )
            break
    return frozenset(files)


def _read_lines(args: dict[str, object]) -> tuple[int, int] | None:
    start = args.get("startLine") or args.get("start_line")
    end = args.get("endLine") or args.get("end_line")
    if start is None or end is None:
        return None
    try:
        return int(start), int(end)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None


def _read_overlap(ra: tuple[int, int], rb: tuple[int, int], minimum: float) -> bool:
    lo, hi = max(ra[0], rb[0]), min(ra[1], rb[1])
    if hi < lo:
        return False
    union = max(ra[1], rb[1]) - min(ra[0], rb[0]) + 1
    return union > 0 and (hi - lo + 1) / union >= minimum


def line_overlap(ra: tuple[int, int], rb: tuple[int, int]) -> float:
    """|∩| / |∪| of two inclusive line intervals."""
    inter = max(0, min(ra[1], rb[1]) - max(ra[0], rb[0]) + 1)
    union = max(ra[1], rb[1]) - min(ra[0], rb[0]) + 1
    return inter / union if union > 0 else 0.0


def word_jaccard(a: str, b: str) -> float:
    wa, wb = set(a.lower().split()), set(b.lower().split())
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


@lru_cache(maxsize=65536)
def eq_normalize_path(path: str) -> str:
    if not path:
        return ""
    text = path.lstrip("/\\")
    for prefix in ("workspace/", "workspaces/", "home/", "tmp/"):
        if text.lower().startswith(prefix):
            text = text[len(prefix) :]
    return text.lower().replace("\\", "/")


def _collapse(cmd: object) -> str:
    return " ".join(str(cmd or "").split()).lower()


_CD = re.compile(r"^cd\s+[^\s&;]+\s*[&;]+\s*")
_PY = re.compile(r"\bpython3?\b")
_NPM = re.compile(r"\bnpm i\b")
_SEARCH = re.compile(r"^(?:grep|rg|ag|ack|fgrep|egrep)\b|\bgrep\b", re.I)
_VIEW = re.compile(r"^(?:cat|head|tail|less|more)\b|^sed\s+-?n", re.I)
_EXEC = re.compile(r"^(?:python|node|bash|sh|ruby|perl)\s", re.I)
_EXEC_TARGET = re.compile(r"\b(?:python|node|bash|sh|ruby|perl)\s+(\S+)")
_QUOTED = re.compile(r"['\"]([^'\"]+)['\"]")
_VIEW_EXT: tuple[str, ...] = (".py", ".js", ".ts", ".c", ".h", ".java", ".rs", ".go", ".rb")
_VIEW_EXT += (".txt", ".md", ".json", ".yaml", ".yml", ".toml", ".cfg", ".ini")


@lru_cache(maxsize=65536)
def normalize_terminal(cmd: str) -> str:
    """Drop one leading `cd DIR &&`, unify python3/python and `npm i`, collapse space, lowercase."""
    cmd = _CD.sub("", cmd)
    if "python" in cmd:  # each substitution only where its word is: a scan is costlier than `in`
        cmd = _PY.sub("python", cmd)
    if "npm i" in cmd:
        cmd = _NPM.sub("npm install", cmd)
    return " ".join(cmd.split()).lower()


@lru_cache(maxsize=65536)
def classify_terminal(cmd: str) -> tuple[str, str] | None:
    """(group, target) for search / view / execute commands, else None."""
    if not cmd.strip():
        return None
    if _SEARCH.search(cmd):
        quoted = _QUOTED.search(cmd)
        if quoted:
            return ("search", quoted.group(1).lower())
        rest = [p for p in cmd.split()[1:] if not p.startswith(("-", "/"))]
        return ("search", rest[0].lower() if rest else "")
    if _VIEW.search(cmd):
        for part in reversed(cmd.split()):
            if "/" in part or part.endswith(_VIEW_EXT):
                return ("view", part.lower())
        return ("view", "")
    if _EXEC.search(cmd):
        target = _EXEC_TARGET.search(cmd)
        return ("execute", target.group(1).lower() if target else "")
    return None


_SYMBOL_PATTERNS = (
    re.compile(
        r"(?:added|removed)\s+(?:function|class|method)\s+['\"]?([a-zA-Z_][a-zA-Z0-9_]*)['\"]?",
        re.I,
    ),
    re.compile(r"(?:function|method|class|def)\s+['\"]?([a-zA-Z_][a-zA-Z0-9_]*)['\"]?", re.I),
)
_LISTS = (
    re.compile(r"functions?:\s*([a-zA-Z_][a-zA-Z0-9_,\s]*)", re.I),
    re.compile(r"classes?:\s*([a-zA-Z_][a-zA-Z0-9_,\s]*)", re.I),
)
_IDENT = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_RENAMED = re.compile(
    r"renamed\s+(?:\w+\s+)?['\"]?([a-zA-Z_][a-zA-Z0-9_]*)['\"]?\s+to\s+['\"]?([a-zA-Z_][a-zA-Z0-9_]*)['\"]?",
    re.I,
)
_STOP = {"in", "to", "from", "the", "and", "or", "with", "modified", "added", "removed"}
_STOP |= {"renamed", "imports", "code", "file", "created", "python", "javascript"}


@lru_cache(maxsize=65536)
def description_symbols(desc: str) -> frozenset[str]:
    """Identifiers named in a change description (spec §4.3)."""
    if not desc:
        return frozenset()
    names = set(re.findall(r"'([a-zA-Z_][a-zA-Z0-9_]*)'", desc))
    for pattern in _LISTS:
        for match in pattern.findall(desc):
            names.update(n.strip() for n in match.split(",") if _IDENT.match(n.strip()))
    for pattern in _SYMBOL_PATTERNS:
        names.update(pattern.findall(desc))
    for old, new in _RENAMED.findall(desc):
        names.update((old, new))
    return frozenset(n for n in names if ("." not in n or n.endswith(".py")) and n not in _STOP)
