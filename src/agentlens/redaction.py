"""One secret-redaction pass for everything that leaves a trace: judge, simulator and evaluator
prompts, viewer payloads, reports, exports and the store.

The choke point is the read path (`formats.load.read_path`): every trajectory is redacted as it
is read, before any renderer cuts a text short, so a key is never half shown. A scenario run's
agent trace comes through that path too, and the session it saves is redacted once more (its
simulated user's and verifiers' texts). Step value's own masking calls `redact_text` first. Live
text cut short before it is stored or sent (a command's output, an MCP result, a verifier's
output tail) is cut by `masked_head`/`masked_tail`, which mask it first. `--no-redact` (or
`AGENTLENS_NO_REDACT=1`) switches it off for one command.

Detection is the `detect-secrets` library's shape detectors (AWS, GitHub, GitLab, Slack, Stripe,
JWT, SendGrid, PyPI, npm, Telegram, Discord, Azure, ...) plus our own patterns for what those miss
or only half match: OpenAI `sk-`/`sk-proj-` keys, whole private-key blocks, `Bearer` tokens and
`password=`-style assignments; and what only its context says is secret: a Kubernetes `Secret`'s
values, a `.pgpass` or `.env` file's lines where the file is named. A found secret becomes
`[REDACTED:<kind>]`.

Speed: a trajectory is encoded to JSON once and scanned for needles (`NEEDLES`, a necessary
condition for `_TRIGGER`) at C speed; only the strings a needle hits are decoded and run through
`redact_text`, and a trajectory with no changed string is returned as it is, unwalked. There,
each pattern runs only on a string holding one of the words its parse tree proves every match
needs (`required_words`, all found by one scan of the text) and the long run of one character
class it needs (`required_run`, found in an ASCII text by a byte translation, not `re`)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

import msgspec

from agentlens.os_names import map_strings

if TYPE_CHECKING:
    from agentlens.trajectory import Trajectory

MARK = "[REDACTED:{kind}]"
_A_MARK = re.compile(r"\[(?:REDACTED(?::[a-z0-9-]{1,40})?|MASKED)\]")  # step value's too
_MARK_MAX = 52


def clip_head(text: str, n: int) -> str:
    """`text[:n]`, or up to the end of a redaction mark that `n` falls inside: a reader (the
    judge) sees `[REDACTED:openai-key]` whole, never `[REDACTED:openai-k`."""
    for mark in _A_MARK.finditer(text, max(0, n - _MARK_MAX), n + _MARK_MAX):
        if mark.start() < n < mark.end():
            return text[: mark.end()]
    return text[:n]


def clip_tail(text: str, n: int) -> str:
    """`text[-n:]` (nothing for n <= 0), or from the start of a redaction mark it would cut."""
    at = len(text) - n
    if n <= 0:
        return ""
    for mark in _A_MARK.finditer(text, max(0, at - _MARK_MAX), at + _MARK_MAX):
        if mark.start() < at < mark.end():
            return text[mark.start() :]
    return text[max(at, 0) :]


CUT_MARGIN = 16_384
"""Characters past a cut that `masked_head`/`masked_tail` mask with the part kept: a secret the
cut falls in is found whole if it is shorter (an 8192-bit PEM key is 6.5 KB), and a 1 MB text
costs a scan of the part kept, not of all of it."""


def masked(text: str) -> str:
    """`text` with its secrets masked, when redaction is on."""
    return redact_text(text) if enabled() else text


def masked_head(text: str, n: int) -> str:
    """`text` with its secrets masked (when redaction is on), then its first `n` characters,
    never ending inside a mark. The one way to shorten text that may leave the machine: a key
    cut short first is too short for any detector to know, so its first characters would go
    out as they are."""
    return clip_head(masked(text[: n + CUT_MARGIN]), n)


def masked_tail(text: str, n: int) -> str:
    """`text` masked as by `masked_head`, then its last `n` characters, never starting inside a
    mark. A caller that keeps only a tail in memory (a command's output) keeps `CUT_MARGIN`
    more for this: a key's end cut from its start would pass as any word, and a password cut
    from its `password=` too."""
    return clip_tail(masked(text[-(n + CUT_MARGIN) :]), n) if n > 0 else ""


_SECRET_WORD = (
    r"(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|auth[_-]?key|private[_-]?key)"
)
_SECRET_NAME = rf"(?:[\w-]{{0,40}}{_SECRET_WORD}[\w-]{{0,40}})"
# What a tool prints before each line of a file it shows: a line number (`cat -n` and OpenHands'
# view: `     4\t`; Claude Code's Read: `     4→`; SWE-agent's `open`: `4:`), `grep -n`'s file and
# line (`config/db.yml:4:`), a diff's `+` or `-` (not an option's `--`)
_TOOL_LINE_PREFIX = r"(?:[ \t]*\d{1,9}(?:\t|→|:)|[\w./-]{1,200}:\d{1,9}:|[+-](?![+-]))?"
# what a long option's name ends in when its value is a secret (`--password`, `--db-password`)
_OPTION_SECRET_WORD = (
    r"(?:-password|-passwd|-passphrase|-pwd|-token|-api[_-]?key|-access[_-]?key|-secret[_-]?key"
    r"|-client[_-]?secret)"
)
# where a name stands alone: not inside a word, or just after an escaped line break (`\\n`)
_WORD_START = r"(?:(?<![\w-])|(?<=\\[nrt]))"


def _alone(literal: str) -> str:
    """`_WORD_START`, looked back at from after the `literal` a match starts with: `re` finds a
    literal start fast, where a lookbehind first is tried at every place of the text."""
    return rf"(?:(?<![\w-]{literal})|(?<=\\[nrt]{literal}))"


# from a header's name to its value: a colon or `=` (`"Authorization": "…"`), escaped quotes
_HEADER_VALUE_OPENING = r"\\{0,7}[\"']?\s{0,4}[:=]\s{0,4}\\{0,7}[\"']?"
# between a Kubernetes env entry's `name` and its `value`: a line break (escaped too), a comma
_BETWEEN_FIELDS = r"(?:\s|,|\\{1,7}[nrt]){1,40}"
# a long option naming a secret, its value after a space (`--password pw`, `--db-password pw`,
# `--api-key k`); not `--password-file path` nor `--password-stdin` (the name must end in the
# word), nor an option or a variable after it; a quoted value whole (`'a b c'`). Not MySQL's or
# PostgreSQL's `--password` (`_prompts_for_it`)
_OPTION_QUOTED_VALUE = re.compile(
    r"(?i)-"
    + _alone("-")
    + r"(?:-[\w-]{0,40})?"
    + _OPTION_SECRET_WORD
    + r"[ \t]+(\\{0,7})([\"'])(?![$({<\[\\])((?:(?!\1\2)(?:[^\n\\]|\\(?![nr]))){4,200}+)\1\2"
)
_OPTION_VALUE = re.compile(
    r"(?i)-" + _alone("-") + r"(?:-[\w-]{0,40})?" + _OPTION_SECRET_WORD + r"[ \t]+\\{0,7}[\"']?"
    r"(?![-$({<\[\\])((?:[^\s\"'\\]|\\(?!\\{0,6}[nrt\"'])){4,}+)"
)
_KEY_TAIL = re.compile(
    r"(?<=[A-Za-z0-9+/=])(?:\r?\n|(?:\\{1,7}r)?\\{1,7}n)"
    r"-----END ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----"
)
_OWN = [
    ("private-key", re.compile(
        r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----[\s\S]*?"
        r"(?:-----END \1-----|\Z)")),
    # a key's body shown without its BEGIN line (`tail -n 5 id_rsa`): from the line break before
    # its END line; `_secret_span` takes the base64 lines above it back to where they start
    ("private-key", _KEY_TAIL),
    # a key's body shown without its BEGIN and END lines (`sed -n 2,20p id_rsa`) from its first
    # line, which starts as a private key's DER does: PKCS#1 RSA and DSA, PKCS#8 (RSA, EC,
    # Ed25519/X25519/Ed448, encrypted PBES2), SEC1 EC (P-256/384/521), OpenSSH's
    # `openssh-key-v1`; each line base64 alone on its line (indented too: a YAML block scalar),
    # the first of any length (a body on one line: `base64 -w0`). A certificate's or public
    # key's DER starts otherwise (`MIIDdzCCAl+gAwIBAgI`, `MIIBIjANBgkqhkiG9w0BAQEFAAOC`)
    ("private-key", re.compile(
        r"(?:(?<![A-Za-z0-9+/=])|(?<=\\[nrt]))"
        r"(?:b3BlbnNzaC1rZXktdjE|MII[A-Za-z0-9+/]{2}[AQgw]IBAA[JK]"
        r"|MII[A-Za-z0-9+/]{3}IBADANBgkqhkiG9w0BAQEFAAS|MI[A-Za-z0-9+/]{2}AgEAMB[AM]GByqGSM49AgE"
        r"|M[A-Za-z0-9+/]{2}CAQAwBQYDK2V|MHcCAQEE|MIGkAgEBBD|MIHcAgEBBE"
        r"|MII[A-Za-z0-9+/]{3}B[A-Za-z0-9+/]BgkqhkiG9w0BBQ0w)[A-Za-z0-9+/=]{8,}+"
        r"(?:(?:\r?\n|(?:\\{1,7}r)?\\{1,7}n)(?:[ \t]*\d{1,9}(?:\t|→|:))?[ \t]*+[A-Za-z0-9+/=]{1,76}+"
        r"(?=[\r\n\"'`]|\\{1,7}[nr\"]|\Z))*+")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|ant-|svcacct-)?[A-Za-z0-9_-]{16,}")),
    # Stripe's test-mode keys read a test account's data: detect-secrets takes only `_live_` ones
    ("stripe-access-key", re.compile(r"(?:\b|(?<=\\[nrt]))[rs]k_test_[0-9a-zA-Z]{24,}")),
    ("aws-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("google-oauth-token", re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}")),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}")),
    ("docker-token", re.compile(r"\bdckr_pat_[A-Za-z0-9_-]{20,}")),
    ("digitalocean-token", re.compile(r"\bdo[por]_v1_[a-f0-9]{64}")),
    ("shopify-token", re.compile(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}")),
    # HTTP Basic credentials: the header's base64, `curl -u user:pw`, `mysql -pPASSWORD` (the gap
    # to the option is bounded: a line of 10^5 `curl`s must not cost 10^10 steps). Here and below
    # a quote may come JSON-escaped (`\\{0,7}`) and a line start as `\\n`, as a reader's dump of a
    # tool's output holds them, and a value stops before the backslash of an escaped closing quote
    ("basic-auth-credentials", re.compile(
        r"(?i)(?:\b|(?<=\\[nrt]))authorization\\{0,7}[\"']?\s{0,4}[:=]\s{0,4}\\{0,7}[\"']?basic\s+"
        r"([A-Za-z0-9+/]{8,}={0,2})")),
    ("basic-auth-credentials", re.compile(
        r"(?:\b|(?<=\\[nrt]))curl\b[^\n]{0,200}?\s(?:-u|--user)\s*\\{0,7}[\"']?[^\s:\"']+:(?![$({<\[\\])"
        r"((?:[^\s\"'\\]|\\(?!\\{0,6}[nrt\"']))+)")),
    ("password", re.compile(
        r"(?:\b|(?<=\\[nrt]))mysql(?:dump|admin)?\b[^\n]{0,200}?\s-p\\{0,7}[\"']?(?![$({<\[\\])"
        r"((?:[^\s\"'\\]|\\(?!\\{0,6}[nrt\"'])){4,})")),
    ("password", re.compile(
        r"(?:\b|(?<=\\[nrt]))sshpass\s+-p\s*\\{0,7}[\"']?(?![$({<\[\\])"
        r"((?:[^\s\"'\\]|\\(?!\\{0,6}[nrt\"'])){4,})")),
    ("password", re.compile(
        r"(?:\b|(?<=\\[nrt]))redis-cli\b[^\n]{0,200}?\s-a\s+\\{0,7}[\"']?(?![$({<\[\\])"
        r"((?:[^\s\"'\\]|\\(?!\\{0,6}[nrt\"'])){4,})")),
    # ~/.netrc, ~/.docker/config.json, a kubeconfig's base64 private key
    ("password", re.compile(
        r"(?:\b|(?<=\\[nrt]))machine\s+\S+\s+login\s+\S+\s+password\s+(?![$({<\[])"
        r"((?:[^\s\"'\\]|\\(?!\\{0,6}[nrt\"'])){4,})")),
    ("basic-auth-credentials", re.compile(
        r"\bauth\\{0,7}\"\s*:\s*\\{0,7}\"([A-Za-z0-9+/]{8,}={0,2})\\{0,7}\"")),
    ("kube-client-key", re.compile(
        r"(?:\b|(?<=\\[nrt]))client-key-data:\s*\\{0,7}[\"']?([A-Za-z0-9+/]{20,}={0,2})")),
    # a signed URL's signature: an Azure SAS `sig=`, AWS's `X-Amz-Signature=`
    ("url-signature", re.compile(r"(?i)(?:[?&]sig|x-amz-signature)=([A-Za-z0-9%+/=_-]{16,})")),
    ("bearer", re.compile(r"(?i)(?<=\bbearer\s)[A-Za-z0-9._~+/=-]{8,}+")),
    # the whole token, an unsigned one too; detect-secrets' own pattern stops before the
    # signature, and trying it at every `eyJ` of a long run took minutes on 1 MB (`eyJeyJ...`):
    # here a match starts only where a run of token characters does, and never backtracks
    ("json-web-token", re.compile(
        r"(?<![A-Za-z0-9_=-])eyJ[A-Za-z0-9_=-]++\.[A-Za-z0-9_=-]++(?:\.[A-Za-z0-9_-]*+)?")),
    # a URL's password up to the authority's last `@`: detect-secrets' needs a user name and
    # stops at RFC 3986 sub-delimiters (`redis://:pw@h`, `admin:Secr3t!@h`); not `${VAR}`
    ("basic-auth-credentials", re.compile(
        r"://[^:/?#\[\]@\s\"'<>\\]*:(?![$({<\[])([^/?#\s\"'<>\\]+)@")),
    # a URL's password as a JSON or PHP dump escapes its slashes (`https:\\/\\/ci:pw@host`), for
    # the schemes such a dump names a password in
    ("basic-auth-credentials", re.compile(
        r"(?i)(?:http:\\|https:\\|ftp:\\|ftps:\\|postgres:\\|postgresql:\\|mongodb:\\"
        r"|mongodb\+srv:\\|redis:\\|rediss:\\|amqp:\\|amqps:\\|mysql:\\)\\{0,6}/\\{1,7}/"
        r"[^:/?#\[\]@\s\"'<>\\]*:(?![$({<\[])([^/?#\s\"'<>\\]+)@")),
    ("password", _OPTION_QUOTED_VALUE),
    ("password", _OPTION_VALUE),
    # a registry login's `-p pw` (the long `--password pw` is the rule above's)
    ("password", re.compile(
        r"(?:\b|(?<=\\[nrt]))(?:docker|podman|nerdctl|buildah|skopeo)\s+login\b[^\n]{0,200}?\s-p"
        r"[ \t]*\\{0,7}[\"']?(?![-$({<\[\\])((?:[^\s\"'\\]|\\(?!\\{0,6}[nrt\"'])){4,}+)")),
    # an HTTP header naming a secret, given to curl or wget (`-H 'PRIVATE-TOKEN: …'`,
    # `--header "X-API-Key: …"`); `Authorization` is the rules below's
    ("password", re.compile(
        r"(?i)-" + _alone("-") + r"(?:H|-header)[ \t=]*\\{0,7}[\"']?[ \t]*"
        r"(?!(?:proxy-)?authorization\b)"
        r"[\w-]{0,40}" + _SECRET_WORD + r"[\w-]{0,30}[ \t]{0,4}:[ \t]*(?![$({<\[\\])"
        r"((?:[^\s\"'\\]|\\(?!\\{0,6}[nrt\"'])){6,}+)")),
    # `Authorization` with a scheme other than `Bearer` and `Basic` (their own rules' above):
    # GitHub's and DRF's `Token`, Discord's `Bot`, Okta's `SSWS`, ...; with no scheme, a long
    # value with a digit in it (not prose: `Authorization: required`)
    ("authorization", re.compile(
        r"(?i)(?:\b|(?<=\\[nrt]))(?:proxy-)?authorization" + _HEADER_VALUE_OPENING
        + r"(?:token|bot|ssws|oauth|genie-?key|api-?key|key|sso-key|splunk|deepl-auth-key)[ \t]+"
        r"(?![$({<\[\\])([A-Za-z0-9._~+/=:-]{8,}+)")),
    ("authorization", re.compile(
        r"(?i)(?:\b|(?<=\\[nrt]))(?:proxy-)?authorization" + _HEADER_VALUE_OPENING
        + r"(?=[A-Za-z0-9._~+/=-]{0,200}\d)([A-Za-z0-9._~+/=-]{20,}+)(?![^\s\"'\\,;])")),
    # an environment variable named as secrets are but for the words above (`env` and `printenv`
    # output, `.env` files, `export`): `DB_PASS`, `GPG_PASSPHRASE`, and a long value with a digit
    # in it under an upper-case `*_KEY` (`AZURE_STORAGE_KEY`; not `PRIMARY_KEY=id`), not a path
    # (`SSH_KEY=~/.ssh/id_rsa`); `*_PUBLIC_KEY` and `*_PUBLISHABLE_KEY` are kept, a public key
    # under another name is masked (`GPG_KEY=` a fingerprint, `NEXT_PUBLIC_MAPS_KEY=`)
    ("password", re.compile(
        r"PASS(?:(?<=[A-Z0-9]_PASS)|(?<![\w-]PASS)|(?<=\\[nrt]PASS))(?:PHRASE)?="
        r"(?:\\{0,7}[\"'])?(?![$({<\[\\])"
        r"((?:[^\s\"'`,;&(){}<>\[\\]|\\(?!\\{0,6}[nrt\"'])){4,}+)")),
    ("secret-key", re.compile(
        r"_KEY=(?<=[A-Z0-9]_KEY=)(?<!PUBLIC_KEY=)(?<!PUBLISHABLE_KEY=)(?:\\{0,7}[\"'])?"
        r"(?![~.]|/[\w.-]{0,40}/)(?=[A-Za-z0-9+/=_-]{0,200}\d)([A-Za-z0-9+/=_-]{16,}+)")),
    # a name and its value apart: Kubernetes' `- name: DB_PASSWORD` then `value: …` (YAML, or
    # JSON: `{"name": "DB_PASSWORD", "value": "…"}`); not `valueFrom:`, not a `name:` without
    # a secret's word
    ("password", re.compile(
        r"(?i)name" + _alone("name") + r"\\{0,7}[\"']?[ \t]{0,4}:[ \t]{0,4}\\{0,7}[\"']?"
        r"[\w.-]{0,40}" + _SECRET_WORD + r"[\w.-]{0,40}\\{0,7}[\"']?" + _BETWEEN_FIELDS
        + r"\\{0,7}[\"']?value\\{0,7}[\"']?[ \t]{0,4}:[ \t]{0,4}\\{0,7}[\"']?(?![$({<\[\\])"
        r"((?:[^\s\"'`,;{}\[\]\\]|\\(?!\\{0,6}[nrt\"'])){6,}+)")),
    # a Dockerfile's `ENV DB_PASSWORD value` (the `=` form is the rules' below): the line's rest.
    # Here and above a rule starts with its literal, which `re` looks for fast, then looks back
    ("password", re.compile(
        r"ENV " + _alone("ENV ") + r"[ \t]*"
        r"(?i:[\w.-]{0,40}" + _SECRET_WORD + r"[\w.-]{0,40})[ \t]+(?![$({<\[\\=])"
        r"((?:[^\n\r\"\\]|\\(?![nrt\"])){6,}+)")),
    # a `.pgpass` line, `host:port:database:user:password`, on Postgres' ports or `*`
    ("password", re.compile(
        r"(?m)(?:^|(?<=\\[nr])|(?<=\"))" + _TOOL_LINE_PREFIX
        + r"(?:\*|[\w.-]{1,253})(?::543\d:|:6432:|:\*:)[^:\s\\\"]{1,63}:[^:\s\\\"]{1,63}:"
        r"(?![$({<\[])((?:[^\s\"\\]|\\(?!\\{0,6}[nrt\"])){4,}+)"
        r"[ \t]*\r?(?:$|(?=\\{1,7}[nr]|\\{0,7}\"))")),
    # YAML's `POSTGRES_PASSWORD: hunter2` or an env file's `DB_PASSWORD=Tr0ub4dor&3` alone on its
    # line (in a reader's JSON dump, a line may end at a `\\n` or a quote), `&` and all: no shell
    # reads it; not a type (`api_key: SecretStr`), not an option (`--password=…`: a shell's).
    # The line may follow what the tool that showed it prints first (`_TOOL_LINE_PREFIX`)
    ("password", re.compile(
        r"(?im)(?:^|(?<=\\[nr])|(?<=\"))" + _TOOL_LINE_PREFIX
        + r"[ \t]*(?:- )?(?!-)[\w.-]{0,40}" + _SECRET_WORD + r"[\w.-]{0,40}"
        r"(?::[ \t]+|[ \t]*=[ \t]*)(?![$({<\[\\])"
        r"(?!(?-i:[A-Z][A-Za-z]*|string|str|bytes|number|boolean|bool|object|integer|int)"
        r"[ \t]*(?:$|\\{1,7}[nr]|\\{0,7}\"))"
        r"((?:[^\s\"'`,;(){}<>\[\\]|\\(?!\\{0,6}[nr\"'])){6,})[ \t]*(?:$|(?=\\{1,7}[nr]|\\{0,7}\"))")),
    # a quoted value whole, to its closing quote (escaped as the opening one was): inside quotes
    # `&`, `;`, `,` and spaces are the value's (`--password='Tr0ub4dor&3'`, `"token": "a;b c"`),
    # not a shell's or a list's; not `"${VAR}"`; over 200 characters, or unclosed, it is left to
    # the unquoted rule below
    ("password", re.compile(
        rf"(?i)(?<![\w-]){_SECRET_NAME}\\{{0,7}}[\"']?\s{{0,4}}[:=]\s{{0,4}}(\\{{0,7}})([\"'])"
        r"(?![$({<\[\\])((?:(?!\1\2)(?:[^\n\\]|\\(?![nr]))){6,200}+)\1\2")),
    # an XML element named for a secret (Maven's `settings.xml`: `<password>…</password>`, in a
    # namespace too), its text whole up to the closing tag; not a `${property}`
    ("password", re.compile(
        r"(?i)<((?:[\w.-]{1,40}:)?[\w.-]{0,40}" + _SECRET_WORD + r"[\w.-]{0,40})>"
        r"(?![$({<\[])([^<\n]{6,200}+)(?=</\1>)")),
    # `password = hunter2`, `"token": "abc..."`; not `token: string` (a type) nor `key=$VAR`;
    # its quotes escaped too, up to three times (`PASSWORD=\"hunter2\"`: a reader's JSON dump of
    # a tool's output). Unquoted, a value ends where a shell word does: `--password=pw&3` runs
    # `3` as a command of its own, which the trace shows as such (`3: command not found`)
    ("password", re.compile(
        rf"(?i)(?<![\w-]){_SECRET_NAME}"
        r"(?:\\{0,7}[\"']?\s{0,4}[:=]\s{0,4}\\{0,7}[\"']|[ \t]{0,4}=[ \t]{0,4})"
        r"(?![$({<\[\\])((?:[^\s\"'`,;&(){}<>\[\\]|\\(?!\\{0,6}[nrt\"'])){6,}+)(?![(<\[])")),
]  # fmt: skip
# detect-secrets detectors left out: public IPs are no secret; the Artifactory and Twilio shapes
# match ordinary words and hex ids; Discord and Telegram shapes have no literal to find them by
# quickly and would cost every string a slow scan; ours finds every JWT its JWT detector does.
_SKIPPED_DETECTORS = {
    "IPPublicDetector", "ArtifactoryDetector", "TwilioKeyDetector", "DiscordBotTokenDetector",
    "TelegramBotTokenDetector", "JwtTokenDetector",
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
# From a needle inside a secret's word (`pass` of `password`) to the name's end: the word's
# rest (4) and the 40 characters a name may go on for.
_TRIGGER = re.compile(
    r"sk-|sk_live|rk_live|AKIA|ASIA|ABIA|ACCA|gh[pousr]_|github_pat_|xox|BEGIN|(?i:bearer)|eyJ"
    r"|(?i:pass|pwd|secret|token|key)[\w-]{0,44}\\{0,7}[\"']?\s{0,4}[:=]|SG\.|pypi-|gl[a-z]{2,4}-|GR1348941"
    r"|(?i:pass|pwd|secret|token|key)[\w.-]{0,44}>"
    r"|://[^/\s]*@|sq0csp|npm_|hooks\.slack|-us\d|hf_|AIza|ya29\.|dckr_pat_|do[por]_v1_"
    r"|shp(?:at|ca|pa|ss)_|(?i:authorization)|curl|mysql|sshpass|redis-cli|machine\s|auth\\{0,7}\"\s*:"
    r"|(?i:sig=|x-amz-signature=)"
    r"|-----END |sk_test|rk_test|(?:docker|podman|nerdctl|buildah|skopeo)\s+login|ENV "
    r"|(?i:https?|ftps?|postgres(?:ql)?|mongodb(?:\+srv)?|rediss?|amqps?):\\{1,7}/\\{1,7}/[^/\s]*@"
    r"|-(?i:password|passwd|passphrase|pwd|token|api|access|secret|client)[\w-]{0,20}[ \t]"
    r"|(?i:pass|pwd|secret|token|key)[\w.-]{0,50}\\{0,7}[\"']?(?:\s|,|\\{1,7}[nrt]){1,40}"
    r"\\{0,7}[\"']?(?i:value)"
    r"|:(?:543\d|6432|\*):"
    r"|b3BlbnNzaC1rZXktdjE|IBAA[JK]|IBADANBgkqhkiG9w0BAQEFAAS|AgEAMB[AM]GByqGSM49|CAQAwBQYDK2V"
    r"|MHcCAQEE|MIGkAgEBBD|MIHcAgEBBE|BgkqhkiG9w0BBQ0w|(?i:pgpass)"
    r"|(?:(?<=kind:)|(?<=kind: )|(?<=kind: \")|(?<=kind: ')|(?<=kind\": \")|(?<=kind\":\")"
    r"|(?<=kind\\\": \\\")|(?<=kind\\\":\\\")|(?<=kind\" : \")|(?<=kind\\\" : \\\"))"
    r"Secret(?=[^:=>]*[:=>])"
)


def redact_text(text: str) -> str:
    """`text` with every secret found replaced by `[REDACTED:<kind>]`."""
    if not _triggered(text):
        return text
    text = _kube_secret_values_masked(text)
    facts = _Facts(text)  # for the text as it is now (patterns share words and runs)
    for kind, pattern, needs, run in _patterns():
        if needs is not None and not facts.holds_any(needs):
            continue
        if run is not None and not facts.holds_run(run):
            continue
        redacted = _substituted(pattern, kind, text)
        if redacted != text:
            text, facts = redacted, _Facts(redacted)
    return _file_context_masked(text, _files_named(text))


class _Facts:
    """What the patterns' prefilters ask of one text, each found once: which of their required
    words it holds (one Aho-Corasick scan of the folded text, instead of a substring search per
    word and pattern) and whether it holds each required run."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._words: frozenset[str] | None = None
        self._runs: dict[re.Pattern[str], bool] = {}
        self._ascii: bytes | None = text.encode("ascii") if text.isascii() else None

    def holds_any(self, needs: frozenset[str]) -> bool:
        if self._words is None:
            self._words = _words_in(_folded(self.text))
        return not needs.isdisjoint(self._words)

    def holds_run(self, run: re.Pattern[str]) -> bool:
        found = self._runs.get(run)
        if found is None:
            found = self._runs[run] = _has_run(run, self.text, self._ascii)
        return found


def _words_in(folded: str) -> frozenset[str]:
    """The patterns' required words that occur in `folded` (overlapping ones too)."""
    finder, words = _word_finder()
    return frozenset(words[i] for i, _, _ in finder(folded))


@cache
def _word_finder() -> tuple[Callable[[str], list[tuple[int, int, int]]], list[str]]:
    words = sorted({word for _, _, needs, _ in _patterns() for word in needs or ()})
    try:
        import ahocorasick_rs
    except ImportError:  # pragma: no cover - a declared dependency
        return (lambda text: [(i, 0, 0) for i, word in enumerate(words) if word in text]), words
    finder = ahocorasick_rs.AhoCorasick(words)
    return (lambda text: finder.find_matches_as_indexes(text, overlapping=True)), words


def _has_run(run: re.Pattern[str], text: str, ascii_text: bytes | None) -> bool:
    """`run.search(text)`; for an ASCII text, by mapping each byte to whether the run's class
    takes it and looking for `count` of them in a row: a C scan, 20-40x faster than `re`
    trying the run at every place of a long tool output."""
    if ascii_text is None:
        return run.search(text) is not None
    table, row = _run_table(run)
    return row in ascii_text.translate(table)


@cache
def _run_table(run: re.Pattern[str]) -> tuple[bytes, bytes]:
    """(byte -> 1 if the run's class takes that ASCII character (with its flags) else 0, and
    `count` ones): `run` is `[class]{count}` (`required_run`)."""
    members, _, count = run.pattern.rpartition("{")
    one = re.compile(members, run.flags)
    table = bytes(1 if byte < 128 and one.fullmatch(chr(byte)) else 0 for byte in range(256))
    return table, b"\x01" * int(count.rstrip("}"))


# A Kubernetes `Secret` in YAML (`kubectl get secret x -o yaml`, `cat secret.yaml`): every value
# under its `data:` (base64: no detector knows it) or `stringData:` is a secret, whatever its key
# (`tls.key`, `.dockerconfigjson`, `config`). Which document says `kind: Secret` decides, not
# where: kubectl writes `data:` before `kind:`. A block scalar's lines (`config: |`) are the value.
_SECRET_KIND = re.compile(
    r"(?m)^[ \t]*(?:- )?kind:[ \t]*[\"']?Secret[\"']?(?:[ \t]+#[^\n]*)?[ \t]*\r?$"
)
_YAML_DOCUMENT_START = re.compile(r"(?m)^---[ \t]*\r?$")
_SECRET_DATA = re.compile(r"(?m)^([ \t]*)(?:- )?(?:data|stringData):[ \t]*\r?\n")
# the mapping written inline on its line (`data: {password: aHVudGVyMg==}`), and each value in it
_SECRET_DATA_INLINE = re.compile(r"(?m)^[ \t]*(?:- )?(?:data|stringData):[ \t]*\{([^{}\n]*)\}")
# one `key: value` of it after another, each matched where the last ended (no retrying)
_INLINE_ENTRY = re.compile(r"[^:,]*+(?::[ \t]*+([^,]*+))?,?")
_DATA_ENTRY = re.compile(r"([ \t]*)(?!#)[^:\n]+:[ \t]*([^\n]*)(?:\n|\Z)")
_INDENT = re.compile(r"[ \t]*")
KUBE_SECRET_MARK = MARK.format(kind="kube-data")


def _kube_secret_values_masked(text: str) -> str:
    """`text` with each value of a `kind: Secret` document's `data:`/`stringData:` masked whole,
    in YAML or JSON (`-o json`), as it is or JSON-escaped inside a JSON string (a command's
    `arguments` held as text: `\\n` line breaks, `\\"` quotes)."""
    if "Secret" not in text:
        return text
    spans = _yaml_secret_spans(text) + _json_secret_spans(text)
    if not spans:
        return text
    parts, done = [], 0
    for start, end in sorted(spans):
        if start < done:
            continue  # a span both forms found
        parts += [text[done:start], KUBE_SECRET_MARK]
        done = end
    return "".join([*parts, text[done:]])


# an escaped line break, as a JSON string holds one (once or more escaped); the YAML rules read
# it as a line break, in a view of the text with the same length (spaces, then `\n`)
_ESCAPED_BREAK = re.compile(r"(?:\\{1,7}r)?\\{1,7}n")
# what closes the JSON string a YAML value ends, escaped (`\\"`), with the JSON after it
_STRING_CLOSE = re.compile(r'\\*"[\]}),\s]*\Z')


def _yaml_secret_spans(text: str) -> list[tuple[int, int]]:
    view = _ESCAPED_BREAK.sub(lambda found: " " * (len(found[0]) - 1) + "\n", text)
    if _SECRET_KIND.search(view) is None:
        return []
    spans: list[tuple[int, int]] = []
    walked_to = 0
    for document in _yaml_documents(view):
        if _SECRET_KIND.search(view, document.start, document.stop) is None:
            continue
        for block in _SECRET_DATA.finditer(view, document.start, document.stop):
            if block.start() < walked_to:
                continue  # a `data:` key inside a block walked already: each line is read once
            walked_to = _data_values(view, block.end(), len(block.group(1)), document.stop, spans)
        for inline in _SECRET_DATA_INLINE.finditer(view, document.start, document.stop):
            spans += _inline_values(view, inline.start(1), inline.end(1))
    if view == text:
        return spans
    return [(start, _before_string_close(text, start, end)) for start, end in spans]


def _inline_values(text: str, start: int, end: int) -> list[tuple[int, int]]:
    values = (entry for entry in _INLINE_ENTRY.finditer(text, start, end) if entry[1])
    return [
        (value.start(1), value.start(1) + len(value[1].rstrip()))
        for value in values
        if value[1].strip()
    ]


def _before_string_close(text: str, start: int, end: int) -> int:
    closing = _STRING_CLOSE.search(text, start, end)
    return closing.start() if closing else end


# A `Secret` as JSON (`kubectl get secret x -o json`): `"kind": "Secret"` and `"data": {...}` are
# keys of one object, in any order; its quotes may be escaped (`\\"kind\\": \\"Secret\\"`)
_SECRET_KIND_JSON = re.compile(r'(\\{0,7})"kind\1"[ \t]*:[ \t]*\1"Secret\1"')
_DATA_KEYS = frozenset(("data", "stringData"))


def _json_secret_spans(text: str) -> list[tuple[int, int]]:
    levels = {len(found[1]) for found in _SECRET_KIND_JSON.finditer(text)}
    return [span for level in sorted(levels) for span in _json_level_spans(text, level)]


@cache
def _json_token(level: int) -> re.Pattern[str]:
    """A JSON string (its text in group 1; `:` in group 2 when it is a key) or a bracket, for
    JSON whose quotes are escaped `level` times; a string its line does not close is taken to
    the line's end, with no group: tried again at each quote, such strings cost a scan of the
    line each (100 KB of unclosed strings on one line took 29 s, growing as its square)."""
    if level == 0:
        quote, body = '"', r'(?:[^"\\\n]|\\.)*'
    else:
        quote = r"(?<!\\)" + r"\\" * level + '"'
        body = f"(?:(?!{quote})[^\\n])*"
    return re.compile(f"{quote}({body}){quote}" + r"([ \t]*:)?|[{}\[\]]|" + quote + body)


class _JsonFrame:
    """An object or list open at a point of the token walk: the key last read, whether it says
    `"kind": "Secret"`, whether it is a Secret's `data`, and the spans of the data values read."""

    def __init__(self, parent: _JsonFrame | None, bracket: str) -> None:
        self.is_object = bracket == "{"
        self.key: str | None = None
        self.secret = False
        self.holds_data = bool(parent and parent.is_object and parent.key in _DATA_KEYS)
        self.values: list[tuple[int, int]] = []


def _json_level_spans(text: str, level: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    stack: list[_JsonFrame] = []
    for token in _json_token(level).finditer(text):
        lexeme = token[0]
        if lexeme in ("{", "["):
            stack.append(_JsonFrame(stack[-1] if stack else None, lexeme))
        elif lexeme in ("}", "]"):
            if stack:
                _closed(stack, spans)
        elif stack and stack[-1].is_object and token[1] is not None:
            _string_read(stack[-1], token)
    while stack:  # a text cut short: what was read of an open Secret is masked too
        _closed(stack, spans)
    return spans


def _string_read(frame: _JsonFrame, token: re.Match[str]) -> None:
    if token[2] is not None:
        frame.key = token[1]
        return
    if frame.key == "kind" and token[1] == "Secret":
        frame.secret = True
    elif frame.holds_data and frame.key is not None and token.end(1) > token.start(1):
        frame.values.append(token.span(1))
    frame.key = None


def _closed(stack: list[_JsonFrame], spans: list[tuple[int, int]]) -> None:
    frame = stack.pop()
    if stack:
        stack[-1].key = None
    if frame.holds_data and stack:
        stack[-1].values += frame.values
    elif frame.secret:
        spans += frame.values


# Rules that hold only where the file a text shows is named: a `.pgpass` line on any port (the
# rule above takes Postgres' ports alone: elsewhere `02:42:ac:11:00:02` is a MAC address), and an
# env file's unquoted value to its line's end, spaces and all (a shell ends `X=a b` at the space
# and runs `b`; dotenv reads `a b`), written as env files are, `=` with no space around it and
# the name at the line's start: code beside a `.env` (Django's `PASSWORD_RESET_TIMEOUT = 60 * 60`
# next to `read_env('.env')`) is kept. The file is named in the text itself (`cat > .env <<EOF`,
# `~/.pgpass`) or beside it, in a tool call's arguments (`_objects_masked`). Each runs after the
# patterns, so a value may start with their mark: `X=[REDACTED:password] b` is masked whole.
# (in quotes too: `echo 'h:6000:db:me:pw' >> ~/.pgpass`)
_PGPASS_ANY_PORT = re.compile(
    r"(?m)(?:^|(?<=\\[nr])|(?<=[\"']))"
    + _TOOL_LINE_PREFIX
    + r"(?:\*|[\w.-]{1,253}):(?:\d{1,5}|\*):[^:\s\\\"']{1,63}:[^:\s\\\"']{1,63}:"
    r"(?![$({<\[])((?:[^\s\"\\]|\\(?!\\{0,6}[nrt\"])){4,}?)"
    r"[ \t]*\r?(?:$|(?=\\{1,7}[nr]|\\{0,7}\"|'(?:[ \t;|&>)]|$|\\{1,7}[nr]|\\{0,7}\")))"
)
_VALUE_WORD = r"(?:[^\s\"\\]|\\(?!\\{0,6}[nrt\"]))++"
_DOTENV_LINE = re.compile(
    r"(?m)(?:^|(?<=\\[nr])|(?<=\"))" + _TOOL_LINE_PREFIX + r"(?:export[ \t]+)?"
    r"(?i:[\w.-]{0,40}(?:" + _SECRET_WORD + r"|pass)[\w.-]{0,40})="
    r"(?![\"'$({<\\]|\[(?!REDACTED:))"
    rf"((?!#){_VALUE_WORD}(?:[ \t]++(?!#){_VALUE_WORD})++)"
    r"(?=[ \t]*(?:#[^\n]*?)?\r?(?:$|\\{1,7}[nr]|\\{0,7}\"))"
)
_FILE_RULES = {"pgpass": _PGPASS_ANY_PORT, "env": _DOTENV_LINE}
# the files named in a text: `.env` (`.env.local`; not `process.env`, `os.environ`), `pgpass`
_NAMED_IN_TEXT = re.compile(r"(?i)(?<![\w.])\.(env)(?![\w-])|(pgpass)")
# a path that is one of those files, as a tool call's argument (`"file_path": "/app/.env"`)
_CONTEXT_PATH = re.compile(r"(?i)(?:^|[/\\])(?:\.(env)(?:\.[\w-]+)*|\.?(pgpass)(?:\.conf)?)\Z")


def _files_named(text: str) -> frozenset[str]:
    folded = _folded(text)
    if ".env" not in folded and "pgpass" not in folded:
        return frozenset()
    return frozenset(
        name.lower() for found in _NAMED_IN_TEXT.finditer(text) for name in found.groups() if name
    )


def _file_context_masked(text: str, files: Iterable[str]) -> str:
    """`text` with the lines that the files named (`_FILE_RULES`) hold masked."""
    for name in sorted(files):
        text = _substituted(_FILE_RULES[name], "password", text)
    return text


def _yaml_documents(text: str) -> Iterator[range]:
    start = 0
    for marker in _YAML_DOCUMENT_START.finditer(text):
        yield range(start, marker.start())
        start = marker.end()
    yield range(start, len(text))


def _data_values(text: str, at: int, indent: int, stop: int, spans: list[tuple[int, int]]) -> int:
    """Adds to `spans` the values of the mapping that starts at `at`, its keys indented past
    `indent` (a block scalar's more-indented lines with its value); returns where it ends."""
    while at < stop:
        entry = _DATA_ENTRY.match(text, at, stop)
        if entry is None or len(entry.group(1)) <= indent or "\t" in entry.group(1):
            break
        key_indent, value_start = len(entry.group(1)), entry.start(2)
        end = value_start + len(entry.group(2).rstrip())
        at = entry.end()
        while at < stop:  # a block scalar's (or a folded value's) lines
            line_end = text.find("\n", at, stop)
            line_end = stop if line_end < 0 else line_end
            line = text[at:line_end].rstrip()
            if line and _INDENT.match(line).end() <= key_indent:  # type: ignore[union-attr]
                break
            end, at = (at + len(line) if line else end), line_end + 1
        if end > value_start:
            spans.append((value_start, end))
    return at


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
    (in the sequence itself or in its groups, not in an optional part); of a branch whose every
    alternative has one, the shortest such run over the union of their classes."""
    runs = []
    for op, value in items:
        op = str(op)
        if op == "SUBPATTERN" and not value[1] and not value[2]:  # `(?i:...)` would change flags
            runs += _mandatory_runs(value[-1])
        elif op == "ATOMIC_GROUP":
            runs += _mandatory_runs(value)
        elif op == "BRANCH":
            runs += _branch_run([_mandatory_runs(branch) for branch in value[1]])
        elif op in {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"} and value[0] >= LONG_RUN:
            members = _class_members(value[2])
            if members is not None:
                runs.append((value[0], members))
    return runs


def _branch_run(alternatives: list[list[tuple[int, str]]]) -> list[tuple[int, str]]:
    """Every alternative holds its longest run: so every match holds a run as long as the
    shortest of them, of characters from their classes' union."""
    if not alternatives or not all(alternatives):
        return []
    longest = [max(runs) for runs in alternatives]
    return [(min(count for count, _ in longest), "".join(members for _, members in longest))]


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
    # an ASCII text holds no look-alike: `translate` (a dict lookup per character) is skipped
    return text.lower() if text.isascii() else text.translate(_LOOKALIKES).lower()


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


def _substituted(pattern: re.Pattern[str], kind: str, text: str) -> str:
    """`text` with each match of `pattern` masked (`_secret_span`)."""
    parts: list[str] = []
    done = 0
    for match in pattern.finditer(text):
        if match.start() < done:
            continue  # inside the token tail the previous mark took (not measured again)
        start, end = _secret_span(match, kind)
        if start == end:
            continue  # nothing secret in it (an END line under no key's body)
        start = max(start, done)
        parts += [text[done:start], MARK.format(kind=kind)]
        done = end
    return "".join([*parts, text[done:]]) if parts else text


_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_-]*")
_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_-]")
_WORD_CHAR = re.compile(r"[A-Za-z0-9]")


