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
        "<password>", "<password>x"]  # fmt: skip


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
