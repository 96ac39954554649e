"""Running a fold from the command line so that a stop request reaches the agents: SIGTERM and
SIGHUP (a cancelled CI job, a closed terminal) cancel the run like Ctrl-C does, then exit as
every command does on them (143, 129). The agents' processes run in sessions of their own, so
no signal sent to us reaches them; cancellation is what kills their process groups
(`agents/_shell.py`)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

from agentlens.stop_signals import StopSignalExit

T = TypeVar("T")
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def run_stoppable(work: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(work)`; a stop signal cancels it and ends it here as that signal's exit
    (`StopSignalExit`: 143 for SIGTERM, 129 for SIGHUP), as it ends every other command."""
    received: list[int] = []

    async def main() -> T:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        assert task is not None

        def stop(sig: int) -> None:
            received.append(sig)
            task.cancel()

        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, stop, sig)
        try:
            return await work
        finally:
            for sig in STOP_SIGNALS:
                loop.remove_signal_handler(sig)

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if received:
            raise StopSignalExit(received[0]) from None
        raise KeyboardInterrupt from None
