"""Hostile and malformed requests, sent as raw bytes: each gets a clear answer, and the server keeps serving."""

from urllib.parse import urlsplit

import pytest
import trio

from tests import builders
from tests.e2e.conftest import bearer

WHOAMI = "/api/reporting/v1/whoami"


async def raw_request(url: str, request: bytes) -> bytes:
    parts = urlsplit(url)
    stream = await trio.open_tcp_stream(parts.hostname, parts.port)
    async with stream:
        await stream.send_all(request)
        response = b""
        with trio.fail_after(10):
            while True:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    break
                response += chunk
                if b"\r\n\r\n" in response and _complete(response):
                    break
    return response


def _complete(response: bytes) -> bool:
    head, _, body = response.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return False


def status_of(response: bytes) -> int:
    return int(response.split(b" ", 2)[1])


def body_of(response: bytes) -> bytes:
    return response.partition(b"\r\n\r\n")[2]


def get(path: str, *headers: bytes) -> bytes:
    lines = [f"GET {path} HTTP/1.1".encode(), b"Host: test", b"Connection: close", *headers]
    return b"\r\n".join(lines) + b"\r\n\r\n"


async def still_serving(service) -> None:
    issued = await builders.plaintext_key(service.db)
    assert (await service.client.get(WHOAMI, headers=bearer(issued.key))).status_code == 200


@pytest.mark.parametrize("header", [
    b"Authorization: Bearer inbox_\xc3\x28" + b"A" * 41,
    b"Authorization: Bearer \xff\xfe\x80inbox_",
    b"Authorization: Bearer inbox_" + b"\xe2\x82\xac" * 15,
])
async def test_non_utf8_credentials_are_invalid_keys(service, header):
    response = await raw_request(service.url, get(WHOAMI, header))
    assert status_of(response) == 403
    assert body_of(response) == b'{"error":"Forbidden: Invalid or revoked API key"}'
    await still_serving(service)


async def test_a_non_bearer_credential_of_raw_bytes_is_no_token(service):
    response = await raw_request(service.url, get(WHOAMI, b"Authorization: \xff\xff\xff"))
    assert status_of(response) == 401
    assert body_of(response) == b'{"error":"Unauthorized: No token provided"}'


async def test_nul_byte_in_a_header_is_a_bad_request(service):
    response = await raw_request(service.url, get(WHOAMI, b"Authorization: Bearer \x00inbox_"))
    assert status_of(response) == 400
    await still_serving(service)


async def test_key_of_the_right_prefix_but_wrong_length(service):
    for token in (b"inbox_abc", b"inbox_" + b"A" * 44, b"inbox_" + b"A" * 42):
        response = await raw_request(service.url, get(WHOAMI, b"Authorization: Bearer " + token))
        assert status_of(response) == 403


async def test_huge_header_is_refused_without_harm(service):
    response = await raw_request(service.url, get(WHOAMI, b"Authorization: Bearer inbox_" + b"A" * 200_000))
    assert status_of(response) in (400, 403, 431)
    await still_serving(service)


async def test_huge_token_within_header_limits_is_an_invalid_key(service):
    response = await raw_request(service.url, get(WHOAMI, b"Authorization: Bearer inbox_" + b"A" * 8_000))
    assert status_of(response) == 403
    assert body_of(response) == b'{"error":"Forbidden: Invalid or revoked API key"}'


