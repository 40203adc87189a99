"""The per-address limits across the nodes of a cluster: the per-IP ceiling and the sign-in attempts, counted on one
node whichever node a connection lands on.

- A client address's bucket (rate_bucket.py) has one owner at a time: the node rendezvous hashing picks among the
  live nodes (inbox_actors/cluster/live_nodes.py). A node serving a request from the address admits it there: in
  its own bucket when it owns the address, else by asking the owner, `POST /_cluster/address-admission?bucket=…
  &limit=…` over a kept-alive connection with the cluster's proof (forwarding_proof.py), which covers the bucket
  and the limit. The owner counts it in its bucket actor and answers the admission as JSON.
- An owner that does not answer within ASK_SECONDS (dead, paused, stopping) is left out of this node's choice for
  a while: the address is then counted by another node, as if the owner had left, rather than the request refused
  or held up. While views of the live nodes differ (a few seconds after a node joins or leaves), two nodes may
  count one address. A bucket that moves to a new owner starts empty there, as one does after a restart.
- A request to the admission path without a valid proof is any client's: the app answers it 404.
"""

from __future__ import annotations

import logging
import math
from urllib.parse import parse_qs, urlencode

import h11
import msgspec
import trio

from inbox_actors.access.rate_bucket import admit_ip
from inbox_actors.cluster.live_nodes import LiveNodes
from inbox_actors.domain.rate_window import Admission
from inbox_actors.monitoring.metrics import ServiceMetrics
from inbox_actors.outbound_http.connections import (
    EXCHANGE_FAILURES,
    Answer,
    ClosedWithoutAnswer,
    IdleConnections,
    StaleConnection,
    TlsContext,
    exchange,
)
from inbox_actors.runtime import ActorSystem
from inbox_http.cluster.asgi import Scope, Send
from inbox_http.cluster.forwarding_proof import proof_headers
from inbox_http.cluster.node_address import NodeAddress

log = logging.getLogger("inbox_http.cluster.address_admission")

ADMISSION_PATH = "/_cluster/address-admission"
# Below any client's patience, above a kept-alive exchange's few milliseconds on a busy node.
ASK_SECONDS = 1.0
MAX_BUCKET_LENGTH = 512           # an email address is at most 254; an IPv6 /64 far less
MAX_ANSWER_BYTES = 1024
WARN_EVERY_SECONDS = 5.0

_answer = msgspec.json.Decoder(Admission)


class ClusterAddresses:
    """Admits against the bucket on the node that owns the address. `nodes.own_id()` is this node's id."""

    def __init__(self, actors: ActorSystem, nodes: LiveNodes, *, secret: bytes, metrics: ServiceMetrics,
                 max_idle_per_node: int = 32) -> None:
        if not secret:
            raise ValueError("the cluster's secret must not be empty: anyone could make the proof")
        self.actors, self.nodes, self.metrics = actors, nodes, metrics
        self._secret = secret
        self._idle = IdleConnections(max_idle_per_host=max_idle_per_node)
        self._tls = TlsContext()
        self._addresses: dict[str, NodeAddress] = {}
        self._warned_at = -math.inf

    async def admit(self, bucket: str, limit: int) -> Admission:
        owner = self.nodes.owner_of(bucket)
        if owner is None or owner == self.nodes.own_id():
            self.metrics.address_admitted("here")
            return await admit_ip(self.actors, bucket, limit)
        admission = await self._ask(owner, bucket, limit)
        if admission is None:
            self.nodes.away(owner)
            self.metrics.address_admitted("unanswered")
            return await admit_ip(self.actors, bucket, limit)
        self.metrics.address_admitted("owner")
        return admission

    async def aclose(self) -> None:
        self._idle.close()
        await trio.lowlevel.checkpoint()

    async def _ask(self, owner: str, bucket: str, limit: int) -> Admission | None:
        """The owner's admission, or None when it gave none in time (or has no address to ask at)."""
        try:
            address = self._addresses.get(owner) or self._addresses.setdefault(owner, NodeAddress.parse(owner))
        except ValueError:
            self._warn("node %r owns client addresses and has no address to ask at", owner)
            return None
        target = f"{ADMISSION_PATH}?{urlencode({'bucket': bucket, 'limit': limit})}".encode()
        own_id = (self.nodes.own_id() or "").encode("ascii", "replace")
        request = h11.Request(method=b"POST", target=target, headers=[
            (b"host", address.host_header), (b"content-length", b"0"),
            *proof_headers(self._secret, own_id, {"client": None}, b"POST", target)])
        answer = None
        with trio.move_on_after(ASK_SECONDS):
            try:
                answer = await self._exchange(address, request)
            except (*EXCHANGE_FAILURES, ClosedWithoutAnswer) as err:
                self._warn("node %s did not admit an address (%s: %s); counting here", owner, type(err).__name__,
                           err)
                return None
        if answer is None:
            self._warn("node %s did not admit an address within %g s; counting here", owner, ASK_SECONDS)
            return None
        try:
            if answer.status_code != 200 or answer.body is None:
                raise ValueError(f"HTTP {answer.status_code}")
            return _answer.decode(answer.body)
        except (ValueError, msgspec.DecodeError) as err:
            self._warn("node %s answered an admission with no admission (%s); counting here", owner, err)
            return None

    async def _exchange(self, address: NodeAddress, request: h11.Request) -> Answer:
        connection = self._idle.take(address.key)
        while connection is not None and connection.socket_stream.socket.is_readable():
            connection.close()              # closed by the owner while idle (EOF waiting): never written to
            connection = self._idle.take(address.key)
        if connection is None:
            connection = await address.connect(self._tls)
        reusable = False
        try:
            try:
                answer, reusable = await exchange(connection, request, b"", max_body=MAX_ANSWER_BYTES, keep_body=True)
            except StaleConnection:
                # Closed by the owner while idle, before it read the request: once more on a new connection.
                connection.close()
                connection = await address.connect(self._tls)
                answer, reusable = await exchange(connection, request, b"", max_body=MAX_ANSWER_BYTES, keep_body=True)
            return answer
        finally:
            if reusable:
                self._idle.put(address.key, connection)
            else:
                connection.close()

    def _warn(self, message: str, *args: object) -> None:
        # Every request from the owner's addresses meets an owner that is down: said once per WARN_EVERY_SECONDS.
        now = trio.current_time()
        if now - self._warned_at >= WARN_EVERY_SECONDS:
            self._warned_at = now
            log.warning(message, *args)


async def answer_admission(scope: Scope, send: Send, actors: ActorSystem) -> None:
    """Answer another node's ask (its proof verified by the caller): the admission of this node's bucket."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    bucket, limit = query.get("bucket", [""])[0], query.get("limit", [""])[0]
    if scope["method"] != "POST" or not 0 < len(bucket) <= MAX_BUCKET_LENGTH or not limit.isdigit() \
            or not 0 < int(limit) < 2**31:
        await _answer_json(send, 400, b'{"error":"bad_admission","message":"POST with a bucket and a limit."}')
        return
    await _answer_json(send, 200, msgspec.json.encode(await admit_ip(actors, bucket, int(limit))))


async def _answer_json(send: Send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body, "more_body": False})
