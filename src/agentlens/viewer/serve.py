"""Run the viewer with uvicorn on a socket bound here first, so a port in use is one clear error
before anything starts, and `--port 0` can report the port the system picked."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable

from agentlens.errors import ConfigError
from agentlens.viewer import LOCAL_HOSTS, create_app, require


def bind(host: str, port: int) -> socket.socket:
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise ConfigError(f"--host {host}: {exc.strerror}") from exc
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on {host}:{port} ({exc.strerror}): pick another --port"
        ) from exc
    sock.listen(128)
    return sock


def allowed_hosts(host: str, bound: str) -> list[str] | None:
    """The Host names the app accepts when `--host host` listens on address `bound`: the local
    names, `host` and the address (a page that rebinds its DNS name to the address sends its own
    name, which is none of these); None: the app's local names. On every address (0.0.0.0,
    ::) also this machine's names and the addresses they resolve to."""
    if host in ("127.0.0.1", "localhost", "::1"):
        return None
    address = ipaddress.ip_address(bound.split("%")[0])  # an IPv6 scope (`%lo`) left out
    names = [*LOCAL_HOSTS, host, *_shown(str(address))]
    if address.is_unspecified:
        names += _machine_names()
    return list(dict.fromkeys(names))


def is_loopback(bound: str) -> bool:
    return ipaddress.ip_address(bound.split("%")[0]).is_loopback


def _shown(address: str) -> list[str]:
    return [address, f"[{address}]"] if ":" in address else [address]


def _machine_names() -> list[str]:
    names = [socket.gethostname(), socket.getfqdn()]
    try:
        found = socket.getaddrinfo(socket.gethostname(), None)
    except OSError:
        found = []
    return names + [shown for *_, addr in found for shown in _shown(str(addr[0]))]


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


def serve(
    store_url: str,
    host: str,
    port: int,
    on_ready: Callable[[str], None] = print,
    *,
    token: str | None = None,
) -> None:
    """Serve until interrupted; `on_ready(url)` is called once the socket is listening.
    Off loopback every request needs `token` (`TokenGate`); there it must be given.
    Ctrl-C ends in KeyboardInterrupt (uvicorn re-raises the signal after a clean shutdown)."""
    require("starlette")
    require("uvicorn")
    import uvicorn

    sock = bind(host, port)
    try:
        bound = sock.getsockname()[0]
        if not is_loopback(bound) and not token:
            raise ConfigError(f"--host {host} is reachable from the network: it needs a token")
        hosts = allowed_hosts(host, bound)
        app = create_app(
            store_url, allowed_hosts=hosts, token=None if is_loopback(bound) else token
        )
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
        on_ready(url_of(sock))
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
