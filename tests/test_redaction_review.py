"""What a review of the context rules (session 30) found them to leave or cost: a line that ends in
CRLF, a private key's body on one line or indented (a YAML block scalar), `kind: Secret` with a
comment after it or its mapping written inline, and a Secret's JSON read at a cost that grew as
the square of its unclosed strings. Each with the text that must stay."""

from __future__ import annotations

import base64
import json
import time

import pytest

from agentlens import redaction
from tests.test_redaction_gaps import DATA_VALUE, _base64_lines


@pytest.mark.parametrize(
    "text",
    [
        "cat ~/.pgpass\r\ndb.internal:6000:app:me:crlfS3cret9\r\n",
        "db.internal:5432:app:me:crlfS3cret9\r\nnext\r\n",  # Postgres' port: no file named
        "cat .env\r\nDB_PASSWORD=crlfS3cret9 horse battery\r\nDB_HOST=db\r\n",
    ],
    ids=["pgpass-any-port", "pgpass-5432", "env"],
)
def test_a_context_line_ending_in_crlf_is_masked_whole(text: str) -> None:
    redacted = redaction.redact_text(text)
    assert "crlfS3cret9" not in redacted and "horse" not in redacted
    assert redacted.endswith(("\r\n", "DB_HOST=db\r\n", "next\r\n"))


@pytest.mark.parametrize(
    "text",
    [
        "$ ip link\r\n02:42:ac:11:00:02\r\n12:34:56:78:90\r\n",
        "cat .env\r\nDB_HOST=db.internal\r\nDEBUG=true\r\n",
    ],
)
def test_crlf_lines_naming_no_secret_are_kept(text: str) -> None:
    assert redaction.redact_text(text) == text


KEY_LINES = _base64_lines("one", 6, "MIIEpAIBAAKCAQEA")
CERT_LINES = _base64_lines("cert", 6, "MIIDdzCCAl+gAwIBAgIUR")


def test_a_key_body_on_one_line_is_masked_whole() -> None:
    """`base64 -w0 key.der`, a key in an env variable: the body past a PEM line's length too."""
    text = f"echo {''.join(KEY_LINES)} > key.b64"
    assert redaction.redact_text(text) == "echo [REDACTED:private-key] > key.b64"


def test_a_key_body_indented_as_a_block_scalar_is_masked_whole() -> None:
    body = "\n".join(f"    {line}" for line in KEY_LINES)
    text = f"tls:\n  key: |\n{body}\n  port: 8443\n"
    redacted = redaction.redact_text(text)
    assert [line for line in KEY_LINES if line[20:40] in redacted] == []
    assert redacted.endswith("\n  port: 8443\n")


@pytest.mark.parametrize("joined", ["", "\n    "])
def test_a_certificate_body_on_one_line_or_indented_is_kept(joined: str) -> None:
    text = f"ca: |\n    {joined.join(CERT_LINES)}\n"
    assert redaction.redact_text(text) == text


def test_a_secret_kind_with_a_comment_after_it_is_masked() -> None:
    text = f"kind: Secret  # prod only\ndata:\n  config: {DATA_VALUE}\n"
    assert DATA_VALUE not in redaction.redact_text(text)


def test_a_config_map_whose_comment_says_secret_is_kept() -> None:
    text = f"kind: ConfigMap  # not a Secret\ndata:\n  config: {DATA_VALUE}\n"
    assert redaction.redact_text(text) == text


def test_unclosed_strings_beside_secret_kinds_cost_a_linear_scan() -> None:
    """Each escaping level a `"kind": "Secret"` is said at is tokenised; a string its line
    does not close was tried again at each quote (60 KB: 10 s; now under 0.1 s)."""
    kinds = "".join('{0}"kind{0}":{0}"Secret{0}"'.format("\\" * level) for level in range(8))
    text = kinds + '\\\\\\"a' * 12_000
    started = time.process_time()
    redaction.redact_text(text)
    assert time.process_time() - started < 2.0


def test_a_secret_after_an_unclosed_string_s_line_is_still_masked() -> None:
    secret = base64.b64encode(b"after-a-stray-quote").decode()
    text = f'say "hi\n{{"kind": "Secret", "data": {{"config": "{secret}"}}}}'
    assert secret not in redaction.redact_text(text)


def test_a_key_body_indented_under_cat_n_s_line_numbers_is_masked_whole() -> None:
    text = "\n".join(f"{n + 2:6}\t    {line}" for n, line in enumerate(KEY_LINES))
    redacted = redaction.redact_text(text)
    assert [line for line in KEY_LINES if line[20:40] in redacted] == []


@pytest.mark.parametrize(
    "text",
    [
        "mongosh mongodb://db --username mysql --password m0ngoPw9x7q",
        "mycli -h mysql -u root --password myc1iPw9x7q shop",
        "influx -host psql --password infl0xPw9x7q",
    ],
)
def test_a_client_s_name_as_an_option_s_value_does_not_keep_the_password(text: str) -> None:
    """`mysql` there is a user or a host (a compose service): the command is another CLI's,
    whose `--password` takes the next word."""
    assert "Pw9x7q" not in redaction.redact_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "docker exec -it mysql mysql -uroot --password shopdb",
        "kubectl exec -it pg-0 -- psql -U app --password appdb",
        "sudo -u postgres psql --password appdb",
        "mysql -h mysql --password appdb",
    ],
)
def test_a_client_after_a_container_s_name_or_options_still_prompts(text: str) -> None:
    assert redaction.redact_text(text) == text


@pytest.mark.parametrize(
    "text",
    [
        f"kind: Secret\ndata: {{config: {DATA_VALUE}, user: YWRtaW4=}}\n",
        f'apiVersion: v1\nkind: Secret\nstringData: {{"config": "{DATA_VALUE}"}}\n',
        f'{{"kind" : "Secret", "data" : {{"config" : "{DATA_VALUE}"}}}}',  # spaces before colons
    ],
    ids=["inline-data", "inline-string-data", "json-spaced"],
)
def test_a_secret_written_inline_or_spaced_is_masked(text: str) -> None:
    for said in (text, json.dumps({"command": f"cat <<EOF | kubectl apply -f -\n{text}EOF"})):
        assert DATA_VALUE not in redaction.redact_text(said)


@pytest.mark.parametrize(
    "text",
    [
        f"kind: ConfigMap\ndata: {{config: {DATA_VALUE}}}\n",
        "kind: Secret\ndata: {}\n",
        'Its "kind" : "Secret" keeps "data" : {"a": "b"} as base64.',
    ],
)
def test_inline_data_outside_a_secret_is_kept(text: str) -> None:
    assert redaction.redact_text(text) == text


@pytest.mark.parametrize(
    "code",
    [
        "PASSWORD_RESET_TIMEOUT = 60 * 60 * 24",
        "auth_token_ttl = timedelta(hours=1) if DEBUG else None",
        "    password_hint=the first pet you had,",
    ],
)
def test_code_beside_a_named_env_file_is_kept(code: str) -> None:
    """Code in a text that names `.env` (Django reading its env file) is no env line: an env file
    writes `NAME=value` at the line's start, with no space around `=`."""
    text = f"env.read_env(BASE_DIR / '.env')\n{code}\n"
    assert redaction.redact_text(text) == text


def test_an_env_file_s_line_with_spaces_is_still_masked_whole() -> None:
    masked = redaction.redact_text("cat .env\nexport DB_PASSWORD=correct horse battery # prod\n")
    assert masked == "cat .env\nexport DB_PASSWORD=[REDACTED:password] # prod\n"
