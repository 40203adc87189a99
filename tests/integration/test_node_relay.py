"""NodeRelay on real sockets: a target node (a raw ASGI app under Hypercorn on 127.0.0.1) and a front node whose
app relays every request to it (Hypercorn too), driven by httpx; a raw trio + h11 server where a test needs a
target that misbehaves exactly (drops a kept-alive connection's second request)."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from functools import partial

import h11
import httpx
import pytest
import trio

from inbox_http.cluster.forwarded_body import as_forwarded
from inbox_http.cluster.forwarding_proof import Forwarded, ProofCheck, Refused, body_digest, sign
from inbox_http.cluster.relay import NodeRelay
from tests.local_http import serve_on_free_port
from tests.waiting import eventually

SECRET = b"the cluster's secret"
NODE = "node-a"
FORWARDING = {"x-inbox-forwarded-by", "x-inbox-forwarded-proof", "x-inbox-client-ip"}
UNAVAILABLE = {"error": "node_unavailable",
               "message": "The node that serves this workspace cannot be reached. Please try again."}


async def _lifespan(receive, send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _reply(send, status: int, payload: object, headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), *headers]})
    await send({"type": "http.response.body", "body": json.dumps(payload).encode()})


def _text_headers(headers) -> list[list[str]]:
    return [[name.decode("latin-1"), value.decode("latin-1")] for name, value in headers]


@dataclass
class Target:
    """The node that owns the workspace, checking the proofs as the service does (routing.py); what it answers
    depends on the path."""

    client_ports: set[int] = field(default_factory=set)
    release: trio.Event = field(default_factory=trio.Event)          # lets /stream send its second chunk
    disconnected: trio.Event = field(default_factory=trio.Event)     # /stream or /hang saw its client leave
    upload_started: trio.Event = field(default_factory=trio.Event)   # /upload read a first part of the body
    forwarding_headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    proofs: ProofCheck = field(default_factory=lambda: ProofCheck(SECRET))
    forwarded: Forwarded | None = None                                 # the last request's verified proof

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        self.client_ports.add(scope["client"][1])
        self.forwarding_headers = [(name, value) for name, value in scope["headers"]
                                   if name.decode("latin-1") in FORWARDING]
        proof = self.proofs.check(scope)
        if isinstance(proof, Refused):
            await proof.answer(send)
            return
        self.forwarded = proof
        if proof is not None:
            scope, receive, send = as_forwarded(proof, scope, receive, send)
        path = scope["path"]
        if path == "/stream":
            await self._stream(receive, send)
        elif path == "/hang":
            await self._until_disconnect(receive)
        elif path == "/broken":                   # returns inside its answer: Hypercorn closes the connection
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"data: one\n\n", "more_body": True})
        elif path == "/status/404":
            await _reply(send, 404, {"error": "not_found"})
        elif path == "/status/429":
            await _reply(send, 429, {"error": "rate_limited"}, (
                (b"retry-after", b"7"), (b"x-ratelimit-remaining", b"0"),
                (b"keep-alive", b"timeout=5"), (b"connection", b"x-hop"), (b"x-hop", b"1")))
        elif path == "/forwarding":
            await self._forwarding(scope, send)
        else:
            await self._echo(scope, receive, send)

    async def _echo(self, scope, receive, send) -> None:
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if message["type"] == "http.request" and message.get("body"):
                self.upload_started.set()
            if not message.get("more_body", False):
                break
        await _reply(send, 201, {
            "method": scope["method"], "raw_path": scope["raw_path"].decode("latin-1"),
            "path": scope["path"], "query_string": scope["query_string"].decode("latin-1"),
            "headers": _text_headers(scope["headers"]), "body": body.decode("latin-1"),
            "sha256": hashlib.sha256(body).hexdigest(), "length": len(body)}, ((b"x-echo", b"yes"),))

    async def _forwarding(self, scope, send) -> None:
        forwarded = self.forwarded
        await _reply(send, 200, {
            "headers": _text_headers(self.forwarding_headers), "client": scope["client"][0],
            "forwarded_by": forwarded.node_id if forwarded else None,
            "client_ip": forwarded.client_ip if forwarded else None,
            "wrong_secret": ProofCheck(b"wrong").check(scope)})

    async def _stream(self, receive, send) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]})
        await send({"type": "http.response.body", "body": b"data: one\n\n", "more_body": True})
        async with trio.open_nursery() as nursery:
            async def until_disconnect() -> None:
                await self._until_disconnect(receive)
                nursery.cancel_scope.cancel()

            nursery.start_soon(until_disconnect)
            await self.release.wait()
            await send({"type": "http.response.body", "body": b"data: two\n\n", "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            nursery.cancel_scope.cancel()

    async def _until_disconnect(self, receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        self.disconnected.set()


def front_app(relay: NodeRelay, target_url: str):
    async def app(scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        await relay.forward(scope, receive, send, target_url)
    return app


@dataclass
class Cluster:
    target: Target
    target_url: str
    relay: NodeRelay
    client: httpx.AsyncClient


async def start_front(nursery: trio.Nursery, relay: NodeRelay, target_url: str) -> str:
    return await nursery.start(serve_on_free_port, front_app(relay, target_url))


@pytest.fixture
async def cluster(nursery):
    target = Target()
    target_url = await nursery.start(serve_on_free_port, target)
    relay = NodeRelay(node_id=NODE, secret=SECRET)
    front_url = await start_front(nursery, relay, target_url)
    async with httpx.AsyncClient(base_url=front_url, timeout=10) as client:
        yield Cluster(target, target_url, relay, client)
    await relay.aclose()


def _without(headers, names: set[str]) -> list[list[str]]:
    return sorted([name, value] for name, value in headers if name not in names)


async def test_a_get_arrives_unchanged_but_for_the_hop_by_hop_headers(cluster):
    hop_by_hop = {"Keep-Alive": "timeout=5", "TE": "trailers", "Proxy-Authorization": "Basic eA==",
                  "Connection": "keep-alive, x-hop", "X-Hop": "1"}
    response = await cluster.client.get("/api/caf%C3%A9/a%2Fb%20c?q=a%20b&tag=x&tag=y",
                                        headers={"X-Custom": "v1", **hop_by_hop})

    assert response.status_code == 201
    assert response.headers["x-echo"] == "yes"
    assert response.headers.get_list("date") == [response.headers["date"]]    # the front's own, not two
    seen = response.json()
    assert (seen["method"], seen["raw_path"], seen["path"], seen["query_string"]) == (
        "GET", "/api/caf%C3%A9/a%2Fb%20c", "/api/café/a/b c", "q=a%20b&tag=x&tag=y")
    assert seen["body"] == ""
    sent = [[name.decode().lower(), value.decode()] for name, value in response.request.headers.raw]
    assert _without(seen["headers"], FORWARDING) == _without(sent, {name.lower() for name in hop_by_hop})
    assert ["x-custom", "v1"] in seen["headers"]


async def test_a_post_brings_its_json_body_and_content_length(cluster):
    payload = {"text": "héllo, ünïcode", "items": list(range(50))}
    response = await cluster.client.post("/api/inbox/conversations/919876543211/reply?draft=1", json=payload,
                                         headers={"Idempotency-Key": "k-1"})

    assert response.status_code == 201
    seen = response.json()
    assert (seen["method"], seen["raw_path"], seen["query_string"]) == (
        "POST", "/api/inbox/conversations/919876543211/reply", "draft=1")
    assert json.loads(seen["body"].encode("latin-1")) == payload
    sent = [[name.decode().lower(), value.decode()] for name, value in response.request.headers.raw]
    assert _without(seen["headers"], FORWARDING) == _without(sent, {"connection"})
    assert ["content-length", str(len(response.request.content))] in seen["headers"]


async def test_error_answers_come_back_with_their_status_and_headers(cluster):
    not_found = await cluster.client.get("/status/404")
    assert (not_found.status_code, not_found.json()) == (404, {"error": "not_found"})
    assert not_found.headers["content-type"] == "application/json"

    limited = await cluster.client.get("/status/429")
    assert (limited.status_code, limited.json()) == (429, {"error": "rate_limited"})
    assert (limited.headers["retry-after"], limited.headers["x-ratelimit-remaining"]) == ("7", "0")
    assert "keep-alive" not in limited.headers and "x-hop" not in limited.headers     # hop-by-hop


async def test_a_streamed_answer_reaches_the_client_chunk_by_chunk(cluster):
    with trio.fail_after(10):        # a relay that waited for the whole answer would never end
        async with cluster.client.stream("GET", "/stream") as response:
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/event-stream"
            chunks = response.aiter_raw()
            assert await anext(chunks) == b"data: one\n\n"
            assert not cluster.target.release.is_set()
            cluster.target.release.set()
            assert b"".join([chunk async for chunk in chunks]) == b"data: two\n\n"


async def test_an_upload_streams_to_the_target_as_it_arrives(cluster):
    # Longer than the seal: the target passes on all but the last SEAL_BYTES it has, which may be the seal.
    part_one = b"part one;" * 10

    async def body():
        yield part_one
        with trio.fail_after(10):      # only a relay that passed part one on lets this end
            await cluster.target.upload_started.wait()
        yield b"part two"

    response = await cluster.client.post("/upload", content=body())

    seen = response.json()
    assert (response.status_code, seen["body"]) == (201, part_one.decode() + "part two")
    assert ["transfer-encoding", "chunked"] in seen["headers"]
    assert not any(name == "content-length" for name, _value in seen["headers"])
    # Streamed, so sealed: the target checked the seal that followed the body, and passed on the body alone.
    assert cluster.target.forwarded.seal is not None


async def test_a_large_upload_keeps_its_content_length(cluster):
    body = bytes(range(256)) * 1200                  # 300 KiB: above what the relay reads whole
    response = await cluster.client.put("/files/1", content=body)

    seen = response.json()
    assert (seen["length"], seen["sha256"]) == (len(body), hashlib.sha256(body).hexdigest())
    assert ["content-length", str(len(body))] in seen["headers"]       # the body's own, the seal's taken off
    assert not any(name == "transfer-encoding" for name, _value in seen["headers"])
    assert cluster.target.forwarded.seal is not None


async def test_a_clients_forwarding_headers_are_replaced_and_only_the_secret_verifies_them(cluster):
    forged = {"X-Inbox-Forwarded-By": "intruder", "X-Inbox-Client-Ip": "6.6.6.6",
              "X-Inbox-Forwarded-Proof": "00" * 32}
    response = await cluster.client.get("/forwarding?x=1", headers=forged)

    seen = response.json()
    names = [name for name, _value in seen["headers"]]
    assert sorted(names) == sorted(FORWARDING)                  # one of each: the relay's
    assert dict(seen["headers"])["x-inbox-forwarded-by"] == NODE
    assert dict(seen["headers"])["x-inbox-client-ip"] == "127.0.0.1"
    assert (seen["forwarded_by"], seen["client_ip"], seen["wrong_secret"]) == (NODE, "127.0.0.1", None)

    # Straight to the target: forged headers prove nothing, nor does a real proof on another path.
    relayed = [(name.decode(), value.decode()) for name, value in cluster.target.forwarding_headers]
    async with httpx.AsyncClient(base_url=cluster.target_url, timeout=10) as direct:
        assert (await direct.get("/forwarding?x=1", headers=forged)).json()["forwarded_by"] is None
        assert (await direct.get("/forwarding?x=2", headers=relayed)).json()["forwarded_by"] is None


async def _captured_post(cluster, body: dict) -> list[tuple[str, str]]:
    """The forwarding headers of a POST /echo the relay sent the target with `body`."""
    response = await cluster.client.post("/echo", json=body)
    assert response.status_code == 201 and cluster.target.forwarded is not None
    return [(name.decode(), value.decode()) for name, value in cluster.target.forwarding_headers]


async def test_a_captured_proof_is_taken_once_and_for_its_own_method_path_and_body_only(cluster):
    """A proof seen on the wire, sent again: for the same request it is a replay (its nonce was taken); for another
    method or path it does not verify, so the request is any client's; with another body it never reaches the
    handler as a body."""
    captured = await _captured_post(cluster, {"to": "919800000001", "message": "one"})
    async with httpx.AsyncClient(base_url=cluster.target_url, timeout=10) as direct:
        again = await direct.post("/echo", json={"to": "919800000001", "message": "one"}, headers=captured)
        assert (again.status_code, again.json()["error"]) == (403, "forwarding_replayed")
        other_body = await direct.post("/echo", json={"to": "919800000002", "message": "two"}, headers=captured)
        assert (other_body.status_code, other_body.json()["error"]) == (403, "forwarding_replayed")
        for method, path in (("POST", "/echo?again=1"), ("PUT", "/echo")):
            answer = await direct.request(method, path, json={"to": "919800000001", "message": "one"},
                                          headers=captured)
            assert answer.status_code == 201 and cluster.target.forwarded is None, (method, path)

        # A proof not yet used, with a body it was not made for: refused, and the handler never read a body.
        fresh = await _captured_post(cluster, {"to": "919800000001", "message": "one"})
        cluster.target.proofs = ProofCheck(SECRET)                 # as if the relayed one had never arrived
        swapped = await direct.post("/echo", json={"to": "919800000002", "message": "two"}, headers=fresh)
    assert (swapped.status_code, swapped.json()["error"]) == (400, "forwarded_body_mismatch")


@pytest.mark.parametrize("offset", [-31.0, 31.0])
async def test_a_proof_made_out_of_the_window_is_refused_and_says_why(cluster, offset):
    body = b'{"n": 1}'
    signed = sign(SECRET, NODE.encode(), b"203.0.113.9", b"POST", b"/echo", body_digest(body),
                  now=time.time() + offset)
    headers = [(name.decode(), value.decode()) for name, value in signed.headers]
    async with httpx.AsyncClient(base_url=cluster.target_url, timeout=10) as direct:
        stale = await direct.post("/echo", content=body, headers=headers)
        assert (stale.status_code, stale.json()["error"]) == (403, "forwarding_stale")
        side = "behind" if offset < 0 else "ahead of"
        assert f"made 31 s {side} this node's clock" in stale.json()["message"]
        # Within the window, the same request is taken.
        signed = sign(SECRET, NODE.encode(), b"203.0.113.9", b"POST", b"/echo", body_digest(body),
                      now=time.time() + offset * 0.9)
        taken = await direct.post("/echo", content=body, headers=[(n.decode(), v.decode()) for n, v in signed.headers])
    assert taken.status_code == 201 and cluster.target.forwarded.client_ip == "203.0.113.9"


async def test_sequential_requests_reuse_one_connection_to_the_target(cluster):
    for number in range(3):
        response = await cluster.client.post("/echo", json={"n": number})
        assert response.status_code == 201
    await cluster.client.get("/status/404")

    assert len(cluster.target.client_ports) == 1
    assert cluster.relay.idle_connections() == 1


async def test_a_target_not_listening_is_answered_503_node_unavailable(nursery):
    with trio.socket.socket() as unused:             # bound, never listening: a connection is refused
        await unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
        relay = NodeRelay(node_id=NODE, secret=SECRET)
        front_url = await start_front(nursery, relay, f"http://127.0.0.1:{port}")
        async with httpx.AsyncClient(base_url=front_url, timeout=10) as client:
            response = await client.post("/api/anything", json={"a": 1})

    assert (response.status_code, response.json()) == (503, UNAVAILABLE)
    assert response.headers["retry-after"] == "1"
    assert response.headers["content-type"] == "application/json"


async def test_a_target_that_had_the_request_and_does_not_answer_in_time_is_answered_504(nursery):
    """It may have carried the request out: the caller is told so, and must not serve it a second time."""
    target = Target()
    target_url = await nursery.start(serve_on_free_port, target)
    relay = NodeRelay(node_id=NODE, secret=SECRET, first_byte_timeout=0.3)
    handled: list[bool] = []

    async def front(scope, receive, send):
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
        else:
            handled.append(await relay.forward(scope, receive, send, target_url, answer_unreachable=False))

    front_url = await nursery.start(serve_on_free_port, front)
    async with httpx.AsyncClient(base_url=front_url, timeout=10) as client:
        response = await client.get("/hang")

    assert (response.status_code, response.json()["error"]) == (504, "node_timeout")
    assert "may have been carried out" in response.json()["message"]
    await eventually(lambda: handled == [True])
    with trio.fail_after(10):
        await target.disconnected.wait()             # the relay closed the connection it gave up on


async def test_a_client_leaving_mid_stream_closes_the_connection_to_the_target(cluster):
    with trio.fail_after(10):
        async with cluster.client.stream("GET", "/stream") as response:
            assert await anext(response.aiter_raw()) == b"data: one\n\n"
        # Leaving the block before the body ended closed the client's connection.
        await cluster.target.disconnected.wait()

    assert not cluster.target.release.is_set()
    assert cluster.relay.idle_connections() == 0


async def test_an_answer_the_target_breaks_off_is_broken_off_to_the_client(cluster):
    with pytest.raises(httpx.RemoteProtocolError):
        await cluster.client.get("/broken")
    assert cluster.relay.idle_connections() == 0


@dataclass
class AnswersOncePerConnection:
    """An HTTP/1.1 server that answers a connection's first request with keep-alive, then closes it at the next
    request without answering: a kept-alive connection the server gave up on."""

    port: int = 0
    connections: int = 0

    async def start(self, nursery: trio.Nursery) -> str:
        listeners = await nursery.start(partial(trio.serve_tcp, self._serve, 0, host="127.0.0.1"))
        self.port = listeners[0].socket.getsockname()[1]
        return f"http://127.0.0.1:{self.port}"

    async def _serve(self, stream: trio.SocketStream) -> None:
        self.connections += 1
        protocol = h11.Connection(h11.SERVER)
        answered = False
        try:
            while True:
                event = protocol.next_event()
                if event is h11.NEED_DATA:
                    protocol.receive_data(await stream.receive_some(65536))
                elif type(event) is h11.ConnectionClosed or type(event) is h11.EndOfMessage and answered:
                    return
                elif type(event) is h11.EndOfMessage:
                    await stream.send_all(
                        protocol.send(h11.Response(status_code=200, headers=[(b"content-length", b"2")]))
                        + protocol.send(h11.Data(data=b"ok")) + protocol.send(h11.EndOfMessage()))
                    protocol.start_next_cycle()
                    answered = True
        except (trio.BrokenResourceError, h11.RemoteProtocolError):
            return
        finally:
            await trio.aclose_forcefully(stream)


async def test_a_dropped_kept_alive_connection_is_retried_only_for_a_request_that_changes_nothing(nursery):
    """The server read the request and closed the connection without answering: to the relay that is the same as a
    connection closed while idle, or a target that read the request and died. A GET goes once more; a POST may have
    been carried out, so it is answered 504 and not sent again."""
    server = AnswersOncePerConnection()
    relay = NodeRelay(node_id=NODE, secret=SECRET)
    front_url = await start_front(nursery, relay, await server.start(nursery))

    async with httpx.AsyncClient(base_url=front_url, timeout=10) as client:
        first = await client.get("/a")
        retried = await client.get("/b")           # the kept connection is dropped: a new one
        assert (first.status_code, first.text, retried.status_code, retried.text) == (200, "ok", 200, "ok")
        assert server.connections == 2

        not_again = await client.post("/c", json={"n": 3})
    assert not_again.status_code == 504 and not_again.json()["error"] == "node_timeout", not_again.text
    assert server.connections == 2


async def test_a_dropped_kept_alive_connection_under_a_streamed_body_is_502(nursery):
    server = AnswersOncePerConnection()
    relay = NodeRelay(node_id=NODE, secret=SECRET)
    front_url = await start_front(nursery, relay, await server.start(nursery))

    async def streamed():
        yield b"part one;"
        yield b"part two"

    async with httpx.AsyncClient(base_url=front_url, timeout=10) as client:
        assert (await client.get("/a")).status_code == 200
        not_replayable = await client.put("/c", content=streamed())
    assert not_replayable.status_code == 502
    assert not_replayable.json()["error"] == "node_failed"
    assert server.connections == 1
