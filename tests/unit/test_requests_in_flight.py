"""RequestsInFlight's accounting of a drain: a response whose every byte reached the client counts as answered even
when the request is cancelled before its empty last body part (a client told `Connection: close` reads the body,
hangs up, and quart-trio cancels the request on that disconnect); one cut off before its body does not."""

from __future__ import annotations

import trio

from inbox_http.requests_in_flight import RequestsInFlight

SCOPE = {"type": "http", "method": "GET", "path": "/"}


def app_sending(body: bytes, *, cancelled_after: int):
    """An ASGI app that sends its response in parts (start, body with more_body, empty last part) and is cancelled
    after `cancelled_after` of them."""

    async def app(scope, receive, send):
        parts = [
            {"type": "http.response.start", "status": 200, "headers": [(b"content-length", str(len(body)).encode())]},
            {"type": "http.response.body", "body": body, "more_body": True},
            {"type": "http.response.body", "body": b"", "more_body": False},
        ]
        with trio.CancelScope() as scope_:
            for number, part in enumerate(parts):
                if number == cancelled_after:
                    scope_.cancel()
                    await trio.lowlevel.checkpoint()
                await send(part)

    return app


async def serve(counted: RequestsInFlight) -> list[dict]:
    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b""}

    await counted(SCOPE, receive, send)
    return sent


async def test_a_body_sent_whole_counts_as_answered_though_the_last_empty_part_never_went():
    counted = RequestsInFlight(app_sending(b"hello", cancelled_after=2), closing=lambda: True)
    sent = await serve(counted)
    assert (b"connection", b"close") in sent[0]["headers"]
    assert (counted.unanswered, counted.answered_draining, counted.active) == (0, 1, 0)


async def test_a_response_cut_off_before_its_body_counts_as_unanswered():
    counted = RequestsInFlight(app_sending(b"hello", cancelled_after=1), closing=lambda: True)
    await serve(counted)
    assert (counted.unanswered, counted.answered_draining, counted.active) == (1, 0, 0)


async def test_a_response_sent_in_full_while_not_draining_is_neither_counted_nor_closed():
    counted = RequestsInFlight(app_sending(b"hello", cancelled_after=3))
    sent = await serve(counted)
    assert (b"connection", b"close") not in sent[0]["headers"]
    assert (counted.unanswered, counted.answered_draining, counted.active) == (0, 0, 0)


async def test_once_http_stops_a_new_request_is_refused_503_without_reaching_the_app():
    reached = []

    async def app(scope, receive, send):
        reached.append(scope["path"])

    counted = RequestsInFlight(app, closing=lambda: True)
    counted.refuse_new()
    sent = await serve(counted)
    assert reached == []
    assert sent[0]["status"] == 503 and (b"retry-after", b"1") in sent[0]["headers"]
    assert (b"connection", b"close") in sent[0]["headers"]
    assert sent[1]["body"] == b'{"error":"shutting_down","message":"The service is shutting down; retry the request."}'
    assert (counted.refused_stopping, counted.unanswered, counted.active) == (1, 0, 0)


async def test_the_last_part_of_an_answer_that_closes_its_connection_is_not_cut_off_by_a_cancel():
    """Hypercorn closes the connection inside the send of the last part, after telling the app the client left,
    which makes quart-trio cancel the request: the close must still happen (a 413 with the body half read)."""
    closed: list[bool] = []

    async def server_send(message):
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            outer.cancel()                     # the app hears the client leave, and is cancelled...
            await trio.lowlevel.checkpoint()   # ...while the server is still closing the connection
            closed.append(True)

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 413, "headers": [(b"connection", b"close")]})
        await send({"type": "http.response.body", "body": b"{}", "more_body": False})

    async def receive():
        return {"type": "http.request", "body": b""}

    counted = RequestsInFlight(app)
    with trio.CancelScope() as outer:
        await counted(SCOPE, receive, server_send)
    assert closed == [True] and counted.unanswered == 0
