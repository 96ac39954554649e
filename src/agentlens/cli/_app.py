"""Error handling shared by all commands: user errors print one line; `--debug` shows tracebacks.

Commands return their exit code (0 ok, 1 some inputs failed, 2 usage/input error)."""

from __future__ import annotations

import click
from rich.console import Console
from rich.markup import escape

from agentlens.errors import AgentLensError

console = Console()
err_console = Console(stderr=True)


def run_cli(group: click.Group, argv: list[str]) -> int:
    debug = "--debug" in argv
    try:
        result = group.main(args=argv, prog_name="agentlens", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:
        err_console.print("aborted")
        return 130
    except AgentLensError as exc:
        if debug:
            raise
        err_console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        return 2
    except BrokenPipeError:
        return 0
    return result if isinstance(result, int) else 0
