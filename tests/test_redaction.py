"""Secrets planted in copies of real trajectories never leave AgentLens: not in the judge's
prompt, the viewer's payload, the HTML report, an ATIF export or the store's rows (the one
redaction pass of `agentlens.redaction`, on the read path). `--no-redact` keeps them (so the
check can fail)."""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from agentlens import redaction
from agentlens.formats.load import read_path
from agentlens.reviews.judge.compact import _clip, compact
from agentlens.reviews.judge.prompt import ReviewContext, build_messages
from agentlens.reviews.sxs.prompt import TASK_CHARS
from agentlens.reviews.sxs.prompt import build_messages as build_sxs_messages
from agentlens.store import open_store
from agentlens.trajectory import Trajectory
from agentlens.viewer.payload import PREVIEW_CHARS, trajectory_dict
from tests.conftest import DATA, FORMATS
from tests.secret_at_cut import (
    INTO,
    KEY,
    LEAD,
    kept_part_of_key,
    key_at_head_cut,
    key_at_tail_cut,
    real_text,
)

PLANTED = {
    "openai": "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "github": "ghp_1234567890abcdefghijABCDEFGHIJ123456",
    "slack": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "private-key": "MIIEowIBAAKCAQEAx4UbaDzY5ExAmPlEoNlY",
    "password": "hunter2-Corr3ct-Horse",
    "stripe": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "gitlab": "glpat-xYz12345678901234567890",
    "bearer": "Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4",
}
PLANTED_TEXT = f"""env shows OPENAI_API_KEY={PLANTED["openai"]} and aws {PLANTED["aws"]}
git push https://{PLANTED["github"]}@github.com/o/r and SLACK={PLANTED["slack"]}
-----BEGIN RSA PRIVATE KEY-----
{PLANTED["private-key"]}
-----END RSA PRIVATE KEY-----
mysql -u root --password={PLANTED["password"]} ; stripe {PLANTED["stripe"]}
token {PLANTED["jwt"]} gitlab {PLANTED["gitlab"]}
curl -H "Authorization: Bearer {PLANTED["bearer"]}" https://api.example.com"""
SOURCES = [
    "mini-swe-agent-fixtures/local.traj.json",
    "mini-swe-agent-fixtures/github_issue.traj.json",
]


@pytest.fixture
def planted(data_dir: Path, tmp_path: Path) -> list[Path]:
    """Copies of real mini-swe-agent trajectories with the secrets in an observation."""
    paths = []
    for source in SOURCES:
        doc = json.loads((data_dir / "formats" / source).read_text())
        messages = doc["messages"] if isinstance(doc, dict) else doc
        observation = next(m for m in messages[2:] if m["role"] == "user")
        observation["content"] = f"{observation['content']}\n{PLANTED_TEXT}"
        path = tmp_path / Path(source).name
        path.write_text(json.dumps(doc))
        paths.append(path)
    return paths


def leaked(text: str) -> list[str]:
    return [kind for kind, secret in PLANTED.items() if secret in text]


def cli(tmp_path: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src"),
           "AGENTLENS_STORE": str(tmp_path / "store.db")}  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "agentlens", *args], capture_output=True,
                          text=True, env=env, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def exported_and_stored(tmp_path: Path, paths: list[Path], *flags: str) -> dict[str, str]:
    """What leaves through the CLI: an ATIF export, the store's rows, the HTML report."""
    files = [str(p) for p in paths]
    cli(tmp_path, *flags, "convert", *files, "--to", "atif", "-o", str(tmp_path / "atif"))
    cli(tmp_path, *flags, "store", "import", *files)
    cli(tmp_path, *flags, "report", "--kind", "import", "-o", str(tmp_path / "report.html"))
    with sqlite3.connect(tmp_path / "store.db") as db:
        tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
        rows = [repr(row) for t in tables for row in db.execute(f'select * from "{t}"')]
    with open_store(str(tmp_path / "store.db"), create=False) as store:  # the blobs, unpacked
        rows += [
            msgspec.json.encode(t).decode()
            for r in store.runs()
            for t in store.run_trajectories(r.id)
        ]
    atif = "".join(p.read_text() for p in (tmp_path / "atif").rglob("*") if p.is_file())
    return {
        "export": atif,
        "store": "\n".join(rows),
        "report": (tmp_path / "report.html").read_text(),
    }