def _secret_span(match: re.Match[str], kind: str) -> tuple[int, int]:
    """What a match masks: the value a pattern's last group holds when only quotes or signs
    follow it in the match (the value after `password=`, a URL's password before `@`); else
    the whole match and the rest of its token. detect-secrets' groups are not always the value
    (GitLab's group is the `glpat` prefix) and its patterns stop at a fixed length (a Stripe
    key's first 24 characters): marking those alone would leave the key's body in the text."""
    if match.re is _KEY_TAIL:
        body = _key_body_start(match.string, match.start())
        return (body, match.end()) if body < match.start() else (body, body)
    if match.re in (_OPTION_VALUE, _OPTION_QUOTED_VALUE) and _prompts_for_it(match):
        return match.start(), match.start()
    group = match.re.groups
    if group and kind != "private-key" and match.group(group):
        start, end = match.span(group)
        if not _WORD_CHAR.search(match.string, end, match.end()):
            return start, end
    end = match.end()
    if kind != "private-key" and _TOKEN_CHAR.fullmatch(match.string[end - 1 : end]):
        end = _TOKEN_TAIL.match(match.string, end).end()  # type: ignore[union-attr] # `*` matches
    return match.start(), end


# Clients whose `--password` takes no value after a space: MySQL's and MariaDB's read
# `--password=pw` or prompt (the next word is the database), PostgreSQL's (`-W`) only prompts.
# Those that do take one (`--password pw`): docker/podman login, mongosh, az login, influx,
# clickhouse-client, rabbitmqadmin, and most CLIs
_PROMPTING_CLIENT = re.compile(
    r"(?<=[\s;|&(/\"'\\])(?:mysql(?:dump|admin|import|check|show|slap|binlog|pump)?"
    r"|mariadb(?:-[a-z]+)?|psql|pg_dump(?:all)?|pg_restore|pg_basebackup|pg_isready|createdb"
    r"|dropdb|createuser|dropuser|vacuumdb|reindexdb|clusterdb)[ \t]"
)
_COMMAND_BREAKS = (";", "|", "&", "\n", "\\n", "\\r", "`", "$(")
_COMMAND_REACH = 300


