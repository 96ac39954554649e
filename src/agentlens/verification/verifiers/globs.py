"""Path globs with the semantics of Java's `FileSystem.getPathMatcher("glob:…")`, which the
released verifiers use (spec §3): `*` and `?` stay inside one path segment, `**` crosses `/`,
`[...]` is a character class (`!` negates) and `{a,b}` an alternation; like the released code,
`\\` is read as a path separator (so nothing can be escaped). So
`src/*` matches `src/A.java` but not `src/x/A.java`; `src/**` matches both."""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=512)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile `pattern` (a `/`-separated glob; `\\` separators are normalised) to a regex."""
    pattern = pattern.replace("\\", "/")
    out, i, in_group = [], 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "*":
            double = pattern.startswith("**", i)
            out.append(".*" if double else "[^/]*")
            i += 2 if double else 1
            continue
        if char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", i + 2)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = pattern[i + 1 : end]
                negate = body.startswith("!")
                body = body[1:] if negate else body
                body = "\\" + body if body.startswith("^") else body  # literal in Java
                out.append(f"[{'^' if negate else ''}{body}]")
                i = end
        elif char == "{" and not in_group:
            in_group = True
            out.append("(?:")
        elif char == "}" and in_group:
            in_group = False
            out.append(")")
        elif char == "," and in_group:
            out.append("|")
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out))


def glob_match(path: str, pattern: str) -> bool:
    """Whether the repository-relative posix `path` matches the whole glob."""
    return glob_regex(pattern).fullmatch(path) is not None
