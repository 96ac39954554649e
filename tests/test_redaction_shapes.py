"""Secret shapes that used to leave in part or whole, planted in a copy of a real mini-swe-agent
trajectory and read back through the CLI's exports: no part of a token may survive (a GitLab
token's body behind its masked prefix, a Stripe key's characters past the 24 its detector
matches), and the shapes that had no detector (Hugging Face, Google, npm, Docker, DigitalOcean,
Shopify tokens, an HTTP Basic header, `curl -u`, `mysql -p`, `sshpass -p`, `redis-cli -a`,
`.netrc`, Docker's `config.json`, a kubeconfig's key, signed-URL signatures, an XML element
such as Maven's `<password>`) are masked too."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from agentlens import redaction
from agentlens.formats.load import read_path
from tests.conftest import FORMATS

# (what is planted, a part of it that must not be left anywhere)
SHAPES = {
    "gitlab": ("glpat-Xy9zAbCdEfGhIjKlMnOp", "Xy9zAbCdEfGhIjKlMnOp"),
    "gitlab-partitioned": ("glcbt-3f_Wq8rT5yU2iO9pA4sD6fG1h", "Wq8rT5yU2iO9pA4sD6fG1h"),
    "stripe": ("sk_live_51H8abcdefghijklmnopqrstuvwxYZ0123456789", "uvwxYZ0123456789"),
    "huggingface": ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "AbCdEfGhIjKlMnOpQrStUvWxYz01234567"),
    "google": ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    "npm": ("npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
    "docker": ("docker login -u me -p dckr_pat_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr", "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr"),
    "google-oauth": ("ya29.a0AfH6SMBx1234567890abcdefghijklmnop", "a0AfH6SMBx1234567890abcdefghijklmnop"),
    "digitalocean": ("dop_v1_" + "0123456789abcdef" * 4, "0123456789abcdef" * 4),
    "shopify": ("shpat_0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"),
    "basic-header": ("Authorization: Basic YWRtaW46c3VwZXJzZWNyZXRwYXNzd29yZA==", "YWRtaW46c3VwZXJzZWNyZXRwYXNzd29yZA"),
    "curl-user": ("curl -u admin:Pa55w0rdXyz https://api.example.com", "Pa55w0rdXyz"),
    "mysql-password": ("mysql -uroot -pS3cr3tMysqlPw prod", "S3cr3tMysqlPw"),
    "netrc": ("machine example.com\n  login bob\n  password hunter2Netrc", "hunter2Netrc"),
    "docker-config": ('{"auths": {"ghcr.io": {"auth": "Ym9iOmh1bnRlcjJTZWNyZXQ="}}}', "Ym9iOmh1bnRlcjJTZWNyZXQ"),
    "kubeconfig": ("    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVkt", "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVkt"),
    "sshpass": ("sshpass -p S3cretSsh ssh root@host", "S3cretSsh"),
    "redis-cli": ("redis-cli -h cache -a R3disPassw0rd ping", "R3disPassw0rd"),
    "azure-sas": ("https://a.blob.core.windows.net/c/b?sv=2021&sp=r&sig=AbCdEf0123456789%2BXyZ%3D", "AbCdEf0123456789"),
    "aws-presigned": ("s3.amazonaws.com/b/k?X-Amz-Signature=" + "0f1e2d3c4b5a6978" * 4, "0f1e2d3c4b5a6978"),
    "maven-settings": ("<server>\n  <id>nexus</id>\n  <password>Mvn-S3cret-Pw</password>\n</server>", "Mvn-S3cret-Pw"),
    "xml-api-key": ("<ns:apiKey>9f8e7d6c5b4a3f2e1d0c</ns:apiKey>", "9f8e7d6c5b4a3f2e1d0c"),
}  # fmt: skip


@pytest.fixture
def planted(data_dir: Path, tmp_path: Path) -> Path:
    """A copy of a real mini-swe-agent trajectory with every shape in its first observation."""
    doc = json.loads((data_dir / "formats/mini-swe-agent-fixtures/local.traj.json").read_text())
    messages = doc["messages"] if isinstance(doc, dict) else doc
    observation = next(m for m in messages[2:] if m["role"] == "user")
    shapes = "\n".join(text for text, _ in SHAPES.values())
    observation["content"] = f"{observation['content']}\n{shapes}"
    path = tmp_path / "local.traj.json"
    path.write_text(json.dumps(doc))
    return path


def left(text: str) -> list[str]:
    return [kind for kind, (_, part) in SHAPES.items() if part in text]


def exported(tmp_path: Path, path: Path, *flags: str) -> str:
    """What `convert` writes in each of its text formats."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    texts = []
    for kind in ("atif", "jsonl", "otel"):
        out = tmp_path / kind
        command = [sys.executable, "-m", "agentlens", *flags, "convert", str(path), "--to", kind]
        done = subprocess.run([*command, "-o", str(out)], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        texts += [p.read_text() for p in out.rglob("*") if p.is_file()]
    return "\n".join(texts)


def test_no_part_of_a_token_is_left_in_any_export(planted: Path, tmp_path: Path) -> None:
    assert left(planted.read_text()) == list(SHAPES)
    (trajectory,) = read_path(planted)
    assert left(json.dumps([s.observation for s in trajectory.steps])) == []
    assert left(exported(tmp_path, planted)) == []
    assert left(exported(tmp_path / "kept", planted, "--no-redact")) == list(SHAPES)


def test_the_new_shapes_keep_ordinary_text() -> None:
    """Words near the new shapes' triggers are not secrets: `basic` prose, `-u`/`-p` of other
    programs, a variable after `-p`, words that start like a token."""
    texts = [
        "Authorization: Basic $CREDENTIALS",
        "basic functionality works; the basic_auth module",
        "sort -u file.txt; docker run -u 1000:1000 img; mkdir -p build/out",
        "mysql -u root -p prod",  # asks for the password
        "curl -u $USER:$PASS https://x",
        "hf_hub_download(repo_id='x') and shp_file and the do_v1_ helper",
        "the machine learning login page; redis-cli -a $REDIS_PASSWORD",
        'author: "Jane"; def auth(): return {"auth": None}',
        "<password>${env.NEXUS_PASSWORD}</password> <token></token> <keyword>abcdefgh</keyword>",
        '<input type="password"> <secretKey/> <password>pw</password>',
    ]
    assert [redaction.redact_text(text) for text in texts] == texts


RUNS = ["eyJ", "eyJ-", "AKIA", "ghp_", "glpat-", "sk_live_", "curl ", "mysql ", "redis-cli ",
        "sshpass -p ", "machine x login y ", "Authorization: Basic ", 'auth": ', "&sig=",
        "-----BEGIN RSA PRIVATE KEY-----", "xoxb-1-", "hf_", "AIza", "ya29.", "password=",
        "<password>", "<password>x", "-----END PRIVATE KEY-----", "A\n-----END RSA PRIVATE KEY-----\n",
        "A" * 64 + "\\n", "--password ", "--password '", "--db-password x", "docker login -p", "-H 'X-API-Key: ",
        "Authorization: Token ", "Authorization: 1", "DB_PASS=", "A_KEY=1", "a_a_a_KEY", "sk_test_",
        "https:\\/\\/a:", "name: DB_PASSWORD\n", "name: password, value: ", "ENV DB_PASSWORD ",
        "h:5432:d:u:", '":*:*:a:']  # fmt: skip


@pytest.mark.parametrize("unit", RUNS)
def test_a_megabyte_of_one_trigger_is_redacted_in_linear_time(unit: str) -> None:
    """Under the hang guard of tests/formats/test_hostile_text.py (10 s for 1 MB, today well
    under 1 s): detect-secrets' JWT pattern, tried at every `eyJ`, took ~30 s on 200 KB and
    minutes on 1 MB; measuring each `AKIA` match's token tail again was quadratic too."""
    from tests.formats.test_hostile_text import MB, _repeat, hang_guard

    with hang_guard():
        redaction.redact_text(_repeat(unit, MB))


def test_a_secret_quoted_by_a_failure_line_is_redacted(data_dir: Path, tmp_path: Path) -> None:
    """A reader's reason quotes the wrong value (`should be a whole number, found '...'`): a
    secret there reached stderr (a terminal, a CI log) as it was, past the redaction that every
    trajectory gets."""
    real = data_dir / "formats/claude-code/marot-spotter/short.jsonl"
    bad = tmp_path / "short.jsonl"
    key = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    bad.write_text(
        re.sub(r'"input_tokens": ?\d+', f'"input_tokens": "{key}"', real.read_text(), count=1)
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    for flags, shown in (((), False), (("--no-redact",), True)):
        command = [sys.executable, "-m", "agentlens", *flags, "inspect", str(bad)]
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 1 and "should be a whole number" in done.stderr
        assert ("AbCdEfGhIjKlMnOp" in done.stderr) is shown, done.stderr


def test_a_secret_quoted_by_an_error_line_is_redacted(data_dir: Path, tmp_path: Path) -> None:
    """Any `error:` line may quote an input (a rows CSV's cell `found '...'`): it is redacted as
    it is printed, as a trace's failure line is."""
    real = data_dir / "agentlens-bench-dev/annotations/trajectories.csv"
    lines = real.read_text().splitlines()
    header, first = lines[0].split(","), lines[1].split(",")
    first[header.index("n_states")] = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    rows = tmp_path / "rows.csv"
    rows.write_text("\n".join([lines[0], ",".join(first), *lines[2:]]) + "\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    command = [sys.executable, "-m", "agentlens", "cohort", "--rows", str(rows)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 2 and "should be a number" in done.stderr, done.stderr
    assert "AbCdEfGhIjKlMnOp" not in done.stderr and "[REDACTED:openai-key]" in done.stderr


# (quoted as tools write them, a part that must not be left once the quotes are escaped)
QUOTED = {
    "assignment": ('DB_PASSWORD="Hunter2Hunter2"', "Hunter2Hunter2"),
    "json-key": ('{"api_key": "AbCdEf123456"}', "AbCdEf123456"),
    "basic-header": ('{"Authorization": "Basic YWRtaW46c3VwZXJzZWNyZXQ="}', "YWRtaW46c3VwZXJzZWNyZXQ"),
    "docker-config": ('{"auths": {"ghcr.io": {"auth": "Ym9iOmh1bnRlcjJTZWNyZXQ="}}}', "Ym9iOmh1bnRlcjJTZWNyZXQ"),
    "kubeconfig": ('client-key-data: "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVkt"', "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVkt"),
    "curl-user": ('curl -u "admin:Pa55w0rdXyz" https://x', "Pa55w0rdXyz"),
    "mysql-password": ('mysql -uroot -p"S3cr3tMysqlPw" prod', "S3cr3tMysqlPw"),
    "sshpass": ('sshpass -p "S3cretSsh" ssh root@host', "S3cretSsh"),
    "redis-cli": ('redis-cli -a "R3disPassw0rd" ping', "R3disPassw0rd"),
    "yaml": ("db:\n  password: hunter2Yaml\n  user: bob", "hunter2Yaml"),
}  # fmt: skip


def test_a_secret_whose_quotes_a_reader_escaped_is_redacted(tmp_path: Path) -> None:
    """Found by attack: the Grok CLI reader keeps a tool's structured output as its JSON text,
    so `DB_PASSWORD="…"` in a written file's diff became `DB_PASSWORD=\\"…\\"`, which no
    pattern took: it reached judge prompts and exports whole, and so did every shape below
    that needs a quote. Planted in the real session, quoted once and (a diff of a JSON file)
    twice."""
    folder = FORMATS / "grok-cli"
    (tmp_path / "grok").mkdir()
    for sibling in ("summary.json", "signals.json"):
        (tmp_path / "grok" / sibling).write_bytes((folder / sibling).read_bytes())
    lines = [json.loads(line) for line in (folder / "updates.jsonl").read_text().splitlines()]
    result = next(
        line["params"]["update"]
        for line in lines
        if line["params"]["update"]["sessionUpdate"] == "tool_call_update"
    )
    said = "\n".join(text for text, _ in QUOTED.values())
    result["rawOutput"] = {"type": "WriteFile", "diff": said, "json": json.dumps(said)}
    updates = tmp_path / "grok" / "updates.jsonl"
    updates.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (trajectory,) = read_path(updates)
    kept = json.dumps(msgspec.to_builtins(trajectory))
    assert [kind for kind, (_, part) in QUOTED.items() if part in kept] == []


# (a line as a tool or file holds it, a part of its secret that must not be left)
WHOLE_VALUES = {
    "option-single-quoted": ("mysql --password='Tr0ub4dor&3' -h db", "Tr0ub4dor&3"),
    "option-double-quoted": ('mysql --password="Tr0ub4dor&3" -h db', "Tr0ub4dor&3"),
    "json": ('{"password": "Tr0ub4dor&3", "user": "bob"}', "Tr0ub4dor&3"),
    "json-semicolons": ('{"api_key": "abc;def,ghi jkl"}', "def,ghi jkl"),
    "yaml": ("db:\n  password: Tr0ub4dor&3\n  user: bob", "Tr0ub4dor&3"),
    "env-file": ("DB_HOST=db\nDB_PASSWORD=Tr0ub4dor&3\nDB_USER=bob", "Tr0ub4dor&3"),
}  # fmt: skip


def test_a_value_is_masked_whole_where_no_shell_ends_it_at_an_ampersand(tmp_path: Path) -> None:
    """`--password=Tr0ub4dor&3` was masked up to the `&`, and so was every quoted or non-shell
    value (`&3` left); a JSON value with a `;` or `,` in its first six characters, and a YAML
    one with an `&`, were not masked at all. In quotes, JSON, YAML and an env file the value
    is whole; unquoted on a command line a shell ends the word at `&`, and the next word (a
    command the trace shows running) stays. Planted in a real trajectory."""
    doc = json.loads((FORMATS / "mini-swe-agent-fixtures/local.traj.json").read_text())
    messages = doc["messages"] if isinstance(doc, dict) else doc
    observation = next(m for m in messages[2:] if m["role"] == "user")
    shell = "mysql --password=Tr0ub4dor&3 && echo done"
    said = "\n".join([*(text for text, _ in WHOLE_VALUES.values()), shell])
    observation["content"] = f"{observation['content']}\n{said}"
    path = tmp_path / "local.traj.json"
    path.write_text(json.dumps(doc))
    (trajectory,) = read_path(path)
    kept = json.dumps(msgspec.to_builtins(trajectory))
    assert [kind for kind, (_, part) in WHOLE_VALUES.items() if part in kept] == []
    assert "--password=[REDACTED:password]&3 && echo done" in kept


KEY_BODY = (
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n"
    "MkT8ldqAq9f1J3KvXcTUbV9zk7yK5x3Q2ZfQ8Hx1sV8mYb6v9kN2sJ3xL5rT7yQ\n"
    "Zb6v9kN2sJ3xL5rT7yQ1wE4uI8oP0aS2dF6gH9jK=="
)
# (a line as a tool shows it, a part of its secret that must not be left)
APART = {
    "option-space": ("app deploy --db-password Tr0ub4dorPw -v", "Tr0ub4dorPw"),
    "option-space-api-key": ("cli --api-key 'k3yV4lue9876' run", "k3yV4lue9876"),
    "option-space-quoted": ('app --password "c0rrect h0rse b4ttery" run', "h0rse b4ttery"),
    "docker-login-p": ("docker login -u me -p dckrPw9x7q registry.io", "dckrPw9x7q"),
    "private-token-header": ("curl -H 'PRIVATE-TOKEN: 0a1b2c3d4e5f6a7b8c9d' https://gitlab/api", "0a1b2c3d4e5f6a7b8c9d"),
    "vault-token-header": ("curl --header 'X-Vault-Token: hvs9f8e7d6c5b4a3f2e' https://x", "hvs9f8e7d6c5b4a3f2e"),
    "authorization-token": ('curl -H "Authorization: Token 0123456789abcdef0123" https://x', "0123456789abcdef0123"),
    "authorization-no-scheme": ("Authorization: lin_api_AbCdEf0123456789XyZw", "AbCdEf0123456789XyZw"),
    "azure-storage-key": ("AZURE_STORAGE_KEY=" + "Ab3+Cd4/Ef5=" * 7 + "Gh6+", "Ab3+Cd4/Ef5="),
    "service-key": ("MY_SERVICE_KEY=zq8Xk2mP9vL3nQ7w", "zq8Xk2mP9vL3nQ7w"),
    "gpg-passphrase": ("GPG_PASSPHRASE=c0rrecthorse", "c0rrecthorse"),
    "db-pass": ('DB_PASS="Tr0ub4d0r"', "Tr0ub4d0r"),
    "stripe-test": ("sk_test_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
    "stripe-restricted-test": ("rk_test_51H8abcdefghijklmnopqrstu", "51H8abcdefghijklmnopqrstu"),
    "url-escaped-slashes": ('{"repo": "https:\\/\\/ci:Pw3scaped9@git.example\\/app.git"}', "Pw3scaped9"),
    "k8s-yaml": ("env:\n  - name: DB_PASSWORD\n    value: k8sS3cretPw", "k8sS3cretPw"),
    "k8s-json": ('"env": [{"name": "API_TOKEN", "value": "k8sJs0nT0ken"}]', "k8sJs0nT0ken"),
    "dockerfile-env": ("FROM python:3.12\nENV DB_PASSWORD d0ckerS3cret\nRUN make", "d0ckerS3cret"),
    "pgpass": ("localhost:5432:appdb:alice:pgp4ssS3cret\n*:*:*:bob:pgp4ssOther", "pgp4ss"),
    "key-body-without-begin": (f"$ tail -n 4 id_rsa\n{KEY_BODY}\n-----END RSA PRIVATE KEY-----", "MkT8ldqAq9f1J3"),
}  # fmt: skip


@pytest.mark.parametrize("kind", APART)
def test_a_secret_apart_from_its_name_or_in_a_shape_no_rule_had_is_masked(kind: str) -> None:
    """Found by audit (planted under /tmp/secrets): each went through to judge prompts, exports,
    the store and the viewer as it was."""
    text, part = APART[kind]
    assert part in text
    assert part not in redaction.redact_text(text)


def test_the_new_shapes_are_masked_in_a_real_trajectory_as_read(tmp_path: Path) -> None:
    """The same lines planted in a real mini-swe-agent trajectory, as the read path masks them
    (the fast pass: its needle scan must find each), and quoted as a JSON dump of them."""
    doc = json.loads((FORMATS / "mini-swe-agent-fixtures/local.traj.json").read_text())
    messages = doc["messages"] if isinstance(doc, dict) else doc
    observation = next(m for m in messages[2:] if m["role"] == "user")
    said = "\n".join(text for text, _ in APART.values())
    observation["content"] = f"{observation['content']}\n{said}\n{json.dumps(said)}"
    path = tmp_path / "local.traj.json"
    path.write_text(json.dumps(doc))
    (trajectory,) = read_path(path)
    kept = json.dumps(msgspec.to_builtins(trajectory))
    assert [kind for kind, (_, part) in APART.items() if part in kept] == []


ORDINARY = [
    "docker login -u me --password-stdin < pw.txt; mysql --password-file /etc/pw db",
    'app --token ${TOKEN} --api-key "$KEY" --password -v --pass-through on --token-count 5',
    "docker run -p 8080:80 img; docker login -u me -p $PASSWORD reg",
    "The Authorization header carries the token. Authorization: required for all endpoints",
    "curl -H 'Content-Type: application/json' -H 'X-Auth-Token: $TOKEN' https://x",
    "- name: DB_HOST\n  value: db.internal\n- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:",
    "name: my-app\nversion: 1.2.3\nname: token-service\nreplicas: 3",
    'password = os.environ["DB_PASS"]; key = os.getenv("DB_PASS"); DB_PASS=$DB_PASS',
    "PRIMARY_KEY=id\nSORT_KEY=created_at_desc\nSTRIPE_PUBLISHABLE_KEY=pk_live_0123456789abcdefg",
    "SSH_KEY=~/.ssh/id_rsa SSH_KEY=/home/me/.ssh/id_rsa_2048",
    "mask_test_123456789012345678901234 and pk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "see https:\\/\\/example.com\\/x and http:\\/\\/host:8080\\/",
    "src/app.py:5432:1: E501 line too long\n12:34:56:78:90\nlocalhost:5432:db",
    'PEM_END = b"-----END PRIVATE KEY-----"\nDone\n-----END RSA PRIVATE KEY-----',
    "ENV PATH /usr/local/bin\nENV TOKEN_TTL 3600\nENV KEY_ID 7",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_text_near_the_new_shapes_is_kept(text: str) -> None:
    """Options that name a file or read stdin, variables, prose, non-secret names and values,
    public keys, paths, line numbers and a PEM marker in code are no secret."""
    assert redaction.redact_text(text) == text