def _prompts_for_it(match: re.Match[str]) -> bool:
    """Whether the option matched is `--password` given to a client of `_PROMPTING_CLIENT` in
    the same command (back to its `;`, `|`, `&` or line break): the word after it is no
    password."""
    text, at = match.string, match.start()
    if not text.startswith(("--password ", "--password\t"), at):
        return False
    since = max(0, at - _COMMAND_REACH)
    for mark in _COMMAND_BREAKS:
        found = text.rfind(mark, since, at)
        since = found + len(mark) if found >= 0 else since
    command = " " + text[since:at]
    return any(
        not _OPTION_WORD_BEFORE.search(command, 0, client.start())
        for client in _PROMPTING_CLIENT.finditer(command)
    )


# an option's word just before a client's name makes the name its value (`--username mysql`,
# `-h psql`: a host), not the command; `--` (`kubectl exec pod -- psql`) ends the options
_OPTION_WORD_BEFORE = re.compile(r"(?<![^\s])-(?!-[ \t]+\Z)[^\s=]*[ \t]+\Z")


# A PEM body's lines: 64 characters (70 in OpenSSH's), the last one shorter
_KEY_BODY_CHARACTERS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
)
_KEY_LINE_MAX = 76
_KEY_LINE_MIN = 40
_LINE_BREAK_BEFORE = re.compile(r"(?:\r?\n|(?:\\{1,7}r)?\\{1,7}n)\Z")


