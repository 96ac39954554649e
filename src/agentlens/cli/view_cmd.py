"""`agentlens view`: browse the results store in a local web page."""

from __future__ import annotations

import secrets
import webbrowser

import click

from agentlens.cli._app import err_console
from agentlens.cli._store_option import read_store_option
from agentlens.list_text import counted
from agentlens.store import default_url, open_store
from agentlens.viewer.serve import serve


@click.command()
@read_store_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="0 picks a free port.")  # fmt: skip
@click.option("--open", "open_browser", is_flag=True, help="Open the page in a web browser.")
@click.option(
    "--token",
    envvar="AGENTLENS_VIEW_TOKEN",
    default=None,
    help="Off loopback, the token every request must carry (default: $AGENTLENS_VIEW_TOKEN, "
    "else one generated and printed once in the start-up link).",
)
def view(store_url: str | None, host: str, port: int, open_browser: bool, token: str | None) -> int:
    """Browse the store in a read-only web viewer. It serves runs, records and trajectories
    until Ctrl-C."""
    url = store_url or default_url()
    with open_store(
        url, create=False
    ) as store:  # fail here, in one line, on a store that cannot be read
        stats = store.stats()
        shown = store.url  # without a password

    local = _loopback(host)
    given = token
    if not local and not token:
        token = secrets.token_urlsafe(24)

    def ready(address: str) -> None:
        reach = "this machine only" if local else "the network, with its token"
        link = address if local or given else f"{address}?token={token}"
        click.echo(
            f"AgentLens viewer on {link} ({counted(stats['runs'], 'run')}, "
            f"{counted(stats['trajectories'], 'trajectory')} in {shown}); reachable from {reach}; "
            "Ctrl-C to stop"
        )
        if open_browser:
            webbrowser.open(address)

    try:
        serve(url, host, port, on_ready=ready, token=token)
    except KeyboardInterrupt:
        err_console.print("stopped")
        return 130
    return 0


def _loopback(host: str) -> bool:
    """Whether `--host` names only this machine (its addresses resolve to loopback ones)."""
    import ipaddress
    import socket

    try:
        found = socket.getaddrinfo(host, None)
    except OSError:
        return False  # serve() reports the bad name in one line
    return all(ipaddress.ip_address(str(a[4][0]).split("%")[0]).is_loopback for a in found)