def test_planted_secrets_of_ten_kinds_leave_through_nothing(
    planted: list[Path], tmp_path: Path
) -> None:
    assert all(leaked(p.read_text()) == list(PLANTED) for p in planted)  # all planted
    outputs = exported_and_stored(tmp_path, planted)
    for path in planted:
        (traj,) = read_path(path)
        messages = build_messages(traj, "EndResult", compact(traj, 6000), ReviewContext())
        outputs[f"judge prompt {path.name}"] = json.dumps(messages)
        payload = trajectory_dict("d", traj, "paper", limit=10_000)
        outputs[f"viewer payload {path.name}"] = json.dumps(payload)
    found = {where: leaked(text) for where, text in outputs.items()}
    print(json.dumps({"kinds": len(PLANTED), "leaks": found}))
    assert found == {where: [] for where in outputs}
    assert "[REDACTED:private-key]" in outputs["export"] and "[REDACTED:" in outputs["store"]


def test_no_redact_keeps_them(planted: list[Path], tmp_path: Path) -> None:
    outputs = exported_and_stored(tmp_path, planted, "--no-redact")
    assert leaked(outputs["export"]) == list(PLANTED) and leaked(outputs["store"])


def test_real_code_keeps_its_words() -> None:
    """Source code that names tokens and passwords is evidence, not a secret."""
    code = 'token: string;\nconst csrfToken = document.querySelector("meta");\npassword = getpass()'
    assert redaction.redact_text(code) == code


def reference(trajectory: Trajectory) -> Trajectory:
    """The pass before the prefilter: `redact_text` on every string of the trajectory."""
    plain = msgspec.to_builtins(trajectory)
    cleaned = redaction.redact_walk(plain)
    return trajectory if cleaned == plain else msgspec.convert(cleaned, Trajectory)


def test_the_fast_pass_redacts_real_traces_as_the_reference_does(
    data_dir: Path, planted: list[Path]
) -> None:
    """Real files, among them the seven with secrets of their own (`benchmarks/redaction.py
    --check` runs this over all of ../shared/data)."""
    paths = [
        *planted,
        *(data_dir / "agentlens-bench-dev" / "trajectories" / "django__django-11066").glob("*"),
        data_dir / "formats" / "gemini-cli-jsonl" / "session.jsonl",
        *sorted((data_dir / "swe-agent-java").rglob("googlecontainertools__jib-4035.traj")),
    ]
    redaction.set_enabled(False)
    try:
        trajectories = [t for p in paths if p.suffix for t in read_path(p)]
    finally:
        redaction.set_enabled(None)
    redacted = 0
    for trajectory in trajectories:
        fast = redaction.redact_trajectory(trajectory)
        assert msgspec.json.encode(fast) == msgspec.json.encode(reference(trajectory))
        redacted += fast is not trajectory
    assert len(trajectories) >= 10 and redacted >= 10


TRICKY = ['"', "\\", '\\"', "\n", "\t", " ", "=", ":", "é", "İ", "ı", "ſ", "K", "x" * 7, "@",
          "://", "token", "PASS", "Key", "sk-", "AKIA", "BEGIN", "eyJ", "-us", "gl", "abc123",
          "_tokens", "passk-", "keyxox", "tokens", "npm_", "ToKeN", "sk_live_", ">", "</"]  # fmt: skip