def _key_body_start(text: str, line_break: int) -> int:
    """Where the key body that ends at `line_break` (before an END line) starts: the lines above
    it, taken while each is base64 alone on its line, the last one of any length and the others
    as long as a key's; `line_break` itself (nothing to mask) when none is as long as a key's
    (`Done` above an END line is no key)."""
    start, at, longest = line_break, line_break, 0
    while True:
        line_start = _key_line_start(text, at)
        length = at - line_start
        if not length or length > _KEY_LINE_MAX or (at != line_break and length < _KEY_LINE_MIN):
            break
        above = _LINE_BREAK_BEFORE.search(text, max(0, line_start - 16), line_start)
        if line_start and above is None and text[line_start - 1] not in "\"'":
            break
        start, longest = line_start, max(longest, length)
        if above is None:
            break
        at = above.start()
    return start if longest >= _KEY_LINE_MIN else line_break


def _key_line_start(text: str, at: int) -> int:
    """Where the run of base64 characters ending at `at` starts, looked at no further back than
    one character past a key's line; not the `n` of an escaped line break (`\\n`)."""
    line_start = at
    while line_start > 0 and text[line_start - 1] in _KEY_BODY_CHARACTERS:
        line_start -= 1
        if at - line_start > _KEY_LINE_MAX:
            return line_start
    escaped_break = text.startswith("n", line_start) and text[line_start - 1 : line_start] == "\\"
    return line_start + 1 if escaped_break else line_start


