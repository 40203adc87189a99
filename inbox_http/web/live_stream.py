"""`GET /app/events`: the workspace's chat events as Server-Sent Events, for the pages' script.

Each event is `id: <outbox id>`, `event: <name>`, `data: {"phone": …}` (an assignment's also `event`, `to`, `by`,
`by_name`, `reason`: the member a chat was handed to is told by their own screen; a note's `chat_changed` that
mentions the screen's member also `mentioned: true`, `note`, `by`, `by_name`); the browser's EventSource sends
the last id back as `Last-Event-ID` when it reconnects, and the stream resumes after it (the outbox keeps events
30 days), so a dropped connection loses nothing. The first connection starts at `?since=`, the stream position the
page read before its content (`stream_position`), so what changed while the page loaded is heard too; without
either, the stream starts from now. What the stream tells is only which chat changed: the page reads that chat
again through its own permission-checked fragment. Between events a comment line every KEEPALIVE_SECONDS keeps proxies
from closing an idle stream and notices a browser that went away. The stream ends when the service begins to
drain; the browser reconnects to another node or to this one once it is back.
"""

from __future__ import annotations

import msgspec
import trio
from quart import Blueprint, Response, request

from inbox_actors.live.event_stream import EventStream, LiveEvent
from inbox_actors.live.wakeups import Bell
from inbox_actors.team.presence import PageBeat
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
    # An open page keeps its member seen (docs/team.md#availability).
    beat = PageBeat(state.db, caller.workspace_id, caller.member_id)

    async def lines():
        yield f"retry: {RETRY_MILLISECONDS}\n\n".encode()
        lifecycle = state.lifecycle
        while not lifecycle.draining:
            if beat.due(trio.current_time()):
                await beat.beat(trio.current_time())
            with state.live.armed(caller.workspace_id) as bell:
                for event in await stream.read():
                    data = msgspec.json.encode(_data(event)).decode()
                    yield f"id: {event.id}\nevent: {event.event}\ndata: {data}\n\n".encode()
                rang = await _rung_before_drain(bell, lifecycle.drain_began, beat.wait_limit(trio.current_time()))
            if not rang and not lifecycle.draining:
                yield b": keep-alive\n\n"

    response = Response(lines(), content_type="text/event-stream")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Accel-Buffering"] = "no"
    response.timeout = None  # the stream lasts as long as the page is open
    return response


def _data(event: LiveEvent) -> dict:
    """The chat's phone; for an assignment also what it was, to whom and by whom (member ids), by whose name and
    why; for a note that mentions this screen's member, which note and by whom."""
    if event.mentioned is not None:
        return {"phone": event.phone, "mentioned": True, **msgspec.structs.asdict(event.mentioned)}
    if event.assignment is None:
        return {"phone": event.phone}
    return {"phone": event.phone, **msgspec.structs.asdict(event.assignment)}


def _position(text: str) -> int | None:
    """An outbox id the client sent, or None for one that is missing or not a positive bigint."""
    return int(text) if text.isdigit() and len(text) < 19 and int(text) > 0 else None


async def _rung_before_drain(bell: Bell, drain_began: trio.Event, beat_in: float) -> bool:
    """Whichever comes first: the workspace's next commit (True), the drain, the keep-alive's turn or the page's
    next beat, `beat_in` seconds away (False)."""
    rang = False
    async with trio.open_nursery() as nursery:
        async def drained() -> None:
            await drain_began.wait()
            nursery.cancel_scope.cancel()

        nursery.start_soon(drained)
        rang = await bell.wait(min(KEEPALIVE_SECONDS, beat_in))
        nursery.cancel_scope.cancel()
    return rang