SECRETS = [*PLANTED.values(), "passwd=s3cr3tvalue", "paſsword = 'hunter2hunter2'",
           "\u212aey: 'abcdefgh12'", "https://user:pw123456@host", "SG.abcdefghijklmnopqrstuv",
           'ibm_cloud_iam_key = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEF"',
           "IBM-COS-secret_access_key='0123456789abcdef0123456789abcdef01234567'",
           'cloudant_api_password: "abcdefghijklmnopqrstuvwxyz0123456789"',
           "softlayer_api_key = 'abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123'",
           "aws_secret_token = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789/+ab'",
           "AccountKey=" + "a" * 88, "//registry.npmjs.org/:_authToken=npm_abc123",
           "xoxp-1234-5678-abcdef", "sq0csp-" + "a" * 43, "<db_PaSsword>hunter2hunter2</db_PaSsword>",
           "<ſecret>abcdefgh12</ſecret>", "--db-paſsword hunter22", "docker login -p hunter22",
           "-H 'PRIVATE-TOKEN: abcdef123456'", "Authorization: Token abcdef12345678",
           "DB_PASS=hunter22", "AZURE_\u212aEY=abcdefghij0123456789", "sk_test_" + "a1" * 12,
           "https:\\/\\/ci:pw12@h", "name: DB_PASSWORD\n  value: hunter22",
           '{"name": "API_TOKEN", "value": "hunter22"}', "ENV DB_PASSWORD hunter22",
           "h:5432:d:u:hunter22", "*:*:*:u:hunter22", "A" * 64 + "\n-----END EC PRIVATE KEY-----"]  # fmt: skip


def test_the_needle_prefilter_misses_no_string_the_reference_redacts() -> None:
    """Random JSON values built from quotes, escapes, Unicode case look-alikes and secret shapes:
    the one-scan pass must equal `redact_text` on every string (keys included)."""
    rng = random.Random(23)

    def text() -> str:
        parts = rng.choices(TRICKY, k=rng.randint(0, 12)) + rng.sample(SECRETS, rng.randint(0, 2))
        rng.shuffle(parts)
        return "".join(parts)

    changed = 0
    for _ in range(3000):
        value = {text(): [text(), {text(): text(), "n": 1}], "s": text()}
        fast, slow = redaction.redact_value(value), redaction.redact_walk(value)
        assert fast == slow, value
        changed += fast != value
    assert changed > 500  # the secrets were there to find


STARTS = ["sk-", "sk_live_", "rk_live_", "AKIA", "ASIA", "ABIA", "ACCA", "ghp_", "gho_", "ghs_",
          "github_pat_", "xoxb-", "BEGIN", "BeArEr ", "eyJ", "PaSs", "pwd", "SECRET", "Token", "KEY",
          "SG.", "pypi-", "glpat-", "gl", "GR1348941", "://", "sq0csp", "npm_", "hooks.slack",
          "-us", "-us1", "ı", "İ", "ſ", "K", "=", ":", "'", " ", "x" * 5, "1", "@", "-", "é", ">",
          "-----END ", "sk_test", "rk_test", "docker login", "Podman\tlogin", "ENV ", "env ", "https:",
          "\\/", "ftp:", "postgresql:", "mongodb+srv:", "--password", "-PASSWD", "-api", "-client",
          "-ſecret", "\t", "\n", ",", "value", "VALUE", ":5432:", ":6432:", ":*:", "*"]  # fmt: skip


def test_the_trigger_tried_at_needles_answers_as_the_whole_search() -> None:
    """`_triggered` tries `_TRIGGER` only where a needle starts (overlapping ones too, as in
    `-usk-`): on random texts of every alternative's start, case and look-alike, it answers as
    `_TRIGGER.search` over the whole text does."""
    rng = random.Random(5)
    answers = []
    for _ in range(20000):
        text = "".join(rng.choices(STARTS, k=rng.randint(0, 8)))
        answers.append(redaction._triggered(text))
        assert answers[-1] == bool(redaction._TRIGGER.search(text)), text
    assert 2000 < sum(answers) < 18000  # both answers were tested


def test_a_secret_overlapping_a_passed_over_needle_is_still_found() -> None:
    """`key`/`pass` with no `:`/`=` after them are passed over; a needle overlapping them
    (`k|eyJ`, `pas|sk_live_`) is still looked at on its own."""
    for text in ("k" + PLANTED["jwt"], "pas" + PLANTED["stripe"], "x-tokens " + PLANTED["aws"]):
        value = {"note": text, text: 1}
        assert redaction.redact_value(value) == redaction.redact_walk(value) != value


