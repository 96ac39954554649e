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
`password=`-style assignments. A found secret becomes `[REDACTED:<kind>]`."""

from __future__ import annotations

import os
import re
from functools import cache
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
    # `password = hunter2`, `"token": "abc..."`; not `token: string` (a type) nor `key=$VAR`
    ("password", re.compile(
        r"(?i)(?<![\w-])(?:[\w-]{0,40}(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key"
        r"|auth[_-]?key|private[_-]?key)[\w-]{0,40})(?:[\"']?\s{0,4}[:=]\s{0,4}[\"']|\s{0,4}=\s{0,4})"
        r"(?![$({<\[])([^\s\"'`,;&(){}<>\[]{6,}+)(?![(<\[])")),
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


def set_enabled(on: bool) -> None:
    """The process-wide switch, set once by the CLI from `--no-redact` (threads share it)."""
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
    if not _TRIGGER.search(text):
        return text
    for kind, pattern in _OWN:
        text = pattern.sub(lambda m, k=kind: _masked(m, k), text)  # type: ignore[misc]
    for kind, pattern in _detectors():
        text = pattern.sub(lambda m, k=kind: _masked(m, k), text)  # type: ignore[misc]
    return text


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
    return map_strings(value, redact_text)


def redact_trajectory(trajectory: Trajectory) -> Trajectory:
    """The trajectory with every string redacted; the same object when it holds no secret."""
    from agentlens.trajectory import Trajectory

    plain = msgspec.to_builtins(trajectory)
    cleaned = redact_value(plain)
    return trajectory if cleaned == plain else msgspec.convert(cleaned, Trajectory)


def maybe_redact(trajectory: Trajectory) -> Trajectory:
    return redact_trajectory(trajectory) if enabled() else trajectory
