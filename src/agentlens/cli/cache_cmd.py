"""`agentlens cache stats|clear`: the LLM response cache."""

from __future__ import annotations

import click

from agentlens.cli._app import console
from agentlens.providers.cache import ResponseCache
from agentlens.providers.config import ProvidersConfig


@click.group()
def cache() -> None:
    """Inspect or clear the LLM response cache. Its path: llm.cache or $AGENTLENS_LLM_CACHE."""


@cache.command()
def stats() -> int:
    """Entries, hits and size of the response cache, per provider."""
    store = ResponseCache.existing(ProvidersConfig.load().cache_path)
    info = store.stats()
    console.print(f"cache: {info.path}", highlight=False)
    console.print(
        f"entries: {info.entries}  hits: {info.hits}  size: {info.size_bytes / 1024:.1f} KiB",
        highlight=False,
    )
    for provider, count in info.by_provider.items():
        console.print(f"  {provider}: {count}", highlight=False)
    return 0


@cache.command()
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def clear(yes: bool) -> int:
    """Delete every cached response."""
    store = ResponseCache.existing(ProvidersConfig.load().cache_path)
    if not yes:
        click.confirm(f"Delete all cached responses in {store.path}?", abort=True)
    console.print(f"removed {store.clear()} cached responses", highlight=False)
    return 0
