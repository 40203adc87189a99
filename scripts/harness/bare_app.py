"""The bare Hypercorn-trio app the service's figures are compared with, served by scripts/http_load.py --hello:
an ASGI app that reads the body and answers `{"hello":"world"}` to anything (the floor of any app on Hypercorn's
trio worker), or the same answer from one Quart-Trio route (the floor of the service's framework). It prints a
ready line as the service does, so a script starts and stops it as it does the service."""

from __future__ import annotations

import json
import signal
from functools import partial

import trio

HELLO = b'{"hello":"world"}'


async def hello_app(scope, receive, send) -> None:
    """The least an ASGI app can do for a request: read the body, answer a small JSON object."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(HELLO)).encode())]})
    await send({"type": "http.response.body", "body": HELLO})


def quart_hello_app():
    """One Quart-Trio route answering what hello_app answers: the framework the service runs on, and no more."""
    from quart import Response, request
    from quart_trio import QuartTrio

    app = QuartTrio("hello")

    @app.route("/", methods=["GET", "POST"])
    async def hello() -> Response:
        await request.get_data()
        return Response(HELLO, content_type="application/json")

    return app


async def serve_hello(port: int, framework: str = "asgi") -> None:
    """Hypercorn's trio worker with its defaults (as the service's, less the access log); a ready line."""
    from hypercorn.config import Config
    from hypercorn.trio import serve

    app = quart_hello_app() if framework == "quart" else hello_app
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:

        async def stop() -> None:
            async for _ in signals:
                return

        async with trio.open_nursery() as nursery:
            binds = await nursery.start(partial(serve, app, config, shutdown_trigger=stop))
            print(json.dumps({"status": "ready", "url": binds[0]}), flush=True)