def test_a_pattern_runs_only_where_the_long_run_it_needs_is() -> None:
    """`required_run` finds a run of one class that no match can skip, with the pattern's flags
    (of a branch, one every alternative holds), and none inside a branch with an alternative
    that holds none, an optional part or a group that changes the flags."""
    import re

    run = redaction.required_run
    assert run(re.compile(r"key=([a-z0-9]{20}+)")).pattern == "[a-z0-9]{20}"  # type: ignore[union-attr]
    assert run(re.compile(r"(?i)x[a-f]{16,}")).flags & re.IGNORECASE  # type: ignore[union-attr]
    branches = run(re.compile(r"x(?:[a-z]{20}|[0-9]{30})"))  # each alternative holds one
    assert branches is not None and branches.pattern == "[a-z0-9]{20}"
    for none in (r"(?:a|[a-z]{20})", r"(?:[a-z]{20})?", r"(?i:[a-z]{20})", r"\w{20}", r"[a-z]{15}"):
        assert run(re.compile(none)) is None, none
    for kind, pattern, _, needed in redaction._patterns():
        for secret in SECRETS:
            if needed is not None and pattern.search(secret):
                assert needed.search(secret), (kind, secret)


def test_a_long_run_found_by_byte_translation_is_the_one_re_finds() -> None:
    """On an ASCII text `_has_run` maps bytes to class members instead of running `re`: on
    random texts of members, near-members and other characters, for every run the patterns
    need (with their flags: `(?i)` classes take both cases), it answers as `run.search`."""
    rng = random.Random(11)
    runs = {run for *_, run in redaction._patterns() if run is not None}
    soup = ["a", "Z", "0", "f", "_", "-", "+", "/", "=", " ", "\n", ".", "G", "x" * 20, "9" * 30]
    answers = []
    for run in runs:
        for _ in range(300):
            text = "".join(rng.choices(soup, k=rng.randint(0, 12)))
            answers.append(redaction._has_run(run, text, text.encode()))
            assert answers[-1] == (run.search(text) is not None), (run.pattern, text)
    assert 0 < sum(answers) < len(answers)


def test_no_part_of_a_jwt_or_a_url_password_is_left() -> None:
    """A JWT's signature goes with it; a URL password with RFC 3986 sub-delimiters (`!$&'()*+,;=`)
    or an empty user name (`redis://:pw@host`) is masked whole; a variable stays."""
    jwt = PLANTED["jwt"]
    texts = {
        f"cookie {jwt} end": "cookie [REDACTED:json-web-token] end",
        "redis://:r3d1sPass99@cache:6379/0": "redis://:[REDACTED:basic-auth-credentials]@cache:6379/0",
        "postgres://admin:Secr3t!2024@db:5432/app": "postgres://admin:[REDACTED:basic-auth-credentials]@db:5432/app",
        "mysql://root:pa$$w0rd+x=1@localhost/db": "mysql://root:[REDACTED:basic-auth-credentials]@localhost/db",
        "https://oauth2:${GITLAB_TOKEN}@gitlab.com/o/r.git": "https://oauth2:${GITLAB_TOKEN}@gitlab.com/o/r.git",
        "see http://host:8080/path and a@b.c": "see http://host:8080/path and a@b.c",
    }  # fmt: skip
    assert {text: redaction.redact_text(text) for text in texts} == texts


