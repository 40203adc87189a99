"""The webhook transport against a real receiver on 127.0.0.1: a raw trio + h11 server in this file, so each
test can make it misbehave exactly (hang, close an idle connection, answer with a huge body)."""

from __future__ import annotations

import logging
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import h11
import pytest
import trio

from inbox_actors.webhooks.address_guard import AddressGuard, parse_networks
from inbox_actors.webhooks.transport import AttemptResult, WebhookTransport
from tests.certificates import self_signed_loopback

LOCAL_GUARD = AddressGuard(parse_networks("127.0.0.0/8"))
SIGNATURE = b"v1,c2VjcmV0LXNpZ25hdHVyZQ=="


@dataclass(frozen=True)
class Received:
    connection: int
    target: str
    headers: dict[bytes, bytes]
    body: bytes


@dataclass(frozen=True)
class Answer:
    status: int = 200
    headers: tuple[tuple[bytes, bytes], ...] = ()
    body: bytes = b""
    hang: bool = False                  # read the request, never answer
    drop: bool = False                  # read the request, close without answering
    close_after: bool = False           # answer (advertising keep-alive), then close the connection


@dataclass
class Receiver:
    """An HTTP/1.1 server whose every answer is `answer(request)`."""

    answer: Callable[[Received], Answer] = lambda request: Answer()
    ssl_context: ssl.SSLContext | None = None
    port: int = 0
    connections: int = 0
    closed_by_server: int = 0
    received: list[Received] = field(default_factory=list)
    closed: trio.Event = field(default_factory=trio.Event)

    async def start(self, nursery: trio.Nursery) -> None:
        listeners = await nursery.start(partial(trio.serve_tcp, self._serve, 0, host="127.0.0.1"))
        self.port = listeners[0].socket.getsockname()[1]

    def url(self, path: str = "/hooks/in", *, scheme: str = "http") -> str:
        return f"{scheme}://127.0.0.1:{self.port}{path}"

    async def _serve(self, stream: trio.SocketStream) -> None:
        self.connections += 1
        number = self.connections
        if self.ssl_context is not None:
            stream = trio.SSLStream(stream, self.ssl_context, server_side=True, https_compatible=True)
        protocol = h11.Connection(h11.SERVER)
        try:
            while True:
                request, body = await _read_request(stream, protocol)
                if request is None:
                    return
                received = Received(number, request.target.decode(), dict(request.headers), body)
                self.received.append(received)
                answer = self.answer(received)
                if answer.hang:
                    await trio.sleep_forever()
                if answer.drop:
                    return
                head = h11.Response(status_code=answer.status,
                                    headers=[(b"content-length", str(len(answer.body)).encode()), *answer.headers])
                await stream.send_all(protocol.send(head) + protocol.send(h11.Data(data=answer.body))
                                      + protocol.send(h11.EndOfMessage()))
                if answer.close_after or protocol.our_state is not h11.DONE:
                    return
                protocol.start_next_cycle()
        except (trio.BrokenResourceError, h11.RemoteProtocolError):
            return
        finally:
            await trio.aclose_forcefully(stream)
            self.closed_by_server += 1
            self.closed.set()
            self.closed = trio.Event()


async def _read_request(stream: trio.abc.Stream, protocol: h11.Connection) -> tuple[h11.Request | None, bytes]:
    request = None
    body = bytearray()
    while True:
        event = protocol.next_event()
        if event is h11.NEED_DATA:
            protocol.receive_data(await stream.receive_some(65536))
        elif isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            return request, bytes(body)
        elif isinstance(event, h11.ConnectionClosed):
            return None, b""


@pytest.fixture
async def receiver(nursery):
    receiver = Receiver()
    await receiver.start(nursery)
    return receiver


@pytest.fixture
async def transport():
    async with WebhookTransport(LOCAL_GUARD) as transport:
        yield transport


async def post(transport: WebhookTransport, url: str, body: bytes = b'{"type":"test"}', *,
               timeout: float = 5) -> AttemptResult:
    endpoint = LOCAL_GUARD.check_url(url)
    return await transport.post(endpoint, [(b"webhook-signature", SIGNATURE)], body, timeout=timeout)


async def test_a_2xx_delivers_the_exact_body_with_the_headers(receiver, transport):
    body = '{"type":"message.received","text":"héllo"}'.encode() + b"x" * 100_000
    result = await post(transport, receiver.url("/hooks/in?workspace=7"), body)
    assert (result.status_code, result.error, result.succeeded, result.retryable) == (200, None, True, False)
    [request] = receiver.received
    assert request.body == body
    assert request.target == "/hooks/in?workspace=7"
    assert request.headers[b"host"] == f"127.0.0.1:{receiver.port}".encode()
    assert request.headers[b"content-type"] == b"application/json"
    assert request.headers[b"content-length"] == str(len(body)).encode()
    assert request.headers[b"user-agent"] == b"inbox-actors-webhooks/1.0"
    assert request.headers[b"webhook-signature"] == SIGNATURE


@pytest.mark.parametrize(("status", "retryable"), [(500, True), (503, True), (404, False), (400, False),
                                                   (302, False)])
async def test_an_error_status_is_a_failure_retryable_only_for_5xx(receiver, transport, status, retryable):
    receiver.answer = lambda request: Answer(status, headers=((b"location", b"http://127.0.0.1:1/elsewhere"),))
    result = await post(transport, receiver.url())
    assert (result.status_code, result.error, result.succeeded, result.retryable) == (status, None, False, retryable)
    assert len(receiver.received) == 1          # a redirect is not followed


