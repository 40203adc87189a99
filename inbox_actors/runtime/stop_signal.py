"""How a long-running command learns it should stop: SIGINT (Ctrl-C) or SIGTERM."""

from __future__ import annotations

import logging
import signal

import trio

log = logging.getLogger("inbox_actors.runtime.stop_signal")


async def set_on_stop_signal(stop: trio.Event) -> None:
    """Set `stop` at the first SIGINT or SIGTERM (the command then shuts down cleanly)."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            log.info("received %s", signal.Signals(signum).name)
            stop.set()
            return