def test_a_yaml_password_is_masked_and_a_type_annotation_is_not() -> None:
    """`key: value` alone on its line (YAML, docker-compose, Spring properties, a login shown in
    a task) is an assignment; a type name after the colon is code."""
    texts = {
        "    environment:\n      POSTGRES_PASSWORD: mysecretpassword\n":
            "    environment:\n      POSTGRES_PASSWORD: [REDACTED:password]\n",
        "spring.datasource.password: Sup3rS3cret": "spring.datasource.password: [REDACTED:password]",
        "Username: theagentcompany\nPassword: theagentcompany":
            "Username: theagentcompany\nPassword: [REDACTED:password]",
        "  api_key: SecretStr\n  token: Optional[str] = None\n  password: string\n":
            "  api_key: SecretStr\n  token: Optional[str] = None\n  password: string\n",
        "secret_key: ${SECRET_KEY}\nauth_token: <your token>": "secret_key: ${SECRET_KEY}\nauth_token: <your token>",
    }  # fmt: skip
    assert {text: redaction.redact_text(text) for text in texts} == texts


def test_a_yaml_password_is_masked_behind_the_line_prefix_a_tool_printed() -> None:
    """Agents see config files through tools that put something before each line: `cat -n`
    and OpenHands' view (`     4\\t`), Claude Code's Read (`     4→`), SWE-agent's `open`
    (`4:`), `grep -rn` (`config/database.yml:4:`), a diff (`+`, `-`). Each used to keep the
    password, and `review --repo` sent the diff's to the judge."""
    texts = {
        "     4\t  password: Tr0ub4dorCat": "     4\t  password: [REDACTED:password]",
        "     4→  password: Tr0ub4dorRead": "     4→  password: [REDACTED:password]",
        "4:  password: Tr0ub4dorOpen": "4:  password: [REDACTED:password]",
        "config/database.yml:4:  password: Tr0ub4dorGrep":
            "config/database.yml:4:  password: [REDACTED:password]",
        "+  password: Tr0ub4dorNew\n-  password: Tr0ub4dorOld":
            "+  password: [REDACTED:password]\n-  password: [REDACTED:password]",
        "+  POSTGRES_PASSWORD: Tr0ub4dorCompose": "+  POSTGRES_PASSWORD: [REDACTED:password]",
        "+  api_key: SecretStr\n     4→  token: string\n--password: is an option":
            "+  api_key: SecretStr\n     4→  token: string\n--password: is an option",
    }  # fmt: skip
    assert {text: redaction.redact_text(text) for text in texts} == texts


def test_a_secret_a_tool_call_passes_by_its_key_is_masked(tmp_path: Path) -> None:
    """A tool call's arguments are an object in Claude Code (`input`), Gemini CLI, OpenHands,
    ATIF and Inspect: `{"password": "..."}` to a database or login tool. The value says nothing
    of itself, only its key does, and each string was redacted alone: the password reached the
    judge's prompt and every export. A value under a key that names a secret is masked as the
    text `"key": "value"` is; a variable or a type under it is not."""
    lines = (FORMATS / "claude-code/marot-spotter/tool_heavy.jsonl").read_text().splitlines()
    docs = [json.loads(line) for line in lines]
    call = next(
        part for doc in docs if isinstance(doc.get("message"), dict)
        for part in doc["message"].get("content") or [] if isinstance(part, dict)
        and part.get("type") == "tool_use"
    )  # fmt: skip
    call["name"] = "mcp__postgres__connect"
    call["input"] = {"host": "db.internal", "user": "app", "password": "Hunter2-Corr3ct",
                     "DB": {"API_KEY": "k3y-V4lue-9x"}, "token": "${TOKEN}"}  # fmt: skip
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(map(json.dumps, docs)) + "\n")
    (trajectory,) = read_path(path)
    step = next(s for s in trajectory.steps if s.tool_name == "mcp__postgres__connect")
    assert step.arguments == {
        "host": "db.internal", "user": "app", "password": "[REDACTED:password]",
        "DB": {"API_KEY": "[REDACTED:password]"}, "token": "${TOKEN}",
    }  # fmt: skip
    assert "Hunter2-Corr3ct" not in msgspec.json.encode(trajectory).decode()
    redaction.set_enabled(False)
    try:
        (kept,) = read_path(path)
    finally:
        redaction.set_enabled(None)
    assert msgspec.json.encode(reference(kept)) == msgspec.json.encode(trajectory)