def redact_value(value: Any) -> Any:
    """Every string in a JSON-like value redacted (dict keys included), and each value under a
    key that names a secret (`_keyed_changes`)."""
    try:
        document = msgspec.json.encode(value)
    except (TypeError, ValueError, msgspec.EncodeError):  # not JSON (a set, bytes keys): walk
        return redact_walk(value)
    lowered = document.lower()
    changed = _changed_strings(document, lowered) | _keyed_in(document, lowered, value)
    objects = _holds_objects(lowered)
    if not changed and not objects:
        return value
    cleaned = map_strings(value, lambda text: changed.get(text, text))
    return masked_in_context(value, _objects_masked(cleaned) if objects else cleaned)


def redact_walk(value: Any) -> Any:
    """The reference pass, as it was before the prefilters: every pattern on every string that
    holds a trigger, and each value under a key that names a secret (what `redact_value` must
    equal; tests and `benchmarks/redaction.py --check` compare the two)."""
    keyed = _keyed_changes(value)
    cleaned = map_strings(value, lambda text: keyed.get(text) or _redact_every_pattern(text))
    return masked_in_context(value, _objects_masked(cleaned))


# A reader derives lists from a call's command: its `files` (`… ENV DB_PASSWORD s3cr3t` gives
# `["ENV", "DB_PASSWORD", "s3cr3t"]`, the shell analysis taking words for file arguments), and
# the command from an argv list (`["docker", "login", "-p", "pw"]`). Each string of such a list
# is masked alone, where nothing says it is a secret; the command it came from is masked whole.
IN_CONTEXT_MARK = MARK.format(kind="in-context")


