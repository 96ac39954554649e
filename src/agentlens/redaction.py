"""One secret-redaction pass for everything that leaves a trace: judge, simulator and evaluator
prompts, viewer payloads, reports, exports and the store.

The choke point is the read path (`formats.load.read_path`): every trajectory is redacted as it
is read, before any renderer cuts a text short, so a key is never half shown. A scenario run's
agent trace comes through that path too, and the session it saves is redacted once more (its
simulated user's and verifiers' texts). Step value's own masking calls `redact_text` first. `--no-redact` (or
`AGENTLENS_NO_REDACT=1`) switches it off for one command.

Detection is the `detect-secrets` library's shape detectors (AWS, GitHub, GitLab, Slack, Stripe,
JWT, SendGrid, PyPI, npm, Telegram, Discord, Azure, ...) plus our own patterns for what those miss
or only half match: OpenAI `sk-`/`sk-proj-` keys, whole private-key blocks, `Bearer` tokens and
`password=`-style assignments. A found secret becomes `[REDACTED:<kind>]`.

Speed: a trajectory is encoded to JSON once and scanned for needles (`NEEDLES`, a necessary
condition for `_TRIGGER`) at C speed; only the strings a needle hits are decoded and run through
`redact_text`, and a trajectory with no changed string is returned as it is, unwalked. There,
each pattern runs only on a string holding one of the words its parse tree proves every match
needs (`required_words`)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

import msgspec

from agentlens.os_names import map_strings

if TYPE_CHECKING:
    from agentlens.trajectory import Trajectory

MARK = "[REDACTED:{kind}]"
_OWN = [
    ("private-key", re.compile(
        r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----[\s\S]*?"
        r"(?:-----END \1-----|\Z)")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|ant-|svcacct-)?[A-Za-z0-9_-]{16,}")),
    ("aws-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("bearer", re.compile(r"(?i)(?<=\bbearer\s)[A-Za-z0-9._~+/=-]{8,}+")),
    # the whole token: detect-secrets' own pattern stops before the signature
    ("json-web-token", re.compile(r"\beyJ[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.[A-Za-z0-9_-]+")),
    # a URL's password up to the authority's last `@`: detect-secrets' needs a user name and
    # stops at RFC 3986 sub-delimiters (`redis://:pw@h`, `admin:Secr3t!@h`); not `${VAR}`
    ("basic-auth-credentials", re.compile(
        r"://[^:/?#\[\]@\s\"'<>\\]*:(?![$({<\[])([^/?#\s\"'<>\\]+)@")),
    # `password = hunter2`, `"token": "abc..."`; not `token: string` (a type) nor `key=$VAR`
    ("password", re.compile(
        r"(?i)(?<![\w-])(?:[\w-]{0,40}(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key"
        r"|auth[_-]?key|private[_-]?key)[\w-]{0,40})(?:[\"']?\s{0,4}[:=]\s{0,4}[\"']|\s{0,4}=\s{0,4})"
        r"(?![$({<\[])([^\s\"'`,;&(){}<>\[]{6,}+)(?![(<\[])")),
    # YAML's `POSTGRES_PASSWORD: hunter2` alone on its line; not a type (`api_key: SecretStr`)
    ("password", re.compile(
        r"(?im)^[ \t]*(?:- )?[\w.-]{0,40}(?:password|passwd|pwd|secret|token|api[_-]?key"
        r"|access[_-]?key|auth[_-]?key|private[_-]?key)[\w.-]{0,40}:[ \t]+(?![$({<\[])"
        r"(?!(?-i:[A-Z][A-Za-z]*|string|str|bytes|number|boolean|bool|object|integer|int)[ \t]*$)"
        r"([^\s\"'`,;&(){}<>\[]{6,})[ \t]*$")),
]  # fmt: skip
# detect-secrets detectors left out: public IPs are no secret; the Artifactory and Twilio shapes
# match ordinary words and hex ids; Discord and Telegram shapes have no literal to find them by
# quickly and would cost every string a slow scan.
_SKIPPED_DETECTORS = {
    "IPPublicDetector", "ArtifactoryDetector", "TwilioKeyDetector", "DiscordBotTokenDetector",
    "TelegramBotTokenDetector",
}  # fmt: skip
_enabled: bool | None = None


def enabled() -> bool:
    if _enabled is not None:
        return _enabled
    return os.environ.get("AGENTLENS_NO_REDACT") != "1"


def switch() -> bool | None:
    """The switch as set (`None`: `AGENTLENS_NO_REDACT` decides), to put back after a block."""
    return _enabled


def set_enabled(on: bool | None) -> None:
    """The process-wide switch, set once by the CLI from `--no-redact` (threads share it); `None`
    defers to `AGENTLENS_NO_REDACT` again."""
    global _enabled
    _enabled = on


@cache
def _detectors() -> list[tuple[str, re.Pattern[str]]]:
    """The shape detectors of `detect-secrets`, as (kind, pattern)."""
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError:  # pragma: no cover - a declared dependency; our own patterns still run
        return []
    found: list[tuple[str, re.Pattern[str]]] = []
    plugins: dict[str, type] = get_mapping_from_secret_type_to_class()
    for kind, plugin in plugins.items():
        if issubclass(plugin, RegexBasedDetector) and plugin.__name__ not in _SKIPPED_DETECTORS:
            slug = re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-")
            patterns: Any = getattr(plugin, "denylist", ())  # a class attribute
            found += [(slug, pattern) for pattern in patterns]
    return found


# Every pattern above needs one of these in the text: most strings are checked by this one scan.
_TRIGGER = re.compile(
    r"sk-|sk_live|rk_live|AKIA|ASIA|ABIA|ACCA|gh[pousr]_|github_pat_|xox|BEGIN|(?i:bearer)|eyJ"
    r"|(?i:pass|pwd|secret|token|key)[\w-]{0,40}[\"']?\s{0,4}[:=]|SG\.|pypi-|gl[a-z]{2,4}-|GR1348941"
    r"|://[^/\s]*@|sq0csp|npm_|hooks\.slack|-us\d"
)


def redact_text(text: str) -> str:
    """`text` with every secret found replaced by `[REDACTED:<kind>]`."""
    if not _triggered(text):
        return text
    has_run: dict[re.Pattern[str], bool] = {}  # for the text as it is now (patterns share runs)
    for kind, pattern, needs, run in _patterns():
        if needs is not None and not any(word in _folded(text) for word in needs):
            continue
        if run is not None:
            if run not in has_run:
                has_run[run] = run.search(text) is not None
            if not has_run[run]:
                continue
        redacted = pattern.sub(lambda m, k=kind: _masked(m, k), text)  # type: ignore[misc]
        if redacted != text:
            text, has_run = redacted, {}
    return text


def _triggered(text: str) -> bool:
    """`_TRIGGER.search(text)`, tried only where a needle starts in the folded text (which keeps
    each character's place): every `_TRIGGER` match starts with one. 3-4x faster than the search
    on the long tool outputs that hold a needle (`PASSED`, `KeyError`)."""
    starts = _find_words()(_folded(text))
    return any(_TRIGGER.match(text, at) for at in starts)


Needs = tuple[str, re.Pattern[str], frozenset[str] | None, re.Pattern[str] | None]


@cache
def _patterns() -> list[Needs]:
    """Our patterns, then the detectors', each with the words one of which any match needs and
    the long run of one character class it needs (`required_run`)."""
    return [(kind, p, required_words(p), required_run(p)) for kind, p in [*_OWN, *_detectors()]]


LONG_RUN = 16


def required_run(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """`[class]{n}` (with the pattern's flags) when every match of `pattern` holds n >= 16
    characters of one class in a row (the 44- to 64-character keys of the IBM, SoftLayer and
    Cloudant detectors, whose patterns are slow to run on every string that says `key`); None
    when its parse tree proves no such run."""
    from re import _parser  # type: ignore[attr-defined]

    runs = _mandatory_runs(_parser.parse(pattern.pattern, pattern.flags))
    if not runs:
        return None
    count, members = max(runs)
    return re.compile(f"[{members}]{{{count}}}", pattern.flags)


def _mandatory_runs(items: Any) -> list[tuple[int, str]]:
    """(n, class) of each repeat of one character class, at least n times, that no match can skip
    (in the sequence itself or in its groups, not in a branch or an optional part)."""
    runs = []
    for op, value in items:
        op = str(op)
        if op == "SUBPATTERN" and not value[1] and not value[2]:  # `(?i:...)` would change flags
            runs += _mandatory_runs(value[-1])
        elif op == "ATOMIC_GROUP":
            runs += _mandatory_runs(value)
        elif op in {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"} and value[0] >= LONG_RUN:
            members = _class_members(value[2])
            if members is not None:
                runs.append((value[0], members))
    return runs


def _class_members(body: Any) -> str | None:
    """A character class's members as class source, for a body that is one class of literals and
    ranges (else None)."""
    if len(body) != 1 or str(body[0][0]) != "IN":
        return None
    members = ""
    for op, value in body[0][1]:
        if str(op) == "LITERAL":
            members += re.escape(chr(value))
        elif str(op) == "RANGE":
            members += f"{re.escape(chr(value[0]))}-{re.escape(chr(value[1]))}"
        else:  # a negation or a category: not spelled out here
            return None
    return members


# Python's case-insensitive matching takes these for `i`, `i`, `s`, `k`: folded to them first, so
# a word a pattern needs is found in `_folded(text)` whenever the pattern could match `text`.
_LOOKALIKES = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


@lru_cache(maxsize=64)
def _folded(text: str) -> str:
    return text.translate(_LOOKALIKES).lower()


def required_words(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """Lower-case words one of which every match of `pattern` (or its lookbehind) contains, the
    most selective such set the pattern's parse tree proves; None when it proves none."""
    from re import _parser  # type: ignore[attr-defined]

    return _sequence_needs(_parser.parse(pattern.pattern, pattern.flags))


def _sequence_needs(items: Any) -> frozenset[str] | None:
    options: list[frozenset[str]] = []
    run = ""
    for op, value in [*items, (None, None)]:
        char = chr(value) if str(op) == "LITERAL" else ""
        if char and char.isascii():
            run += char.lower()
            continue
        if len(run) >= 2:
            options.append(frozenset([run]))
        run = ""
        needs = _item_needs(str(op), value)
        if needs:
            options.append(needs)
    return max(options, key=lambda words: min(map(len, words)), default=None)


def _item_needs(op: str, value: Any) -> frozenset[str] | None:
    if op == "SUBPATTERN":
        return _sequence_needs(value[-1])
    if op in {"ATOMIC_GROUP"}:
        return _sequence_needs(value)
    if op == "ASSERT":  # a lookaround's text is in the string too
        return _sequence_needs(value[1])
    if op in {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"} and value[0] >= 1:
        return _sequence_needs(value[2])
    if op == "BRANCH":
        alternatives = [_sequence_needs(branch) for branch in value[1]]
        if all(alternatives):
            return frozenset().union(*alternatives)  # type: ignore[arg-type]
    return None


def _masked(match: re.Match[str], kind: str) -> str:
    """A pattern with a group marks only the group (the value after `password=`)."""
    mark = MARK.format(kind=kind)
    if match.re.groups and kind != "private-key" and match.group(match.re.groups):
        start, end = match.span(match.re.groups)
        whole = match.group(0)
        return whole[: start - match.start()] + mark + whole[end - match.start() :]
    return mark


def redact_value(value: Any) -> Any:
    """Every string in a JSON-like value redacted (dict keys included)."""
    try:
        changed = _changed_strings(msgspec.json.encode(value))
    except (TypeError, ValueError, msgspec.EncodeError):  # not JSON (a set, bytes keys): walk
        return redact_walk(value)
    return map_strings(value, lambda text: changed.get(text, text)) if changed else value


def redact_walk(value: Any) -> Any:
    """The reference pass, as it was before the prefilters: every pattern on every string that
    holds a trigger (what `redact_value` must equal; tests and `benchmarks/redaction.py --check`
    compare the two)."""
    return map_strings(value, _redact_every_pattern)


def _redact_every_pattern(text: str) -> str:
    if not _TRIGGER.search(text):
        return text
    for kind, pattern, *_ in _patterns():
        text = pattern.sub(lambda m, k=kind: _masked(m, k), text)  # type: ignore[misc]
    return text


def encoded(trajectory: Trajectory) -> bytes | None:
    """The JSON document `redact_trajectory` scans; None for what JSON cannot hold."""
    try:
        return msgspec.json.encode(trajectory)
    except (TypeError, ValueError, msgspec.EncodeError):
        return None


def redact_trajectory(trajectory: Trajectory, document: bytes | None = None) -> Trajectory:
    """The trajectory with every string redacted; the same object when it holds no secret.
    `document`: its `encoded` form, when the caller has it already."""
    from agentlens.trajectory import Trajectory

    document = document if document is not None else encoded(trajectory)
    changed = None if document is None else _changed_strings(document)  # None: the walk decides
    if changed is not None and not changed:
        return trajectory
    plain = msgspec.to_builtins(trajectory)
    if changed is None:
        cleaned = redact_walk(plain)
    else:
        cleaned = map_strings(plain, lambda text: changed.get(text, text))
    return trajectory if cleaned == plain else msgspec.convert(cleaned, Trajectory)


def maybe_redact(trajectory: Trajectory) -> Trajectory:
    return redact_trajectory(trajectory) if enabled() else trajectory


# A loose, necessary condition for `_TRIGGER`, looked for once in a whole document's JSON with
# ASCII letters lowered (no Python walk): every `_TRIGGER` match holds one of these literals. The
# last four are the non-ASCII letters Python's case-insensitive matching takes for `i`, `s` and
# `k` (İ ı ſ K), so the `(?i:...)` parts are covered exactly; `gl` and `-us` stand for
# `gl[a-z]{2,4}-` and `-us\\d`. None holds a quote, a backslash or a control character, so each
# hit lies inside one JSON string.
NEEDLES = [
    *(word.encode() for word in (
        "sk-", "sk_live", "rk_live", "akia", "asia", "abia", "acca", "ghp_", "gho_", "ghu_",
        "ghs_", "ghr_", "github_pat_", "xox", "begin", "bearer", "eyj", "pass", "pwd", "secret",
        "token", "key", "sg.", "pypi-", "gl", "gr1348941", "://", "sq0csp", "npm_",
        "hooks.slack", "-us", "\u0130", "\u0131", "\u017f", "\u212a")),
]  # fmt: skip


# A hit of one of these can start a `_TRIGGER` match only with a `:` or `=` after it in its
# string (`(?i:pass|...)[\w-]{0,40}["']?\s{0,4}[:=]`); JSON writes both as they are. In a
# trajectory most hits are of `token` in keys (`"prompt_tokens"`), which have neither.
_ASSIGNED = frozenset(
    NEEDLES.index(word) for word in (b"pass", b"pwd", b"secret", b"token", b"key")
)


@cache
def _find_needles() -> Callable[[bytes], Iterable[tuple[int, int]]]:
    """(needle, start) of every needle in a document, overlaps included (a hit passed over may
    overlap another): Aho-Corasick (`ahocorasick-rs`, about 10x faster than `re` on this), or
    an `re` look-ahead alternation when the package is missing."""
    try:
        import ahocorasick_rs
    except ImportError:  # pragma: no cover - a declared dependency
        ahead = re.compile(b"(?=(" + b"|".join(map(re.escape, NEEDLES)) + b"))")
        return lambda document: (
            (NEEDLES.index(hit.group(1)), hit.start()) for hit in ahead.finditer(document)
        )
    finder = ahocorasick_rs.BytesAhoCorasick(NEEDLES)
    return lambda document: (
        (needle, start)
        for needle, start, _ in finder.find_matches_as_indexes(document, overlapping=True)
    )


@cache
def _find_words() -> Callable[[str], Iterable[int]]:
    """Where the ASCII needles start in a folded text, overlaps included (`_triggered`)."""
    words = [needle.decode() for needle in NEEDLES if needle.isascii()]
    try:
        import ahocorasick_rs
    except ImportError:  # pragma: no cover - a declared dependency
        ahead = re.compile("(?=" + "|".join(map(re.escape, words)) + ")")
        return lambda text: (hit.start() for hit in ahead.finditer(text))
    finder = ahocorasick_rs.AhoCorasick(words)
    return lambda text: (
        start for _, start, _ in finder.find_matches_as_indexes(text, overlapping=True)
    )


_BACKSLASH = ord("\\")


def _changed_strings(document: bytes) -> dict[str, str]:
    """{string: redacted} for the strings of a JSON document that redaction changes. Only the
    strings a needle hits (`_ASSIGNED`: with a `:` or `=` after it) are decoded and checked."""
    changed: dict[str, str] = {}
    seen_to = -1
    for needle, at in _find_needles()(document.lower()):
        if at < seen_to:
            continue  # a second needle in a string already checked
        end = _unescaped_quote(document, at, backwards=False)
        if needle in _ASSIGNED and not _assigns(document, at, end):
            continue  # no `_TRIGGER` match can start here; another needle of the string may
        start, seen_to = _unescaped_quote(document, at, backwards=True), end
        text = msgspec.json.decode(document[start : seen_to + 1], type=str)
        redacted = _redact_cached(text)
        if redacted != text:
            changed[text] = redacted
    return changed


def _assigns(document: bytes, at: int, end: int) -> bool:
    return document.find(b":", at, end) >= 0 or document.find(b"=", at, end) >= 0


def _unescaped_quote(document: bytes, at: int, *, backwards: bool) -> int:
    """The quote that opens (or closes) the JSON string holding offset `at`."""
    while True:
        at = document.rfind(b'"', 0, at) if backwards else document.find(b'"', at)
        slashes = 0
        while document[at - 1 - slashes] == _BACKSLASH:
            slashes += 1
        if slashes % 2 == 0:
            return at
        at = at if backwards else at + 1


@lru_cache(maxsize=8192)
def _redact_cached(text: str) -> str:
    """Prompts and tool texts repeat across a batch's trajectories: each is checked once."""
    return redact_text(text)
