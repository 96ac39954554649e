"""Secrets that lose their context: a word a reader cut from a masked command (its `files`, an
argv list), a value beside its name in an object (`{"name": "DB_PASSWORD", "value": …}`), and a
Kubernetes `Secret`'s values, which say nothing of themselves (base64)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentlens import redaction
from agentlens.formats.load import read_path
from tests.conftest import FORMATS

SECRET = "s3cr3tDbPw9"


def _both(value: Any) -> Any:
    fast, slow = redaction.redact_value(value), redaction.redact_walk(value)
    assert fast == slow
    return fast


def _copilot_run_with(command: str, tmp_path: Path) -> Path:
    """A copy of the real Copilot CLI log, its first `bash` call running `command`."""
    lines = (FORMATS / "copilot-cli" / "events.jsonl").read_text().splitlines()
    for at, line in enumerate(lines):
        event = json.loads(line)
        calls = event.get("data", {}).get("toolRequests") or []
        shell = next((call for call in calls if call.get("name") == "bash"), None)
        if shell is not None:
            shell["arguments"]["command"] = command
            lines[at] = json.dumps(event)
            break
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_secret_the_shell_analysis_took_for_a_file_is_masked(tmp_path: Path) -> None:
    command = f"cat ENV DB_PASSWORD {SECRET}"
    trajectory = read_path(_copilot_run_with(command, tmp_path))[0]
    step = next(step for step in trajectory.steps if step.command and "ENV" in step.command)
    assert SECRET not in msgspec.json.encode(trajectory).decode()
    assert step.files == ["ENV", "DB_PASSWORD", "[REDACTED:in-context]"]


def test_a_secret_in_an_argv_list_is_masked_as_its_command_is() -> None:
    argv = ["docker", "login", "-u", "me", "-p", SECRET]
    raw = {"type": "local_shell_call", "action": {"command": argv}}
    step = {"command": " ".join(argv), "arguments": {"command": argv}, "raw": raw}
    cleaned = _both(step)
    assert cleaned["command"] == "docker login -u me -p [REDACTED:password]"
    for kept in (cleaned["arguments"]["command"], cleaned["raw"]["action"]["command"]):
        assert kept == [*argv[:-1], "[REDACTED:in-context]"]


def test_files_of_a_call_with_nothing_secret_are_kept() -> None:
    step = {"command": "cat ENV TOKEN_TTL 3600", "files": ["ENV", "TOKEN_TTL", "3600"]}
    assert _both(step) == step
    command = "cat a.py b.py && curl -u me:Pa55w0rdXyz https://h"
    with_secret = {"command": command, "files": ["a.py", "b.py"]}
    assert _both(with_secret)["files"] == ["a.py", "b.py"]


@pytest.mark.parametrize(
    "entry",
    [
        {"name": "DB_PASSWORD", "value": SECRET},
        {"value": SECRET, "name": "API_TOKEN"},
        {"name": "client_secret", "value": SECRET, "type": "env"},
    ],
)
def test_a_value_named_by_its_name_key_is_masked(entry: dict[str, str]) -> None:
    cleaned = _both({"env": [entry]})
    assert cleaned["env"][0]["value"] == "[REDACTED:password]"
    assert cleaned["env"][0]["name"] == entry["name"]


@pytest.mark.parametrize(
    "entry",
    [
        {"name": "DB_HOST", "value": "db.example.internal"},
        {"name": "DB_PASSWORD", "value": "${DB_PASSWORD}"},
        {"name": "token_ttl_seconds_total", "value": 3600},
        {"label": "DB_PASSWORD", "value": "unrelated"},
    ],
)
def test_a_value_beside_an_ordinary_name_is_kept(entry: dict[str, Any]) -> None:
    assert _both({"env": [entry]}) == {"env": [entry]}


def test_an_env_object_in_a_trajectory_is_masked(tmp_path: Path) -> None:
    trajectory = read_path(_copilot_run_with("kubectl apply -f pod.yaml", tmp_path))[0]
    step = next(step for step in trajectory.steps if step.command)
    step.arguments["env"] = [{"name": "DB_PASSWORD", "value": SECRET}]
    cleaned = redaction.redact_trajectory(trajectory)
    assert SECRET not in msgspec.json.encode(cleaned).decode()


KUBECTL_SECRET = """apiVersion: v1
data:
  password: czNjcjN0RGJQdzk=
  tls.key: LS0tLS1CRUdJTiBQUklW
kind: Secret
metadata:
  name: db
type: Opaque
"""
STRING_DATA = f"""apiVersion: v1
kind: Secret
metadata:
  name: app
stringData:
  config.ini: |
    user=admin
    pw={SECRET}
  host: db.example
"""


def test_each_value_of_a_kubernetes_secret_is_masked_whole() -> None:
    cleaned = _both(KUBECTL_SECRET)
    assert "czNjcjN0RGJQdzk" not in cleaned and "LS0tLS1CRUdJTiBQUklW" not in cleaned
    assert "  password: [REDACTED:kube-data]\n  tls.key: [REDACTED:kube-data]\n" in cleaned
    assert "  name: db\ntype: Opaque\n" in cleaned
    masked = _both(STRING_DATA)
    assert SECRET not in masked and "user=admin" not in masked
    assert masked.endswith("config.ini: [REDACTED:kube-data]\n  host: [REDACTED:kube-data]\n")


def test_only_the_secret_document_of_a_stream_is_masked() -> None:
    stream = "kind: ConfigMap\ndata:\n  host: db.example\n---\n" + KUBECTL_SECRET
    cleaned = _both(stream)
    assert cleaned.startswith("kind: ConfigMap\ndata:\n  host: db.example\n---\n")
    assert "czNjcjN0RGJQdzk" not in cleaned


@pytest.mark.parametrize(
    "text",
    [
        KUBECTL_SECRET.replace("kind: Secret", "kind: ConfigMap").replace("password:", "host:"),
        "The Secret: data under it is base64, not encrypted.\ndata:\n  a: b\n",
        "kind: SecretProviderClass\ndata:\n  a: b\n",
    ],
)
def test_data_outside_a_kubernetes_secret_is_kept(text: str) -> None:
    assert _both(text) == text