def masked_in_context(before: Any, after: Any) -> Any:
    """`after` (`before` redacted string by string) with each string of a call's lists (a step's
    `files`, an argv list in its `arguments` or its `raw` record) that its redacted command and
    arguments no longer hold, where the unredacted ones did, masked: a secret cut from its
    context."""
    if before is after or before == after:
        return after
    if not _same_shape(before, after):
        return after  # two keys masked alike became one: nothing to pair
    if isinstance(after, dict) and isinstance(before, dict):
        if _is_call(after):
            after = _call_lists_masked(before, after)
        return {key: masked_in_context(was, item) for (key, item), was in _paired(before, after)}
    if isinstance(after, list) and isinstance(before, list | tuple):
        return [masked_in_context(was, item) for was, item in zip(before, after, strict=True)]
    return after


def _same_shape(before: Any, after: Any) -> bool:
    if isinstance(after, dict):
        return isinstance(before, dict) and len(before) == len(after)
    if isinstance(after, list):
        return isinstance(before, list | tuple) and len(before) == len(after)
    return True


def _paired(before: dict[Any, Any], after: dict[Any, Any]) -> Iterator[tuple[tuple[Any, Any], Any]]:
    # `map_strings` keeps a dict's order (a key redacted stays in its place)
    return zip(after.items(), before.values(), strict=True)


def _is_call(entry: dict[Any, Any]) -> bool:
    return isinstance(entry.get("files"), list) or isinstance(entry.get("arguments"), dict)


