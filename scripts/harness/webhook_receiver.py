"""A fast receiver of the service's outbound webhooks in a process of its own, for the webhook benchmark and the
crash check: raw trio sockets and h11, every POST answered 200 with keep-alive; it counts correlation ids
(distinct, duplicates), checks signatures once given the secret, and times each event from its `committed_at` to
its arrival. Its own process, so that its CPU is not the script's nor the service's; also the service's webhook
settings pointed at it, and the outbox's pending count the scripts wait on."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import multiprocessing
import time
from collections.abc import AsyncIterator
from functools import partial

import h11
import httpx
import msgspec
import trio

from harness.meters import process_cpu_seconds
from persistence.database import Database

CONTROL = b"/_control/"

# -- the receiver (a process of its own) ---------------------------------------------------------------------


class _Data(msgspec.Struct):
    committed_at: float | None = None


class _Envelope(msgspec.Struct):
    data: _Data


_ENVELOPE = msgspec.json.Decoder(_Envelope)


class Tally:
    """What the receiver got: every correlation id with its count, and the delays of timed events."""

    def __init__(self) -> None:
        self.secret: bytes | None = None   # set: X-Webhook-Signature is checked on every event
        self.reset()

    def reset(self) -> None:
        self.counts: dict[str, int] = {}
        self.received = self.duplicates = self.bad_signatures = 0
        self.connections = 0      # opened since the last reset: churn shows as many per request
        self.delays: list[float] = []
        self.first_at: float | None = None
        self.last_at: float | None = None

    def take(self, headers: list[tuple[bytes, bytes]], body: bytes, at: float) -> None:
        ident, signature = "", b""
        for name, value in headers:
            if name == b"x-correlation-id":
                ident = value.decode()
            elif name == b"x-webhook-signature":
                signature = value
        self.received += 1
        seen = self.counts.get(ident, 0)
        self.counts[ident] = seen + 1
        self.duplicates += seen > 0
        if self.first_at is None:
            self.first_at = at
        self.last_at = at
        if self.secret is not None and not hmac.compare_digest(
                signature, b"sha256=" + hmac.new(self.secret, body, hashlib.sha256).hexdigest().encode()):
            self.bad_signatures += 1
        if b'"committed_at"' in body:
            committed_at = _ENVELOPE.decode(body).data.committed_at
            if committed_at is not None:
                self.delays.append(at - committed_at)

    def control(self, what: bytes, body: bytes) -> bytes:
        if what == b"stats":
            return msgspec.json.encode({
                "received": self.received, "distinct": len(self.counts), "duplicates": self.duplicates,
                "bad_signatures": self.bad_signatures, "connections": self.connections, "first_at": self.first_at,
                "last_at": self.last_at})
        if what == b"delays":
            return msgspec.json.encode(self.delays)
        if what == b"ids":
            return msgspec.json.encode(self.counts)
        if what == b"reset":
            self.reset()
        elif what == b"secret":
            self.secret = body or None
        return b"{}"


async def _serve_connection(stream: trio.SocketStream, tally: Tally, answer_delay: float) -> None:
    tally.connections += 1
    protocol = h11.Connection(h11.SERVER)
    request: h11.Request | None = None
    chunks: list[bytes] = []
    try:
        while True:
            event = protocol.next_event()
            if event is h11.NEED_DATA:
                protocol.receive_data(await stream.receive_some(65536))
            elif type(event) is h11.Request:
                request, chunks = event, []
            elif type(event) is h11.Data:
                chunks.append(event.data)
            elif type(event) is h11.EndOfMessage:
                at = time.time()
                body = b"".join(chunks)
                if request.target.startswith(CONTROL):
                    answer = tally.control(request.target[len(CONTROL):], body)
                else:
                    tally.take(request.headers, body, at)
                    answer = b"{}"
                    if answer_delay:
                        await trio.sleep(answer_delay)
                await stream.send_all(
                    protocol.send(h11.Response(status_code=200, headers=[
                        (b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())]))
                    + protocol.send(h11.Data(data=answer)) + protocol.send(h11.EndOfMessage()))
                if protocol.our_state is not h11.DONE or protocol.their_state is not h11.DONE:
                    return
                protocol.start_next_cycle()
            elif type(event) is h11.ConnectionClosed:
                return
    except (trio.BrokenResourceError, h11.ProtocolError, OSError):
        return    # the client went away, or spoke nonsense
    finally:
        stream.socket.close()


async def _receive(pipe, answer_delay: float) -> None:
    tally = Tally()
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1", backlog=1024)
    pipe.send(listeners[0].socket.getsockname()[1])
    pipe.close()
    await trio.serve_listeners(partial(_serve_connection, tally=tally, answer_delay=answer_delay), listeners)


def receiver_main(pipe, answer_delay: float) -> None:
    """The receiver process: serve until terminated."""
    try:
        trio.run(_receive, pipe, answer_delay)
    except KeyboardInterrupt:
        pass


class Receiver:
    """The parent's handle on the receiver process: its URL, its tally over HTTP, its CPU time."""

    def __init__(self, process: multiprocessing.Process, port: int) -> None:
        self.process, self.port = process, port
        self.url = f"http://127.0.0.1:{port}"
        self.client = httpx.AsyncClient(base_url=self.url, timeout=30)

    async def _control(self, what: str, body: bytes = b"") -> object:
        answer = await self.client.post(f"/_control/{what}", content=body)
        answer.raise_for_status()
        return answer.json()

    async def stats(self) -> dict:
        return await self._control("stats")

    async def delays(self) -> list[float]:
        return await self._control("delays")

    async def ids(self) -> dict[str, int]:
        return await self._control("ids")

    async def reset(self) -> None:
        await self._control("reset")

    async def check_signatures(self, secret: str) -> None:
        await self._control("secret", secret.encode())

    def cpu_seconds(self) -> float | None:
        return process_cpu_seconds(self.process.pid)


@contextlib.asynccontextmanager
async def running_receiver(answer_delay: float = 0.0) -> AsyncIterator[Receiver]:
    """The receiver in a spawned process (no copy of this one's trio state); terminated on the way out."""
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    process = context.Process(target=receiver_main, args=(theirs, answer_delay), name="webhook receiver",
                              daemon=True)
    process.start()
    theirs.close()
    try:
        try:
            if not await trio.to_thread.run_sync(ours.poll, 60):
                raise EOFError
            port = ours.recv()
        except EOFError:
            raise RuntimeError(f"the receiver did not start (exit code {process.exitcode})") from None
        receiver = Receiver(process, port)
        try:
            yield receiver
        finally:
            with trio.CancelScope(shield=True):
                await receiver.client.aclose()
    finally:
        process.terminate()
        process.join(10)
        if process.is_alive():
            process.kill()
            process.join()




# -- the service's side --------------------------------------------------------------------------------------


async def configure_webhook(service_url: str, key: str, endpoint_url: str, events: list[str]) -> str:
    """Save the settings over HTTP; the signing secret the first save answers."""
    async with httpx.AsyncClient(base_url=service_url, timeout=30) as client:
        answer = await client.put("/api/webhook/outbound/config", headers={"Authorization": f"Bearer {key}"},
                                  json={"endpoint_url": endpoint_url, "events": events})
    if answer.status_code != 200:
        raise RuntimeError(f"saving the webhook settings answered {answer.status_code}: {answer.text[:500]}")
    return answer.json().get("secret", "")


async def pending_count(db: Database, workspace_id: int) -> int:
    return await db.fetchval("SELECT count(*) FROM webhook_outbox"
                             " WHERE workspace_id = $1 AND outcome = 'pending' AND NOT test", workspace_id)