async def test_a_receiver_that_never_answers_times_out_at_the_deadline(receiver, transport, autojump_clock):
    receiver.answer = lambda request: Answer(hang=request.connection == 1)
    result = await post(transport, receiver.url(), timeout=8)
    assert (result.status_code, result.error, result.duration_ms, result.retryable) == (
        None, "timeout after 8s", 8000, True)
    assert (await post(transport, receiver.url())).succeeded
    assert receiver.connections == 2            # the timed-out connection was not reused


async def test_a_closed_port_is_connection_refused():
    with socket.socket() as probe:               # a port nothing listens on once this closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with WebhookTransport(LOCAL_GUARD) as transport:
        result = await post(transport, f"http://127.0.0.1:{port}/in")
    assert (result.status_code, result.error, result.retryable) == (None, "connection refused", True)


async def test_keep_alive_reuses_one_connection(receiver, transport):
    for _ in range(3):
        assert (await post(transport, receiver.url())).succeeded
    assert receiver.connections == 1
    assert [request.connection for request in receiver.received] == [1, 1, 1]
    assert transport.idle_connections() == 1


async def test_connection_close_in_the_answer_is_honoured(receiver, transport):
    receiver.answer = lambda request: Answer(headers=((b"connection", b"close"),))
    assert (await post(transport, receiver.url())).succeeded
    assert (await post(transport, receiver.url())).succeeded
    assert receiver.connections == 2
    assert transport.idle_connections() == 0


async def test_an_idle_connection_the_server_closed_is_replaced_and_the_post_sent_once(receiver, transport, caplog):
    caplog.set_level(logging.DEBUG, logger="inbox_actors.outbound_http.connections")
    receiver.answer = lambda request: Answer(close_after=request.connection == 1)
    closed = receiver.closed
    assert (await post(transport, receiver.url(), b'{"n":1}')).succeeded
    await closed.wait()                          # the pooled connection is now dead on the server's side
    result = await post(transport, receiver.url(), b'{"n":2}')
    assert (result.status_code, result.error) == (200, None)
    assert [(request.connection, request.body) for request in receiver.received] == [(1, b'{"n":1}'), (2, b'{"n":2}')]
    assert "closed by the server; sending on a new one" in caplog.text
    assert SIGNATURE.decode() not in caplog.text


async def test_a_new_connection_closed_without_an_answer_is_an_error_not_a_retry(receiver, transport):
    receiver.answer = lambda request: Answer(drop=True)
    result = await post(transport, receiver.url())
    assert (result.status_code, result.error, result.retryable) == (
        None, "the server closed the connection without answering", True)
    assert len(receiver.received) == 1


async def test_a_large_answer_is_not_read_through_and_its_connection_not_reused(receiver, transport):
    receiver.answer = lambda request: Answer(body=b"z" * 1_000_000)
    assert (await post(transport, receiver.url())).status_code == 200
    assert transport.idle_connections() == 0
    receiver.answer = lambda request: Answer(body=b"z" * 60_000)
    assert (await post(transport, receiver.url())).status_code == 200
    assert transport.idle_connections() == 1     # under the limit: read, discarded, kept


async def test_a_refused_destination_is_never_connected_to(receiver):
    endpoint = LOCAL_GUARD.check_url(receiver.url())   # saved while 127.0.0.0/8 was allowed
    async with WebhookTransport(AddressGuard()) as transport:
        result = await transport.post(endpoint, [], b"{}", timeout=5)
    assert (result.status_code, result.error) == (None, "destination refused: 127.0.0.1 is a loopback address")
    assert (result.refused, result.retryable) == (True, False)
    assert receiver.connections == 0


async def test_timeouts_and_errors_never_show_header_values(transport):
    with pytest.raises(ValueError, match="invalid name or value") as raised:
        await transport.post(LOCAL_GUARD.check_url("http://127.0.0.1:9/"), [(b"webhook-signature", b"sec\nret")],
                             b"{}", timeout=1)
    assert "sec" not in str(raised.value)
    with pytest.raises(ValueError, match="sets the Host header itself"):
        await transport.post(LOCAL_GUARD.check_url("http://127.0.0.1:9/"), [(b"Host", b"evil")], b"{}", timeout=1)


# -- https ----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 and its key, as files."""
    cert_pem, key_pem = self_signed_loopback()
    directory = tmp_path_factory.mktemp("tls")
    (directory / "cert.pem").write_bytes(cert_pem)
    (directory / "key.pem").write_bytes(key_pem)
    return directory / "cert.pem", directory / "key.pem"


async def test_https_verifies_the_certificate_and_keeps_the_connection(nursery, certificate):
    cert, key = certificate
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)
    receiver = Receiver(ssl_context=server_context)
    await receiver.start(nursery)
    url = receiver.url(scheme="https")

    async with WebhookTransport(LOCAL_GUARD) as untrusting:      # the system's CAs: a self-signed one fails
        result = await post(untrusting, url)
    assert result.status_code is None and result.error.startswith("TLS certificate not accepted")

    async with WebhookTransport(LOCAL_GUARD, ssl_context=ssl.create_default_context(cafile=cert)) as transport:
        assert (await post(transport, url, b'{"n":1}')).succeeded
        assert (await post(transport, url, b'{"n":2}')).succeeded
    assert [request.body for request in receiver.received] == [b'{"n":1}', b'{"n":2}']
    assert receiver.connections == 2            # one refused handshake, then one kept-alive connection
