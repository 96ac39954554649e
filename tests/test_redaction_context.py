"""Secrets that lose their context: a word a reader cut from a masked command (its `files`, an
argv list), a value beside its name in an object (`{"name": "DB_PASSWORD", "value": …}`), and a
Kubernetes `Secret`'s values, which say nothing of themselves (base64)."""

from __future__ import annotations

from typing import Any

import pytest

from agentlens import redaction

SECRET = "s3cr3tDbPw9"


def _both(value: Any) -> Any:
    fast, slow = redaction.redact_value(value), redaction.redact_walk(value)
    assert fast == slow
    return fast


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
