"""The viewer against a hostile user: query numbers Python's `int` refuses, record positions past
64 bits, Host names on other loopback addresses, and paging through a run of 20,000 steps."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import msgspec
import pytest
from starlette.testclient import TestClient

import agentlens
from agentlens.process.labeler import label_trajectory
from agentlens.store import Run, digest, open_store
from agentlens.store.records import import_records
from agentlens.viewer import create_app
from agentlens.viewer.serve import allowed_hosts
from tests.viewer.conftest import HUNDRED_STEPS, Built
from tests.viewer.server import free_port


@pytest.fixture
def client(built: Built) -> Iterator[TestClient]:
    with TestClient(create_app(str(built.path)), base_url="http://127.0.0.1") as opened:
        yield opened


@pytest.mark.parametrize("value", ["²", "١٢", "9" * 5000], ids=["superscript", "arabic", "long"])
@pytest.mark.parametrize("name", ["offset", "limit"])
@pytest.mark.parametrize("path", ["runs/{score}", "trajectories/{hundred}", "trajectories"])
def test_numbers_int_refuses_are_400(
    client: TestClient, built: Built, path: str, name: str, value: str
) -> None:
    url = "/api/" + path.format(score=built.score_run, hundred=built.hundred)
    response = client.get(url, params={name: value})
    assert response.status_code == 400, response.text
    assert "whole number" in response.json()["error"]


def test_leading_zeros_are_still_a_number(client: TestClient, built: Built) -> None:
    response = client.get(f"/api/runs/{built.score_run}", params={"offset": "0" * 30 + "1"})
    assert response.status_code == 200 and response.json()["offset"] == 1


@pytest.mark.parametrize("position", [2**63, 10**30])
def test_a_record_position_past_64_bits_is_404(
    client: TestClient, built: Built, position: int
) -> None:
    response = client.get(f"/api/runs/{built.score_run}/records/{position}")
    assert response.status_code == 404, response.text
    assert f"has no record {position}" in response.json()["error"]


def test_on_another_loopback_address_other_host_names_are_refused(built: Built) -> None:
    port = free_port()
    command = [sys.executable, "-m", "agentlens", "view", "--store", str(built.path)]
    process = subprocess.Popen(
        [*command, "--host", "127.0.0.2", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    url = f"http://127.0.0.2:{port}/api/runs"
    try:
        for _ in range(300):
            try:
                if httpx.get(url, timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        rebound = httpx.get(url, headers={"host": f"attacker.example:{port}"})
        assert rebound.status_code == 400, rebound.text
        assert httpx.get(url, headers={"host": f"localhost:{port}"}).status_code == 200
    finally:
        process.terminate()
        process.communicate(timeout=15)


@pytest.mark.parametrize(
    ("host", "bound", "accepted"),
    [
        ("127.0.0.2", "127.0.0.2", ["127.0.0.2", "localhost"]),
        ("0:0:0:0:0:0:0:1", "::1", ["[::1]", "0:0:0:0:0:0:0:1"]),
        ("ip6-localhost", "::1", ["ip6-localhost", "[::1]"]),
    ],
)
def test_a_loopback_address_accepts_only_local_names(
    host: str, bound: str, accepted: list[str]
) -> None:
    hosts = allowed_hosts(host, bound)
    assert hosts is not None and "*" not in hosts and set(accepted) <= set(hosts)


def test_on_every_address_the_host_list_is_this_machines_names() -> None:
    import socket

    hosts = allowed_hosts("0.0.0.0", "0.0.0.0")
    assert hosts is not None and "*" not in hosts and socket.gethostname() in hosts
    assert "attacker.example" not in hosts


def test_off_loopback_every_request_needs_the_printed_token(built: Built) -> None:
    """The real server on 0.0.0.0: a token generated and printed once in the start-up link;
    without it 401, with it (header, link, then the cookie the link set) the runs; a foreign
    Host header 400 even with the token."""
    port = free_port()
    command = [sys.executable, "-m", "agentlens", "view", "--store", str(built.path)]
    process = subprocess.Popen(
        [*command, "--host", "0.0.0.0", "--port", str(port)], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        line = process.stdout.readline() if process.stdout else ""
        assert "reachable from the network, with its token" in line, line
        link = line.split(" on ", 1)[1].split(" ", 1)[0]
        token = link.split("?token=", 1)[1]
        url = f"http://127.0.0.1:{port}/api/runs"
        assert len(token) >= 32 and httpx.get(url).status_code == 401
        assert httpx.get(url, headers={"authorization": "Bearer wrong"}).status_code == 401
        assert httpx.get(url, headers={"authorization": f"Bearer {token}"}).status_code == 200
        with httpx.Client() as browser:
            assert browser.get(f"{url}?token={token}").status_code == 200
            assert browser.get(url).status_code == 200  # the cookie the link set
        foreign = {"authorization": f"Bearer {token}", "host": "attacker.example"}
        assert httpx.get(url, headers=foreign).status_code == 400
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=15)


STEPS = 20_000


@pytest.fixture(scope="module")
def huge(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, agentlens.Trajectory]:
    (real,) = agentlens.read_path(HUNDRED_STEPS)
    steps = [
        msgspec.structs.replace(real.steps[i % len(real.steps)], index=i) for i in range(STEPS)
    ]
    long = msgspec.structs.replace(real, id=real.id + "-huge", steps=steps)
    path = tmp_path_factory.mktemp("viewer-huge") / "store.db"
    with open_store(str(path)) as store:
        store.save(Run(kind="import", scorer="import/1"), [long], import_records([long]))
    return path, digest(long), long


def test_paging_a_20000_step_run_does_not_label_it_again_per_page(
    huge: tuple[Path, str, agentlens.Trajectory],
) -> None:
    path, key, long = huge
    began = time.perf_counter()
    expected = list(label_trajectory(long, "sdk-compat"))
    labelling = time.perf_counter() - began
    with TestClient(create_app(str(path)), base_url="http://127.0.0.1") as client:
        url = f"/api/trajectories/{key}"
        first = client.get(url, params={"profile": "sdk-compat"})
        assert first.status_code == 200
        pages = []
        for offset in (500, 1000, 19_500):
            began = time.perf_counter()
            page = client.get(url, params={"profile": "sdk-compat", "offset": offset})
            pages.append(time.perf_counter() - began)
            assert [s["stage"] for s in page.json()["steps"]] == expected[offset : offset + 500]
        step = client.get(f"{url}/steps/19999", params={"profile": "sdk-compat"}).json()
    assert step["stage"] == expected[-1]
    assert min(pages) < labelling / 2, (pages, labelling)


@pytest.mark.parametrize("other", ['prefs={"theme":"dark"}', "note=two words", 'half="open', "x=1"])
def test_the_token_cookie_counts_beside_cookies_python_cannot_parse(
    built: Built, other: str
) -> None:
    """Cookies are shared by every port of a host, so the browser sends the viewer's cookie with
    another local app's: a JSON value or a space in theirs must not hide ours (401 on every
    request after the start-up link). A wrong or missing token cookie is still 401."""
    app = create_app(str(built.path), allowed_hosts=["127.0.0.1"], token="the-token")
    with TestClient(app, base_url="http://127.0.0.1") as client:
        for cookie in (f"{other}; agentlens_view_token=the-token",
                       f"agentlens_view_token=the-token; {other}",
                       f"agentlens_view_token=planted; {other}; agentlens_view_token=the-token"):  # fmt: skip
            assert client.get("/api/runs", headers={"cookie": cookie}).status_code == 200, cookie
        for cookie in (other, f"{other}; agentlens_view_token=wrong", "agentlens_view_token="):
            assert client.get("/api/runs", headers={"cookie": cookie}).status_code == 401, cookie
