"""A stop signal (`kill PID`: SIGTERM; a closed terminal: SIGHUP) ends the process as an exit
rather than a kill: `finally` blocks and context managers run, so what it holds goes with it (a
cohort's spill folder, a pool's workers), and the exit status is 128 + the signal's number, as
a shell reports a kill. Taken by every command (`cli._app`) and, for a script that uses one
outside a command, by a process pool while it lives (`engine.processes`)."""

from __future__ import annotations

import signal
import threading
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:  # nothing more to import at start-up: every command imports this module
    from collections.abc import Callable, Iterable
    from types import FrameType
    from typing import Any

    Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


class StopSignalExit(SystemExit):
    """The exit a stop signal makes: status 128 + its number, and its name for the one line
    that says so (`cli._app`)."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


def exit_on_signal(signum: int, frame: FrameType | None) -> NoReturn:
    raise StopSignalExit(signum)


def take(signals: Iterable[signal.Signals]) -> dict[signal.Signals, Handler]:
    """`exit_on_signal` for each of `signals` still at its default (a handler someone set is
    theirs), from the main thread only (no other may set one); what each had, for `give_back`."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {
        sig: signal.signal(sig, exit_on_signal)
        for sig in signals
        if signal.getsignal(sig) is signal.SIG_DFL
    }


def take_over(
    signals: Iterable[signal.Signals], handler: Handler = exit_on_signal
) -> dict[signal.Signals, Handler]:
    """`handler` (by default `exit_on_signal`) for each of `signals`, whoever set the one there:
    for a library that puts its own in while this process runs a command (`ray.init` does); for
    `give_back`."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, handler) for sig in signals}


def give_back(taken: dict[signal.Signals, Handler]) -> None:
    """The handlers `take` replaced, back (from the main thread only, as `take`)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig, before in taken.items():
        signal.signal(sig, before)