def _call_lists_masked(before: dict[Any, Any], after: dict[Any, Any]) -> dict[Any, Any]:
    was_said, now_said = _call_context(before), _call_context(after)
    if was_said == now_said:
        return after

    def masked(was: str, now: str) -> str:
        lost = now == was and now in was_said and now not in now_said
        return IN_CONTEXT_MARK if lost else now

    return {
        key: _list_strings_changed(before[key], item, masked) if key in _CALL_PARTS else item
        for key, item in after.items()
    }


_CALL_PARTS = ("files", "arguments", "raw")  # `raw`: the source's record, its argv list too


def _call_context(call: dict[Any, Any]) -> str:
    """A call's command and the strings of its arguments not in a list of strings, one text."""
    said = [call["command"]] if isinstance(call.get("command"), str) else []
    said += _unlisted_strings(call.get("arguments"))
    return "\n".join(said)


def _unlisted_strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _unlisted_strings(item)]
    if isinstance(value, list) and not _strings_only(value):
        return [text for item in value for text in _unlisted_strings(item)]
    return []


def _strings_only(value: list[Any]) -> bool:
    return bool(value) and all(isinstance(item, str) for item in value)


def _list_strings_changed(before: Any, after: Any, change: Callable[[str, str], str]) -> Any:
    """`after` with `change(was, now)` on each string of its lists of strings."""
    if not _same_shape(before, after):
        return after
    if isinstance(after, list) and _strings_only(after):
        return [change(was, now) for was, now in zip(before, after, strict=True)]
    if isinstance(after, dict):
        return {
            key: _list_strings_changed(was, item, change)
            for (key, item), was in _paired(before, after)
        }
    if isinstance(after, list):
        return [
            _list_strings_changed(was, item, change)
            for was, item in zip(before, after, strict=True)
        ]
    return after


# A value under a key that names a secret says nothing of itself, its key does: a tool call's
# arguments as an object (`{"password": "..."}`), a config a reader parsed. Each such value is
# masked as the text `"key": "value"` is, by the patterns above. A value's JSON is walked for
# them only when a word of `_SECRET_WORD` (lowered; or a look-alike, as in `NEEDLES`) lies in a
# string followed by `:"`, a key holding a string: a key with no quote, backslash or control
# character (`_plain_key`) is written in the JSON as it is.
KEY_WORDS = [
    *(word.encode() for word in (
        "passw", "pwd", "secret", "token", "apikey", "api_key", "api-key", "accesskey",
        "access_key", "access-key", "authkey", "auth_key", "auth-key", "privatekey",
        "private_key", "private-key", "\u0130", "\u0131", "\u017f", "\u212a")),
]  # fmt: skip
_SECRET_IN_KEY = re.compile(r"(?i)" + _SECRET_WORD)


# Objects whose strings say nothing of themselves, masked in place after the strings are: a
# Kubernetes `Secret` (a tool call's arguments, a manifest a reader parsed), the values of its
# `data`/`stringData`, as in its text (`_kube_secret_values_masked`); and the strings beside a
# path naming a `.env` or `.pgpass` file (`{"file_path": "/app/.env", "content": "…"}`), read as
# that file (`_file_context_masked`). Looked for only where the JSON holds one (`_holds_objects`).
_ENV_FILE_END = re.compile(rb'\.env(?:\.[\w-]+)*"')


def _holds_objects(lowered: bytes) -> bool:
    """Whether a JSON document (its ASCII letters lowered) may hold an object `_objects_masked`
    masks: literal searches first, as a pattern tried at every quote took 2 ms a trajectory."""
    if b'"kind":"secret"' in lowered or b"pgpass" in lowered:
        return True
    return b".env" in lowered and any(
        lowered[found.start() - 1 : found.start()] in (b'"', b"/", b"\\")
        for found in _ENV_FILE_END.finditer(lowered)
    )


def _objects_masked(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_objects_masked(item) for item in value]
    if not isinstance(value, dict):
        return value
    masked = {key: _objects_masked(item) for key, item in value.items()}
    if masked.get("kind") == "Secret":
        for key in _DATA_KEYS & masked.keys():
            if isinstance(masked[key], dict):
                masked[key] = {name: _data_value_masked(item) for name, item in masked[key].items()}
    files = _files_beside(masked)
    if files:
        masked = {key: _beside_masked(item, files) for key, item in masked.items()}
    return masked


def _files_beside(entry: dict[Any, Any]) -> frozenset[str]:
    found = (_CONTEXT_PATH.search(item) for item in entry.values() if isinstance(item, str))
    return frozenset(name.lower() for path in found if path for name in path.groups() if name)


def _beside_masked(item: Any, files: frozenset[str]) -> Any:
    return _file_context_masked(item, files) if isinstance(item, str) else item


def _data_value_masked(item: Any) -> Any:
    return KUBE_SECRET_MARK if isinstance(item, str) and item else item


def _keyed_in(document: bytes, lowered: bytes, value: Any) -> dict[str, str]:
    """`_keyed_changes(value)`, walked only when its JSON `document` holds such a key."""
    return _keyed_changes(value) if _holds_keyed(document, lowered) else {}


def _holds_keyed(document: bytes, lowered: bytes) -> bool:
    """Whether a string of the JSON `document` (`lowered`: its ASCII letters lowered) that holds
    a `KEY_WORDS` word is a key holding a string; each string is looked at once, however many
    words it holds."""
    for scan in _key_word_scans():
        string_end = -1
        for at in scan(lowered):
            if at < string_end:
                continue
            string_end = _unescaped_quote(document, at, backwards=False)
            if document.startswith(b':"', string_end + 1) or _names_a_value(lowered, at):
                return True
    return False


def _names_a_value(lowered: bytes, at: int) -> bool:
    """Whether the JSON string holding offset `at` is under a `name` key (a Kubernetes or Docker
    env entry, `{"name": "DB_PASSWORD", "value": "…"}`): `_keyed_strings` takes its `value`."""
    string_start = _unescaped_quote(lowered, at, backwards=True)
    return lowered.endswith(b'"name":', 0, string_start)


# `token` ending a key that holds a number or an object (`"prompt_tokens":12`, five keys of
# every step) holds no secret: `re` leaves those hits, as `_TOKEN_NOT_CLOSING` does
_TOKEN_NOT_COUNTING = re.compile(rb'token(?!s?":[^"])')


@cache
def _key_word_scans() -> list[Callable[[bytes], Iterable[int]]]:
    """Where the `KEY_WORDS` start: `token` by `_TOKEN_NOT_COUNTING`, the rest by one scan."""
    words = [word for word in KEY_WORDS if word != b"token"]
    tokens = _TOKEN_NOT_COUNTING.finditer
    try:
        import ahocorasick_rs
    except ImportError:  # pragma: no cover - a declared dependency
        any_word = re.compile(b"|".join(map(re.escape, words)))
        return [lambda text: (hit.start() for hit in any_word.finditer(text)),
                lambda text: (hit.start() for hit in tokens(text))]  # fmt: skip
    finder = ahocorasick_rs.BytesAhoCorasick(words)
    return [
        lambda text: (start for _, start, _ in finder.find_matches_as_indexes(text)),
        lambda text: (hit.start() for hit in tokens(text)),
    ]


def _keyed_changes(value: Any) -> dict[str, str]:
    """{value: masked} for each string value under a key naming a secret that its masking as
    `"key": "value"` changes."""
    changes: dict[str, str] = {}
    for opening, text in _keyed_strings(value):
        said = redact_text(f'{opening}{text}"')
        if said.startswith(opening) and said.endswith('"') and said[len(opening) : -1] != text:
            changes[text] = said[len(opening) : -1]
    return changes


def _keyed_strings(value: Any) -> Iterator[tuple[str, str]]:
    """(the text said before it, value) of each string under a key naming a secret
    (`"password": "`), and of each `value` beside a `name` naming one (`"name": "DB_PASSWORD",
    "value": "`: an env entry passed as an object, its keys in either order)."""
    if isinstance(value, dict):
        named = _named_value(value)
        if named is not None:
            yield named
        for key, item in value.items():
            if not isinstance(item, str):
                yield from _keyed_strings(item)
            elif isinstance(key, str) and _plain_key(key) and _SECRET_IN_KEY.search(key):
                yield f'"{key}": "', item
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _keyed_strings(item)


def _named_value(entry: dict[Any, Any]) -> tuple[str, str] | None:
    name, item = entry.get("name"), entry.get("value")
    if not (isinstance(name, str) and isinstance(item, str) and _plain_key(name)):
        return None
    return (f'"name": "{name}", "value": "', item) if _SECRET_IN_KEY.search(name) else None


def _plain_key(key: str) -> bool:
    return not any(c in '"\\' or c < " " for c in key)