async def test_garbage_request_line(service):
    response = await raw_request(service.url, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n")
    assert response == b"" or status_of(response) == 400
    await still_serving(service)


async def test_many_authorization_headers(service):
    issued = await builders.plaintext_key(service.db)
    response = await raw_request(service.url, get(
        WHOAMI, b"Authorization: Bearer " + issued.key.encode(), b"Authorization: Bearer inbox_" + b"B" * 43))
    # Two credentials are not one valid credential; whichever is read, the answer is a clean 200 or 403.
    assert status_of(response) in (200, 403)
    await still_serving(service)


async def test_unknown_route_and_wrong_method_use_the_stable_convention(service):
    response = await service.client.get("/api/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
    response = await service.client.delete(WHOAMI)
    assert response.status_code == 405
    assert response.json()["error"] == "method_not_allowed"


async def test_oversized_body_is_refused_before_it_is_read(service):
    issued = await builders.plaintext_key(service.db)
    request = (f"POST {WHOAMI} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {issued.key}\r\n"
               "Content-Type: application/json\r\nContent-Length: 5000000\r\n\r\n{").encode()
    response = await raw_request(service.url, request)
    assert status_of(response) == 413
    assert b'"error":"payload_too_large"' in body_of(response)
    await still_serving(service)


async def test_out_of_range_ids_names_and_cursors_are_clean_4xx_and_harm_no_actor(service):
    import base64

    issued = await builders.plaintext_key(service.db)
    auth = bearer(issued.key)
    huge = "100000000000000000000"
    for _ in range(8):  # more than the key ring's restart intensity, were these crashing it
        for method, path in (("GET", f"/api/keys/{huge}"), ("POST", f"/api/keys/{huge}/revoke"),
                             ("PATCH", f"/api/keys/{huge}"), ("GET", f"/api/keys/{huge}/activity")):
            response = await service.client.request(method, path, headers=auth, json={"name": "x"})
            assert response.status_code == 404, (method, path, response.text)
        named = await service.client.post("/api/keys", headers=auth, json={"name": "bad\u0000name", "scopes": ["all"]})
        assert named.status_code == 400 and named.json()["error"] == "invalid_name"
    forged = base64.urlsafe_b64encode(f"a{huge}".encode()).decode().rstrip("=")
    response = await service.client.get(f"/api/keys/{issued.id}/activity", params={"cursor": forged}, headers=auth)
    assert response.status_code == 400 and response.json()["error"] == "invalid_cursor"
    # The workspace's key ring never crashed: key management still works.
    created = await service.client.post("/api/keys", headers=auth, json={"name": "fine", "scopes": ["all"]})
    assert created.status_code == 201
    workspace_id = await service.db.fetchval("SELECT workspace_id FROM api_keys WHERE id = $1", issued.id)
    assert service.actors.statistics("key_ring", str(workspace_id)).restarts == 0


async def test_rate_limit_headers_ride_on_error_answers_too(service):
    issued = await builders.plaintext_key(service.db)
    response = await service.client.get("/api/keys/999999", headers=bearer(issued.key))
    assert response.status_code == 404
    assert response.headers["X-RateLimit-Limit"] == "600"
    assert response.headers["X-RateLimit-Remaining"] == "599"


# -- bodies that are not UTF-8 -------------------------------------------------------------------------------
# JSON is UTF-8 (RFC 8259). A body that is not, whether it breaks the JSON at once or hides in a string, is a
# 400 in the route's own error convention, and nothing is written.

NOT_UTF8 = b"\xff\xfe{"
CHAT_PHONE = "919844444441"


def _json_bodies(valid: bytes) -> list[bytes]:
    """The brief's raw bytes, and a body that is JSON but for one string that is not UTF-8."""
    return [NOT_UTF8, valid.replace(b"@", b"\xff\xfe")]


def _post(service, method: str, path: str, key: str, content: bytes):
    return service.client.request(method, path, content=content,
                                  headers={**bearer(key), "Content-Type": "application/json"})


@pytest.mark.parametrize("content", _json_bodies(b'{"phone": "919844444442", "name": "Asha @"}'))
async def test_a_contact_write_whose_body_is_not_utf8_is_a_sentence_400_and_changes_nothing(service, content):
    issued = await builders.plaintext_key(service.db, scopes=("contacts",))
    created = await service.client.post("/api/contacts", headers=bearer(issued.key),
                                        json={"phone": "919844444443", "name": "Ravi"})
    assert created.status_code == 201, created.text
    for method, path in (("POST", "/api/contacts"), ("PUT", "/api/contacts/919844444443/name"),
                         ("POST", "/api/contacts/919844444443/opt-out")):
        answer = await _post(service, method, path, issued.key, content.replace(b"919844444442", b"919844444443"))
        assert answer.status_code == 400, (path, answer.text)
        assert answer.json() == {"error": "The request body is not valid UTF-8"}
    rows = await service.db.fetch("SELECT phone, name, opted_out, version FROM contacts")
    assert [tuple(row) for row in rows] == [("919844444443", "Ravi", False, 1)]
    await still_serving(service)


@pytest.mark.parametrize("content", _json_bodies(b'{"to": "919844444442", "message": "hello @"}'))
async def test_a_send_whose_body_is_not_utf8_is_a_sentence_400_and_sends_nothing(service, content):
    from tests.e2e.chat_helpers import scale_workspace

    _, _, _, key = await scale_workspace(service.db)
    for headers in ({}, {"Idempotency-Key": "not-utf8-1"}):
        answer = await service.client.post("/api/send-message", content=content, headers={
            **bearer(key), "Content-Type": "application/json", **headers})
        assert (answer.status_code, answer.json()) == (400, {"error": "The request body is not valid UTF-8"})
    assert await service.db.fetchval("SELECT count(*) FROM messages") == 0
    assert await service.db.fetchval("SELECT count(*) FROM conversations") == 0
    # The refused body claimed no idempotency key: the same key with a good body is a first send, which reaches
    # the platform (and is refused there: this number never wrote, so the 24-hour window is closed).
    retried = await service.client.post("/api/send-message", json={"to": "919844444442", "message": "hello"},
                                        headers={**bearer(key), "Idempotency-Key": "not-utf8-1"})
    assert retried.status_code == 500 and retried.json()["errorCode"] == 131047, retried.text


@pytest.mark.parametrize("content", _json_bodies(b'{"name": "ops @", "scopes": ["all"]}'))
async def test_a_key_write_whose_body_is_not_utf8_is_invalid_body_and_changes_nothing(service, content):
    issued = await builders.plaintext_key(service.db)
    before = await service.db.fetch("SELECT id, name, expires_at, rate_limit_per_minute, revoked_at,"
                                    " replaced_by FROM api_keys ORDER BY id")
    for method, path in (("POST", "/api/keys"), ("PATCH", f"/api/keys/{issued.id}"),
                         ("POST", f"/api/keys/{issued.id}/rotate")):
        answer = await _post(service, method, path, issued.key, content)
        assert answer.status_code == 400, (path, answer.text)
        assert answer.json() == {"error": "invalid_body", "message": "The request body is not valid UTF-8."}
    after = await service.db.fetch("SELECT id, name, expires_at, rate_limit_per_minute, revoked_at,"
                                   " replaced_by FROM api_keys ORDER BY id")
    assert [tuple(row) for row in after] == [tuple(row) for row in before]
    await still_serving(service)


async def test_an_inbox_action_whose_body_is_not_utf8_is_invalid_body_and_changes_nothing(service):
    from tests.e2e.chat_helpers import chat, customer_writes, outbox_events, scale_workspace
    from tests.waiting import eventually

    workspace_id, number, admin, key = await scale_workspace(service.db)
    await customer_writes(service, number, CHAT_PHONE, "hello")  # no bot answer stored: the bot hands off

    async def handed_off():
        detail = await chat(service, key, CHAT_PHONE)
        return detail if detail["state"] == "HANDOFF_PENDING" else None

    before = await eventually(handed_off)
    messages = await service.db.fetchval("SELECT count(*) FROM messages")
    events = await outbox_events(service.db, workspace_id)
    for action, valid in (("transfer", b'{"to_user_id": %d, "reason": "@"}' % admin),
                          ("resolve", b'{"reason": "@"}'), ("reply", b'{"message": "hi @"}')):
        for content in _json_bodies(valid):
            answer = await _post(service, "POST", f"/api/inbox/conversations/{CHAT_PHONE}/{action}", key, content)
            assert answer.status_code == 400, (action, answer.text)
            assert answer.json()["error"] == "invalid_body" and "UTF-8" in answer.json()["message"]
    after = await chat(service, key, CHAT_PHONE)
    assert (after["state"], after["version"], after["claimed_by"]) == ("HANDOFF_PENDING", before["version"], None)
    assert await service.db.fetchval("SELECT count(*) FROM messages") == messages
    assert await outbox_events(service.db, workspace_id) == events


async def test_a_signed_platform_delivery_that_is_not_utf8_is_refused_and_stores_nothing(service):
    from datetime import datetime, timezone

    from inbox_actors.platform.webhook_envelope import build_envelope, sign
    from tests.e2e.chat_helpers import scale_workspace
    from tests.e2e.platform_webhooks import customer_message

    _, number, _, _ = await scale_workspace(service.db)
    message = customer_message("wamid.notutf8", CHAT_PHONE, "hello @", datetime.now(timezone.utc))
    body = build_envelope(number, "15550000000", messages=[message]).replace(b"@", b"\xff\xfe")
    secret = service.app.extensions["inbox"].platform.app_secret
    for content in (body, NOT_UTF8):
        # The signature is checked over the raw bytes first: a wrong one is still a 401.
        unsigned = await service.client.post("/webhooks/whatsapp", content=content, headers={
            "Content-Type": "application/json", "X-Hub-Signature-256": sign("not the secret", content)})
        assert unsigned.status_code == 401 and unsigned.json()["error"] == "invalid_signature"
        signed = await service.client.post("/webhooks/whatsapp", content=content, headers={
            "Content-Type": "application/json", "X-Hub-Signature-256": sign(secret, content)})
        assert signed.status_code == 400 and signed.json()["error"] == "invalid_envelope", signed.text
    assert await service.db.fetchval("SELECT count(*) FROM messages") == 0
    assert await service.db.fetchval("SELECT count(*) FROM conversations") == 0


async def _answer_on(stream: trio.SocketStream, request: bytes) -> bytes:
    await stream.send_all(request)
    response = b""
    while not (b"\r\n\r\n" in response and _complete(response)):
        chunk = await stream.receive_some(65536)
        assert chunk, "the server closed the keep-alive connection"
        response += chunk
    return response


async def test_requests_on_one_keep_alive_connection_each_answer_at_once_read_body_or_not(service):
    # A refused request's body is read and dropped, and a GET (no body) waits for none: neither holds up the
    # next request on the same connection.
    issued = await builders.plaintext_key(service.db)
    auth = f"Authorization: Bearer {issued.key}".encode()
    parts = urlsplit(service.url)
    stream = await trio.open_tcp_stream(parts.hostname, parts.port)
    body = b'{"ignored": "' + b'x' * 200_000 + b'"}'  # more than one read of the socket
    unread = b"\r\n".join([b"POST /api/send-message HTTP/1.1", b"Host: test", b"Authorization: Bearer wrong",
                           b"Content-Type: application/json", f"Content-Length: {len(body)}".encode()])
    plain_get = b"\r\n".join([f"GET {WHOAMI} HTTP/1.1".encode(), b"Host: test", auth])
    async with stream:
        with trio.fail_after(3):
            assert status_of(await _answer_on(stream, unread + b"\r\n\r\n" + body)) == 403
            assert status_of(await _answer_on(stream, plain_get + b"\r\n\r\n")) == 200
            assert status_of(await _answer_on(stream, plain_get + b"\r\n\r\n")) == 200
            assert status_of(await _answer_on(stream, unread + b"\r\n\r\n" + body)) == 403
            assert status_of(await _answer_on(stream, plain_get + b"\r\n\r\n")) == 200


# -- a chunked body over the limit -----------------------------------------------------------------------------

def _chunked(path: str, key: str, size: int, piece: int = 64 * 1024) -> bytes:
    head = (f"POST {path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {key}\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").encode()
    chunk = f"{piece:x}\r\n".encode() + b"a" * piece + b"\r\n"
    return head + chunk * (size // piece) + b"0\r\n\r\n"


async def _next_answer(stream: trio.SocketStream, received: bytearray) -> bytes | None:
    """The next whole answer on `stream` (its head and a body of Content-Length), or None if the server closed
    the connection first; whatever follows it stays in `received`."""
    while True:
        head, found, rest = bytes(received).partition(b"\r\n\r\n")
        if found and _complete(bytes(received)):
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            answer = head + found + rest[:length]
            del received[:len(answer)]
            return answer
        try:
            chunk = await stream.receive_some(65536)
        except trio.BrokenResourceError:
            return None
        if not chunk:
            return None
        received += chunk


async def chunked_over_the_limit_then_another(url: str, path: str, key: str, size: int) -> tuple[bytes, bytes | None]:
    """Send `size` bytes to `path` chunked (no Content-Length) on a kept-alive connection, then a whoami on the same
    one: the answer to the first, and to the second or None when the server closed the connection instead. Fails if
    either answer does not come within 20 s."""
    parts = urlsplit(url)
    stream = await trio.open_tcp_stream(parts.hostname, parts.port)
    async with stream:
        received = bytearray()
        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                async def write() -> None:
                    try:
                        await stream.send_all(_chunked(path, key, size))
                    except trio.BrokenResourceError:
                        pass          # the server closed the connection after its answer: the rest was not read
                nursery.start_soon(write)
                first = await _next_answer(stream, received)
            assert first is not None, "the connection closed without an answer"
            try:
                await stream.send_all(f"GET {WHOAMI} HTTP/1.1\r\nHost: test\r\n"
                                      f"Authorization: Bearer {key}\r\n\r\n".encode())
            except trio.BrokenResourceError:
                return first, None
            return first, await _next_answer(stream, received)


@pytest.mark.parametrize(("path", "size"), [("/api/bulk-send", 9 * 1024 * 1024),
                                            ("/api/send-message", 2 * 1024 * 1024)])
async def test_a_chunked_body_over_the_limit_is_413_and_the_connection_answers_or_closes(service, path, size):
    """No Content-Length to judge from: the limit (8 MiB for a broadcast, 1 MiB elsewhere) is met while the body
    is read. The kept-alive connection then answers its next request, or is closed; it never hangs."""
    issued = await builders.plaintext_key(service.db)
    first, second = await chunked_over_the_limit_then_another(service.url, path, issued.key, size)
    assert status_of(first) == 413, first
    assert b'"error":"payload_too_large"' in body_of(first)
    assert second is None or status_of(second) == 200, second
    await still_serving(service)