def test_a_string_of_many_passed_over_needles_is_read_in_linear_time() -> None:
    """Found by attack: for each `key` with no `:` or `=` after it, the rest of its string was
    read to see whether one follows; a real Copilot CLI session whose tool result repeats an
    ssh line (`no host key found`) 4000 times took 6 s to redact, 16x the time of 1000 lines."""
    redaction.set_enabled(False)
    try:
        (real,) = read_path(FORMATS / "copilot-cli" / "events.jsonl")
    finally:
        redaction.set_enabled(None)
    step = next(s for s in real.steps if s.observation)

    def seconds(count: int) -> float:
        said = "no host key found for this server\n" * count + PLANTED["aws"]
        planted = msgspec.structs.replace(step, observation=said)
        trajectory = msgspec.structs.replace(
            real, steps=[planted if s is step else s for s in real.steps]
        )
        runs = []
        for _ in range(2):
            redaction._redact_cached.cache_clear()
            start = time.process_time()
            redacted = redaction.redact_trajectory(trajectory)
            runs.append(time.process_time() - start)
        assert msgspec.to_builtins(redacted) == redaction.redact_walk(
            msgspec.to_builtins(trajectory)
        )
        assert PLANTED["aws"] not in str(msgspec.to_builtins(redacted))
        return min(runs)

    ratio = seconds(8000) / seconds(2000)
    assert ratio < 8, f"4x the lines took {ratio:.1f}x the time (linear: 4, quadratic: 16)"


def _marks_whole(text: str) -> bool:
    """Every `[REDACTED` in `text` is a whole mark."""
    opened = text.count("[REDACTED")
    return opened == len(re.findall(r"\[REDACTED(?::[a-z0-9-]+)?\]", text))


def test_a_cut_never_splits_a_redaction_mark() -> None:
    line = "export OPENAI_API_KEY=sk-" + "a1B2" * 10 + " and AKIA" + "Q" * 16 + " done"
    text = redaction.redact_text(line)
    assert text.count("[REDACTED:") == 2
    for n in range(len(text) + 2):
        head, tail = redaction.clip_head(text, n), redaction.clip_tail(text, n)
        assert _marks_whole(head) and _marks_whole(tail), n
        assert text.startswith(head) and text.endswith(tail)
        assert len(head) >= min(n, len(text)) and len(tail) >= min(max(n, 0), len(text))


def test_the_judge_prompt_clips_around_a_mark_it_would_split() -> None:
    """The judge's step clip (`compact._clip`) cut `[REDACTED:openai-key]` in half when the cut
    fell inside it; now the mark is kept whole on either side."""
    for pad in range(0, 80):
        text = redaction.redact_text(
            "x" * pad + " sk-" + "a1B2" * 10 + " " + "y" * 200 + " sk-" + "c3D4" * 10
        )
        clipped = _clip(text, 90)
        assert _marks_whole(clipped), (pad, clipped)


