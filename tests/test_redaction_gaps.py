"""Secrets the third audit left (session 30): a Kubernetes `Secret` as JSON, text or object; a
`.pgpass` line on any port where the file is named; a command held as a JSON string (Codex's
`arguments`), masked as the plain command is; an env file's value with spaces; MySQL's and
PostgreSQL's `--password`, which takes no value; a private key's body shown from its first line
without its BEGIN and END lines. Each with the text that must stay."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentlens import redaction
from agentlens.formats.load import read_path
from tests.conftest import FORMATS
from tests.test_redaction_shapes import APART, SHAPES, WHOLE_VALUES

DATA_VALUE = "czNjcjN0RGJQdzk="  # base64 of the password below
SECRET = "s3cr3tDbPw9"


def _both(value: Any) -> Any:
    fast, slow = redaction.redact_value(value), redaction.redact_walk(value)
    assert fast == slow
    return fast


KUBECTL_JSON = json.dumps(
    {
        "apiVersion": "v1",
        "data": {"config": DATA_VALUE, "tls.key": "LS0tLS1CRUdJTiBQUklW"},
        "kind": "Secret",
        "metadata": {"name": "db", "namespace": "prod"},
        "type": "Opaque",
    },
    indent=4,
)


@pytest.mark.parametrize(
    "text",
    [
        KUBECTL_JSON,
        json.dumps({"apiVersion": "v1", "items": [json.loads(KUBECTL_JSON)], "kind": "List"}),
        json.dumps({"output": KUBECTL_JSON}),  # its quotes escaped, inside a JSON string
        '{"kind": "Secret", "data": {"config": "' + DATA_VALUE + '", "ca.crt": "LS0t',  # cut short
    ],
    ids=["kubectl-json", "list", "escaped", "cut-short"],
)
def test_a_kubernetes_secret_as_json_text_is_masked(text: str) -> None:
    redacted = redaction.redact_text(text)
    assert DATA_VALUE not in redacted
    assert redaction.KUBE_SECRET_MARK in redacted
    if "metadata" in text:
        assert '"prod"' in redacted.replace('\\"', '"')  # its metadata stays


@pytest.mark.parametrize(
    "text",
    [
        KUBECTL_JSON.replace('"Secret"', '"ConfigMap"'),
        json.dumps(
            {"items": [{"kind": "ConfigMap", "data": {"a": DATA_VALUE}}, {"kind": "Secret"}]}
        ),
        'The "kind": "Secret" docs say "data": {"a": "b"} is base64.',
    ],
)
def test_data_outside_a_kubernetes_secret_as_json_is_kept(text: str) -> None:
    assert redaction.redact_text(text) == text


def test_a_kubernetes_secret_as_an_object_is_masked() -> None:
    manifest = json.loads(KUBECTL_JSON)
    manifest["stringData"] = {"config.ini": f"user=me\npw={SECRET}", "port": "5432"}
    cleaned = _both({"tool": "apply", "manifest": manifest})
    assert set(cleaned["manifest"]["data"].values()) == {redaction.KUBE_SECRET_MARK}
    assert set(cleaned["manifest"]["stringData"].values()) == {redaction.KUBE_SECRET_MARK}
    assert cleaned["manifest"]["metadata"] == {"name": "db", "namespace": "prod"}
    config_map = {**manifest, "kind": "ConfigMap"}
    assert _both({"manifest": config_map}) == {"manifest": config_map}


def _copilot_run(tmp_path: Path) -> Any:
    lines = (FORMATS / "copilot-cli" / "events.jsonl").read_text()
    path = tmp_path / "events.jsonl"
    path.write_text(lines)
    return read_path(path)[0]


def test_a_kubernetes_secret_in_a_call_s_arguments_is_masked_as_read(tmp_path: Path) -> None:
    trajectory = _copilot_run(tmp_path)
    step = next(step for step in trajectory.steps if step.command)
    step.arguments["manifest"] = json.loads(KUBECTL_JSON)
    kept = msgspec.json.encode(redaction.redact_trajectory(trajectory)).decode()
    assert DATA_VALUE not in kept
    assert redaction.KUBE_SECRET_MARK in kept


PGPASS_LINES = "db.internal:15432:app:alice:pgAnyP0rt1\n*:25060:*:doadmin:pgAnyP0rt2"


@pytest.mark.parametrize(
    "text",
    [
        f"cat > ~/.pgpass <<EOF\n{PGPASS_LINES}\nEOF",
        "echo 'db:26257:defaultdb:root:pgAnyP0rt1' >> ~/.pgpass && chmod 600 ~/.pgpass",
        json.dumps({"command": ["bash", "-lc", f"cat > ~/.pgpass <<EOF\n{PGPASS_LINES}\nEOF"]}),
        f"PGPASSFILE=/run/pg.conf\n     1\t{PGPASS_LINES}",
    ],
)
def test_a_pgpass_line_on_any_port_is_masked_where_the_file_is_named(text: str) -> None:
    assert "pgAnyP0rt" not in redaction.redact_text(text)


def test_a_pgpass_file_s_lines_beside_its_path_are_masked() -> None:
    call = {"file_path": "/home/me/.pgpass", "content": PGPASS_LINES + "\n"}
    assert "pgAnyP0rt" not in json.dumps(_both(call))


@pytest.mark.parametrize(
    "text",
    [
        "$ cat /sys/class/net/eth0/address\n02:42:ac:11:00:02",
        "12:34:56:789:1234\nsrc/app.py:15432:1:E501:toolong",
        "host:15432:db:user:pw1234",  # no `.pgpass` named: Postgres' ports only
    ],
)
def test_colon_lines_where_no_pgpass_is_named_are_kept(text: str) -> None:
    assert redaction.redact_text(text) == text


# (a command, as a Codex `arguments` string holds it, the part its escaping used to leave)
ESCAPED = {
    "line-after-a-value": ("export API_TOKEN=abcdef123456XYZ\necho hi", "echo hi"),
    "yaml-secret-in-heredoc": (
        "cat <<EOF > s.yaml\napiVersion: v1\nkind: Secret\ndata:\n"
        f"  password: {DATA_VALUE}\nEOF\nkubectl apply -f s.yaml",
        "kubectl apply -f s.yaml",
    ),
    "sshpass": ("sshpass -p S3cretSsh\nls -la", "ls -la"),
    "redis-cli": ("redis-cli -a R3disPassw0rd\nls -la", "ls -la"),
    "mysql-p": ("mysql -uroot -pS3cr3tMysqlPw\nls -la", "ls -la"),
    "curl-u": ("curl -u admin:Pa55w0rdXyz\nls -la", "ls -la"),
    "netrc": ("machine h login bob password hunter2Netrc\nls -la", "ls -la"),
}


@pytest.mark.parametrize("kind", ESCAPED)
def test_a_command_held_as_a_json_string_is_masked_as_the_command_is(kind: str) -> None:
    """`export API_TOKEN=…\\necho hi` as JSON text masked `…\\necho` (the value ran over the
    escaped line break; `sshpass -p`, `redis-cli -a`, `mysql -p`, `curl -u` and `.netrc` too),
    and a YAML `Secret` written by a here-document was not masked."""
    command, kept = ESCAPED[kind]
    arguments = json.dumps({"command": ["bash", "-lc", command]})
    redacted = json.loads(redaction.redact_text(arguments))["command"][2]
    assert redacted == redaction.redact_text(command)
    assert (
        DATA_VALUE not in redacted and "abcdef123456XYZ" not in redacted and "3cr" not in redacted
    )
    assert kept in redacted


@pytest.mark.parametrize(
    "command",
    [
        *(text for text, _ in SHAPES.values()),
        *(text for text, _ in APART.values()),
        *(text for text, _ in WHOLE_VALUES.values()),
    ],
)
def test_every_shape_is_masked_alike_in_a_json_string(command: str) -> None:
    arguments = json.dumps({"command": ["bash", "-lc", command + "\nls -la"]})
    redacted = json.loads(redaction.redact_text(arguments))["command"][2]
    assert redacted == redaction.redact_text(command + "\nls -la")


@pytest.mark.parametrize(
    "text",
    [
        "cat > .env <<'EOF'\nGPG_PASSPHRASE=correct horse battery\nDB_HOST=db\nEOF",
        "$ cat .env.local\nexport API_TOKEN=correct horse battery # rotated",
        json.dumps(
            {"command": ["bash", "-lc", "cat > .env <<EOF\nDB_PASS=correct horse battery\nEOF"]}
        ),
    ],
)
def test_an_env_file_s_value_is_masked_to_its_line_s_end(text: str) -> None:
    redacted = redaction.redact_text(text)
    assert "correct" not in redacted and "horse battery" not in redacted
    assert "DB_HOST=db" in redacted or "# rotated" in redacted or "EOF" in redacted


def test_an_env_file_s_lines_beside_its_path_are_masked() -> None:
    call = {"file_path": "/app/.env", "content": "GPG_PASSPHRASE=correct horse battery\nX=1\n"}
    assert _both(call)["content"] == "GPG_PASSPHRASE=[REDACTED:password]\nX=1\n"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("GPG_PASSPHRASE=correct horse battery", "horse battery"),  # a shell runs `horse`
        ("PGPASSWORD=hunter2pw psql -h db -U app", "psql -h db -U app"),
        ("const k = process.env.API_KEY\nGPG_PASSPHRASE=correct horse battery", "horse battery"),
    ],
)
def test_a_shell_assignment_is_masked_to_its_first_word(text: str, kept: str) -> None:
    redacted = redaction.redact_text(text)
    assert kept in redacted and "correct" not in redacted and "hunter2pw" not in redacted
    assert _both({"path": "/app/config.py", "content": text})["content"] == redacted


@pytest.mark.parametrize(
    "text",
    [
        "mysql --password mydb",
        "mysql -u root -h db --password appdb -e 'show tables'",
        "sudo mysqldump --password shopdb > dump.sql",
        "psql -h db -U app --password appdb",
        "cd /srv && pg_dump --password --format=c appdb",
        json.dumps({"command": ["bash", "-lc", "mysql --password mydb"]}),
    ],
)
def test_a_database_client_s_password_option_takes_no_value(text: str) -> None:
    """MySQL's `--password` is `--password=pw` or a prompt, PostgreSQL's only prompts: the word
    after it is the database, which was masked."""
    assert redaction.redact_text(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "docker login --username me --password dckrPw9x7q reg.io",
        "mongosh --username admin --password m0ngoPw9x7q",
        "mysql -h db shop; deploy --password d3ployPw9x7q",
        "mysql --password=myP4ssw0rd9 shop",
    ],
)
def test_a_password_option_that_takes_a_value_is_still_masked(text: str) -> None:
    assert "Pw9x7q" not in redaction.redact_text(text) and "P4ssw0rd9" not in redaction.redact_text(
        text
    )


def _base64_lines(seed: str, lines: int, head: str) -> list[str]:
    """Key-like base64 lines of 64 characters, the first starting with `head` (a DER header)."""
    raw = b"".join(hashlib.sha512(f"{seed}{i}".encode()).digest() for i in range(lines))
    body = head + base64.b64encode(raw).decode()
    return [body[at : at + 64] for at in range(0, 64 * lines, 64)]


@pytest.mark.parametrize(
    "head",
    [
        "MIIEpAIBAAKCAQEA",  # PKCS#1 RSA
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",  # PKCS#8 RSA
        "MHcCAQEEIB8L2F",  # SEC1 EC P-256
        "MC4CAQAwBQYDK2VwBCIEI",  # PKCS#8 Ed25519
        "MIIFLTBXBgkqhkiG9w0BBQ0wSjAp",  # encrypted PKCS#8
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbm",  # OpenSSH
    ],
)
@pytest.mark.parametrize("shown", ["plain", "cat-n", "json"])
def test_a_key_body_from_its_first_line_without_begin_or_end_is_masked(
    head: str, shown: str
) -> None:
    lines = _base64_lines(head, 6, head)
    text = {
        "plain": "$ sed -n 2,7p id_rsa\n" + "\n".join(lines) + "\n$ ls",
        "cat-n": "\n".join(f"{n + 2:6}\t{line}" for n, line in enumerate(lines)),
        "json": json.dumps("\n".join(lines)),
    }[shown]
    redacted = redaction.redact_text(text)
    assert [line for line in lines if line[20:40] in redacted] == []


@pytest.mark.parametrize(
    "head",
    [
        "MIIDdzCCAl+gAwIBAgIUR",  # a certificate
        "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA",  # a public key
        "iVBORw0KGgoAAAANSUhEUgAA",  # a PNG
    ],
)
def test_a_public_base64_body_is_kept(head: str) -> None:
    text = "\n".join(_base64_lines(head, 6, head))
    assert redaction.redact_text(text) == text


def test_the_new_shapes_are_masked_in_a_real_trajectory_as_read(tmp_path: Path) -> None:
    """The read path's needle scan must find each (`pgpass`, a DER header, `"kind": "Secret"`)."""
    doc = json.loads((FORMATS / "mini-swe-agent-fixtures/local.traj.json").read_text())
    messages = doc["messages"] if isinstance(doc, dict) else doc
    observation = next(m for m in messages[2:] if m["role"] == "user")
    key = "\n".join(_base64_lines("k", 4, "MIIEpAIBAAKCAQEA"))
    said = "\n".join(
        [
            KUBECTL_JSON,
            f"cat > ~/.pgpass <<EOF\n{PGPASS_LINES}\nEOF",
            key,
            ESCAPED["yaml-secret-in-heredoc"][0],
        ]
    )
    observation["content"] = f"{observation['content']}\n{said}"
    path = tmp_path / "local.traj.json"
    path.write_text(json.dumps(doc))
    (trajectory,) = read_path(path)
    kept = json.dumps(msgspec.to_builtins(trajectory))
    assert DATA_VALUE not in kept and "pgAnyP0rt" not in kept and key[20:40] not in kept


@pytest.mark.parametrize(
    "text",
    [
        "API_TOKEN=\nDB_HOST=db_primary",
        "cat .env.example\nSECRET_KEY=\nALLOWED_HOSTS=localhost,example.com",
        "password =\n  nothing_here_yet",
    ],
)
def test_an_empty_value_does_not_take_the_next_line(text: str) -> None:
    """`API_TOKEN=` left empty (an `.env.example`) masked the whole next line, `DB_HOST=…`:
    the space allowed after `=` took the line break."""
    assert redaction.redact_text(text) == text
