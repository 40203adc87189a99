"""The simulator on a socket: Hypercorn serving its app while its background work runs."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import partial

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve

from inbox_actors.model_simulator.simulated_model import ModelSimulator
from inbox_actors.platform.simulator.app import create_simulator_app, stamping_arrival
from inbox_actors.platform.simulator.model import Simulator


async def serve_simulator(
    simulator: Simulator, host: str = "127.0.0.1", port: int = 0, *,
    model: ModelSimulator | None = None,
    shutdown_trigger: Callable[[], Awaitable[None]] | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve until cancelled (or `shutdown_trigger` returns); reports the base URL once listening.

    The URL is also left in `simulator.url`. Statuses still waiting when it stops are not posted. With `model`,
    the same server plays the language model too, at `{url}/model/v1`.
    """
    config = HypercornConfig()
    config.bind = [f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    config.graceful_timeout = 2.0
    app = stamping_arrival(create_simulator_app(simulator, model))
    async with simulator.running(), trio.open_nursery() as server:
        binds = await server.start(partial(serve, app, config, shutdown_trigger=shutdown_trigger))
        simulator.url = binds[0]
        task_status.started(simulator.url)
