"""`--no-sandbox`: run agent-written code (verifiers, scenario agents, MCP servers) without the
bubblewrap isolation of `verification.isolation`; every result then carries a warning."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from agentlens.cli._app import err_console

F = TypeVar("F", bound=Callable[..., Any])


def _switch_off(_ctx: click.Context, _param: click.Parameter, off: bool) -> bool:
    if off:
        from agentlens.verification import isolation

        isolation.set_default(isolation.Isolation(enabled=False))
        err_console.print(isolation.NO_SANDBOX_NOTICE, style="yellow", markup=False)
    return off


def sandbox_option(command: F) -> F:
    return click.option(
        "--no-sandbox",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_switch_off,
        help="Run agent-written code without isolation (where bubblewrap cannot run); "
        "results say so.",
    )(command)
