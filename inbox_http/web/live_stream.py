"""`GET /app/events`: the workspace's chat events as Server-Sent Events, for the pages' script.

Each event is `id: <outbox id>`, `event: <name>`, `data: {"phone": …}`; the browser's EventSource sends the last id
back as `Last-Event-ID` when it reconnects, and the stream resumes after it (the outbox keeps events 30 days), so a
dropped connection loses nothing. The first connection starts at `?since=`, the stream position the page read
before its content (`stream_position`), so what changed while the page loaded is heard too; without either, the
stream starts from now. What the stream tells is only which chat changed: the page reads that chat again
through its own permission-checked fragment. Between events a comment line every KEEPALIVE_SECONDS keeps proxies
from closing an idle stream and notices a browser that went away. The stream ends when the service begins to
drain; the browser reconnects to another node or to this one once it is back.
"""

from __future__ import annotations

import msgspec
import trio
from quart import Blueprint, Response, request

from inbox_actors.live.event_stream import EventStream
from inbox_actors.live.wakeups import Bell
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.page_guard import signed_in

blueprint = Blueprint("web_live", __name__, url_prefix="/app")

KEEPALIVE_SECONDS = 15.0
# How long the browser waits before reconnecting after the stream ends.
RETRY_MILLISECONDS = 1000


@blueprint.get("/events")
@signed_in
async def events():
    state = dependencies()
    caller = current_caller()
    stream = EventStream(state.db, caller, _position(request.headers.get("Last-Event-ID", ""))
                         or _position(request.args.get("since", "")))
    await stream.start()

    async def lines():
        yield f"retry: {RETRY_MILLISECONDS}\n\n".encode()
        lifecycle = state.lifecycle
        while not lifecycle.draining:
            with state.live.armed(caller.workspace_id) as bell:
                for event in await stream.read():
                    data = msgspec.json.encode({"phone": event.phone}).decode()
                    yield f"id: {event.id}\nevent: {event.event}\ndata: {data}\n\n".encode()
                rang = await _rung_before_drain(bell, lifecycle.drain_began)
            if not rang and not lifecycle.draining:
                yield b": keep-alive\n\n"

    response = Response(lines(), content_type="text/event-stream")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Accel-Buffering"] = "no"
    response.timeout = None  # the stream lasts as long as the page is open
    return response


def _position(text: str) -> int | None:
    """An outbox id the client sent, or None for one that is missing or not a positive bigint."""
    return int(text) if text.isdigit() and len(text) < 19 and int(text) > 0 else None


async def _rung_before_drain(bell: Bell, drain_began: trio.Event) -> bool:
    """Whichever comes first: the workspace's next commit (True), the drain or the keep-alive's turn (False)."""
    rang = False
    async with trio.open_nursery() as nursery:
        async def drained() -> None:
            await drain_began.wait()
            nursery.cancel_scope.cancel()

        nursery.start_soon(drained)
        rang = await bell.wait(KEEPALIVE_SECONDS)
        nursery.cancel_scope.cancel()
    return rang
