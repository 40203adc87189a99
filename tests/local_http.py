"""A small Quart-Trio app of a test's own on a real socket (a stand-in peer: the platform's or the service's)."""

from __future__ import annotations

from functools import partial

import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from quart_trio import QuartTrio


async def serve_on_free_port(app: QuartTrio, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Serve `app` on 127.0.0.1 at a free port until cancelled; reports its base URL once listening."""
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(partial(serve, app, config))
        task_status.started(binds[0])
