"""`agentlens view`: browse the results store in a local web page."""

from __future__ import annotations

import webbrowser

import click

from agentlens.cli._app import err_console
from agentlens.cli._store_option import read_store_option
from agentlens.store import default_url, open_store
from agentlens.viewer.serve import serve


@click.command()
@read_store_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="0 picks a free port.")  # fmt: skip
@click.option("--open", "open_browser", is_flag=True, help="Open the page in a web browser.")
def view(store_url: str | None, host: str, port: int, open_browser: bool) -> int:
    """Serve a read-only viewer of the store's runs, records and trajectories until Ctrl-C."""
    url = store_url or default_url()
    with open_store(
        url, create=False
    ) as store:  # fail here, in one line, on a store that cannot be read
        stats = store.stats()
        shown = store.url  # without a password

    def ready(address: str) -> None:
        click.echo(
            f"AgentLens viewer on {address} ({stats['runs']} runs, {stats['trajectories']} "
            f"trajectories in {shown}); Ctrl-C to stop"
        )
        if open_browser:
            webbrowser.open(address)

    try:
        serve(url, host, port, on_ready=ready)
    except KeyboardInterrupt:
        err_console.print("stopped")
        return 130
    return 0