def _redact_every_pattern(text: str) -> str:
    if not _TRIGGER.search(text):
        return text
    text = _kube_secret_values_masked(text)
    for kind, pattern, *_ in _patterns():
        text = _substituted(pattern, kind, text)
    return _file_context_masked(text, _files_named(text))


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
    if document is None:  # what JSON cannot hold: the walk decides
        plain = msgspec.to_builtins(trajectory)
        cleaned = redact_walk(plain)
        return trajectory if cleaned == plain else msgspec.convert(cleaned, Trajectory)
    lowered = document.lower()
    changed = _changed_strings(document, lowered)
    keyed = _holds_keyed(document, lowered)
    objects = _holds_objects(lowered)
    if not changed and not keyed and not objects:
        return trajectory
    plain = msgspec.to_builtins(trajectory)
    changed |= _keyed_changes(plain) if keyed else {}
    cleaned = map_strings(plain, lambda text: changed.get(text, text))
    cleaned = _objects_masked(cleaned) if objects else cleaned
    if cleaned == plain:
        return trajectory
    return msgspec.convert(masked_in_context(plain, cleaned), Trajectory)


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
        "hooks.slack", "-us", "hf_", "aiza", "ya29.", "dckr_pat_", "dop_v1_", "doo_v1_",
        "dor_v1_", "shpat_", "shpca_", "shppa_", "shpss_", "curl", "mysql",
        "sshpass", "redis-cli", "machine", "auth", "sig=", "x-amz-signature=",
        "-----end ", "sk_test", "rk_test", "docker", "podman", "nerdctl", "buildah", "skopeo",
        "env ", "http:", "https:", "ftp:", "ftps:", "postgres:", "postgresql:", "mongodb:",
        "mongodb+srv:", "redis:", "rediss:", "amqp:", "amqps:", "-password", "-passwd",
        "-passphrase", "-pwd",
        "-token", "-api", "-access", "-secret", "-client", ":543", ":6432:", ":*:",
        "b3blbnnzac1rzxktdje", "ibaaj", "ibaak", "ibadanbgkqhkig9w0baqefaas", "ageamb",
        "caqawbqydk2v", "mhccaqee", "migkagebbd", "mihcagebbe", "bgkqhkig9w0bbq0w", "pgpass",
        "\u0130", "\u0131", "\u017f", "\u212a")),
]  # fmt: skip


# A hit of one of these can start a `_TRIGGER` match only with a `:`, `=` or `>` after it in its
# string (`(?i:pass|...)[\w-]{0,40}["']?\s{0,4}[:=]`, an XML tag's `>`); JSON writes them as
# they are. In a trajectory most hits are of `token` in keys (`"prompt_tokens"`), which have none.
_ASSIGNED = frozenset((b"pass", b"pwd", b"secret", b"token", b"key"))


class _NeedleScan:
    """Hits of some of the needles, leftmost-first and not overlapping, which lets an
    Aho-Corasick automaton skip ahead with its prefilter. A hit reported hides the needles that
    start inside it (or at its start, shorter or longer): `hidden[n]` lists them, as (offset,
    needle), to look for where a hit of needle n is passed over."""

    def __init__(
        self, needles: list[bytes], find: Callable[[bytes], list[tuple[int, int, int]]]
    ) -> None:
        self.needles = needles
        self.find = find
        self.assigned = [needle in _ASSIGNED for needle in needles]
        self.hidden = [_starting_inside(needle, needles) for needle in needles]

    @classmethod
    def automaton(cls, needles: list[bytes]) -> _NeedleScan:
        import ahocorasick_rs

        kind = ahocorasick_rs.MatchKind.LeftmostFirst
        finder = ahocorasick_rs.BytesAhoCorasick(needles, matchkind=kind)
        return cls(needles, finder.find_matches_as_indexes)


def _starting_inside(needle: bytes, needles: list[bytes]) -> list[tuple[int, bytes]]:
    return [
        (offset, other)
        for offset in range(len(needle))
        for other in needles
        if (offset or other != needle)
        and (other.startswith(needle[offset:]) or needle[offset:].startswith(other))
    ]


# `token` right before its string's closing quote (`"prompt_tokens":`, five keys of every step)
# has no `:` or `=` after it in its string: such hits would be passed over one by one in Python,
# so `re` (a literal search, 6x faster here than the automaton with `token` in it) leaves them.
_TOKEN_NOT_CLOSING = re.compile(rb'token(?!s?")')


def _tokens(lowered: bytes) -> list[tuple[int, int, int]]:
    return [(0, hit.start(), hit.end()) for hit in _TOKEN_NOT_CLOSING.finditer(lowered)]


@cache
def _needle_scans() -> list[_NeedleScan] | None:
    """The needle scans (2.3x faster than one overlapping scan for them all), or None without
    `ahocorasick-rs` (then `re`, overlapping). Needles of four letters and more, the short and
    non-ASCII ones, and `token` apart."""
    try:
        import ahocorasick_rs  # noqa: F401
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    long = [n for n in NEEDLES if n.isascii() and len(n) > 3 and n != b"token"]
    short = [n for n in NEEDLES if n not in long and n != b"token"]
    return [
        _NeedleScan.automaton(long),
        _NeedleScan.automaton(short),
        _NeedleScan([b"token"], _tokens),
    ]


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


def _changed_strings(document: bytes, lowered: bytes | None = None) -> dict[str, str]:
    """{string: redacted} for the strings of a JSON document that redaction changes. Only the
    strings a needle hits (`_ASSIGNED`: with a `:` or `=` after it) are decoded and checked."""
    changed: dict[str, str] = {}
    checked: set[int] = set()
    lowered = document.lower() if lowered is None else lowered
    for start, end in _hit_strings(document, lowered):
        if start in checked:
            continue  # a string the other scan hit too
        checked.add(start)
        text = msgspec.json.decode(document[start : end + 1], type=str)
        redacted = _redact_cached(text)
        if redacted != text:
            changed[text] = redacted
    return changed


def _hit_strings(document: bytes, lowered: bytes) -> Iterator[tuple[int, int]]:
    """Where each JSON string that a needle hits opens and closes (its quotes), by scan, in
    order."""
    scans = _needle_scans()
    if scans is None:  # pragma: no cover - without ahocorasick-rs
        yield from _hit_strings_re(document, lowered)
        return
    for scan in scans:
        seen_to = -1
        assigned, hidden = scan.assigned, scan.hidden
        assigns = _Assigns(document)
        for needle, at, _ in scan.find(lowered):
            if at < seen_to:
                continue  # a second needle in a string already yielded
            # no `_TRIGGER` match can start at a hit passed over; a needle it hid may
            passed_over = assigned[needle] and not assigns(at)
            if passed_over and not _hides_a_hit(lowered, at, hidden[needle], assigns):
                continue
            seen_to = _unescaped_quote(document, at, backwards=False)
            yield _unescaped_quote(document, at, backwards=True), seen_to


def _hides_a_hit(
    lowered: bytes, at: int, hidden: list[tuple[int, bytes]], assigns: _Assigns
) -> bool:
    return any(
        lowered.startswith(other, at + offset) and (other not in _ASSIGNED or assigns(at + offset))
        for offset, other in hidden
    )


class _Assigns:
    """Whether a `:`, `=` or `>` follows an offset in its JSON string. The sign (or quote) found
    for one offset is the answer for every offset up to it, so a scan's hits, which come in
    order, read each byte once: asked afresh for each hit, a string of 4000 lines `no host key
    found` with no sign in it was read to its end once per `key` (6 s; quadratic)."""

    def __init__(self, document: bytes) -> None:
        self.document = document
        self.start = self.stop = -1

    def __call__(self, at: int) -> bool:
        if not self.start <= at < self.stop:
            found = _UP_TO_ASSIGNMENT.match(self.document, at)
            self.start, self.stop = at, found.end()  # type: ignore[union-attr] # `*`: matches
        return self.document[self.stop] != _QUOTE


def _hit_strings_re(document: bytes, lowered: bytes) -> Iterator[tuple[int, int]]:
    ahead = re.compile(b"(?=(" + b"|".join(map(re.escape, NEEDLES)) + b"))")
    assigns = _Assigns(document)
    for hit in ahead.finditer(lowered):
        if hit.group(1) not in _ASSIGNED or assigns(hit.start()):
            at = hit.start()
            yield (
                _unescaped_quote(document, at, backwards=True),
                _unescaped_quote(document, at, backwards=False),
            )


# From a needle to the first `:`, `=` or `>` of its JSON string, or to the quote that closes it (an
# escape is taken whole: `\\"` ends the string, `\"` does not): one C call in place of finding
# the closing quote and then each sign.
_UP_TO_ASSIGNMENT = re.compile(rb'(?:[^"\\:=>]|\\.)*', re.DOTALL)
_QUOTE = ord('"')
_BACKSLASH = ord("\\")


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