def test_masked_head_and_tail_mask_a_secret_their_cut_falls_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Real command output with a key where the cut falls: masked first, the key is a whole mark
    on the kept side; a password whose `password=` the tail cut took is masked too."""
    text = key_at_head_cut(10_000)
    assert text[:10_000].endswith(f"{LEAD}{KEY[:INTO]}")  # what a plain cut would keep
    head = redaction.masked_head(text, 10_000)
    assert head.endswith(f"{LEAD}[REDACTED:openai-key]") and kept_part_of_key(head) == []
    tail = redaction.masked_tail(key_at_tail_cut(2000), 2000)
    assert "was [REDACTED:openai-key]\n" in tail and kept_part_of_key(tail) == []
    line = "export DB_PASSWORD=Corr3ct-Horse-Battery\n"
    logged = real_text(3000) + line + real_text(1000)
    tail = redaction.masked_tail(logged, 1000 + len(line) - 19)  # from `Corr3ct-...`
    assert tail.endswith(f"[REDACTED:password]\n{real_text(1000)}") and "Horse" not in tail
    whole = real_text(500)
    assert redaction.masked_head(whole, 500) == whole == redaction.masked_tail(whole, 600)
    assert redaction.masked_tail(whole, 0) == ""
    monkeypatch.setenv("AGENTLENS_NO_REDACT", "1")
    assert redaction.masked_head(text, 10_000) == text[:10_000]


def test_masked_head_finds_a_key_that_starts_within_the_margin_before_its_window() -> None:
    """Only `CUT_MARGIN` past the cut is masked: a key starting before the cut and ending inside
    that margin is found whole; one starting past the margin is cut away unseen."""
    limit = 5000
    near = real_text(limit - 4) + " " + KEY + real_text(redaction.CUT_MARGIN * 2)
    assert redaction.masked_head(near, limit).endswith("[REDACTED:openai-key]")
    far = real_text(limit + redaction.CUT_MARGIN - 4) + " " + KEY
    assert redaction.masked_head(far, limit) == far[:limit]


def test_the_sxs_task_and_the_viewer_preview_keep_a_mark_whole() -> None:
    """Text read is masked; the side-by-side judge's task (1200 characters) and the viewer's
    long fields (`PREVIEW_CHARS`) then cut it with a plain slice, `[REDACTED:openai-k`."""
    (traj,) = read_path(next((DATA / "mini-swe-agent-swebv" / "trajs").rglob("*.traj.json")))
    for limit in (TASK_CHARS, PREVIEW_CHARS):
        text = redaction.redact_text(key_at_head_cut(limit, after=limit))
        step = msgspec.structs.replace(traj.steps[-1], observation=text)
        shown = msgspec.structs.replace(traj, task=text, steps=[*traj.steps[:-1], step])
        (_, user) = build_sxs_messages("ToolCalls", shown, shown, None, None, budget_tokens=4000)
        preview = trajectory_dict("d", shown, "paper", limit=10_000)["steps"][-1]["observation"]
        assert f"{LEAD}[REDACTED:openai-key]" in (
            user["content"] if limit == TASK_CHARS else preview
        )
        assert _marks_whole(user["content"]) and _marks_whole(preview), limit


@pytest.mark.parametrize(
    ("secret", "kind"),
    [  # each token shape of ours at the shortest length its pattern takes
        ("sk-" + "a1" * 8, "openai-key"),
        ("AKIA" + "ABCDEFGHIJ234567", "aws-key"),
        ("ghp_" + "a1" * 10, "github-token"),
        ("xoxb-" + "1" * 10, "slack-token"),
        ("hf_" + "a1" * 15, "huggingface-token"),
        ("AIza" + "a1" * 17 + "b", "google-api-key"),
        ("ya29." + "a1" * 10, "google-oauth-token"),
        ("npm_" + "a1" * 18, "npm-token"),
        ("dckr_pat_" + "a1" * 10, "docker-token"),
        ("dop_v1_" + "a1" * 32, "digitalocean-token"),
        ("shpat_" + "a1" * 16, "shopify-token"),
    ],
)
def test_each_token_shape_is_masked_from_its_shortest_length(secret: str, kind: str) -> None:
    """A pattern narrowed from `{16,}` to `{20,}` let 16- to 19-character keys through and no
    test noticed: each shape's shortest length is pinned here, with the kind its mark names."""
    masked = redaction.redact_text(f"found {secret} in the log")
    assert masked == f"found [REDACTED:{kind}] in the log"


def test_a_name_going_on_for_40_characters_past_its_secret_word_is_still_masked() -> None:
    """The patterns take 40 name characters after `password`, but the trigger counted 40 from
    the `pass` it starts at: a name 37 to 40 characters past the word passed untried."""
    for tail in ("X" * 36, "X" * 40):
        assert redaction.redact_text(f"DB_PASSWORD_{tail[1:]}=hunter2hunter2").endswith(
            "=[REDACTED:password]"
        )
        assert (
            redaction.redact_text(f"<password{tail}>hunter2hunter2</password{tail}>").count(
                "hunter2"
            )
            == 0
        )
