"""The per-address limits across the nodes of a cluster: the per-IP ceiling and the sign-in attempts, counted on one
node whichever node a connection lands on.

- A client address's bucket (rate_bucket.py) has one owner at a time: the node rendezvous hashing picks among the
  live nodes (inbox_actors/cluster/membership.py). A node serving a request from the address admits it there: in
  its own bucket when it owns the address, else by asking the owner. The owner counts it in its bucket actor and
  answers the admission.
- The asks for one owner go one exchange at a time, and those that arrive while one is under way go together in
  the next (at most MAX_BATCH): one round trip, whatever the number of requests waiting, so the cost per request
  falls as the load rises. An exchange is `POST /_cluster/address-admission` with a JSON list of `{bucket, limit}`,
  over a kept-alive connection, with the cluster's proof (forwarding_proof.py), which covers the body by its digest
  and is accepted once, within its replay window: an exchange seen on the wire and sent again counts nothing. The
  answer is the list of admissions, in order.
- An owner that does not answer within ASK_SECONDS (dead, paused, stopping) is left out of this node's choice for
  a while: the address is then counted by another node, as if the owner had left, rather than the request refused.
  (A node that is gone refuses the connection at once; a paused one holds the asks sent to it for ASK_SECONDS.)
  While views of the live nodes differ (a few seconds after a node joins or leaves), two nodes may
  count one address. A bucket that moves to a new owner starts empty there, as one does after a restart.
- A request to the admission path without a valid proof is any client's: the app answers it 404.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from functools import partial

import h11
import msgspec
import trio

from inbox_actors.access.rate_bucket import admit_ip
from inbox_actors.cluster.membership import ClusterMembership
from inbox_actors.domain.rate_window import Admission
from inbox_actors.monitoring.metrics import ServiceMetrics
from inbox_actors.outbound_http.connections import (
    EXCHANGE_FAILURES,
    ClosedWithoutAnswer,
    IdleConnections,
    TlsContext,
    pooled_exchange,
)
from inbox_actors.runtime import ActorSystem
from inbox_http.cluster.asgi import Receive, Scope, Send
from inbox_http.cluster.forwarding_proof import body_digest, sign
from inbox_http.cluster.node_address import NodeAddress

log = logging.getLogger("inbox_http.cluster.address_admission")

ADMISSION_PATH = "/_cluster/address-admission"
# Below any client's patience, above an exchange's few milliseconds on a busy node.
ASK_SECONDS = 1.0
# Asks in one exchange: a bucket is at most MAX_BUCKET_LENGTH, so a batch stays below MAX_BATCH_BYTES.
MAX_BATCH = 100
MAX_BUCKET_LENGTH = 512                  # an email address is at most 254; an IPv6 /64 far less
MAX_BATCH_BYTES = MAX_BATCH * (MAX_BUCKET_LENGTH + 64)
MAX_ANSWER_BYTES = MAX_BATCH * 160
WARN_EVERY_SECONDS = 5.0


class AddressAsk(msgspec.Struct, frozen=True):
    bucket: str
    limit: int


_asks = msgspec.json.Decoder(list[AddressAsk])
_admissions = msgspec.json.Decoder(list[Admission])


@dataclass(eq=False)
class _Waiting:
    ask: AddressAsk
    done: bool = False
    admission: Admission | None = None    # None when done: the owner gave none, count here
    turn: trio.Event = field(default_factory=trio.Event)   # set when done, or when it is this one's turn to send


@dataclass(eq=False)
class _Lane:
    """The asks for one owner: at most one exchange under way, the rest waiting for the next."""

    waiting: list[_Waiting] = field(default_factory=list)
    sending: bool = False


class ClusterAddresses:
    """Admits against the bucket on the node that owns the address. `nodes.own_id()` is this node's id."""

    def __init__(self, actors: ActorSystem, nodes: ClusterMembership, *, secret: bytes, metrics: ServiceMetrics,
                 max_idle_per_node: int = 4) -> None:
        if not secret:
            raise ValueError("the cluster's secret must not be empty: anyone could make the proof")
        self.actors, self.nodes, self.metrics = actors, nodes, metrics
        self._secret = secret
        self._idle = IdleConnections(max_idle_per_host=max_idle_per_node)
        self._tls = TlsContext()
        self._addresses: dict[str, NodeAddress] = {}
        self._lanes: dict[str, _Lane] = {}
        self._warned_at = -math.inf

    async def admit(self, bucket: str, limit: int) -> Admission:
        owner = self.nodes.owner_of(bucket)
        if owner is None or owner == self.nodes.own_id():
            self.metrics.address_admitted("here")
            return await admit_ip(self.actors, bucket, limit)
        admission = await self._in_lane(owner, AddressAsk(bucket, limit))
        if admission is None:
            self.nodes.away(owner)
            self.metrics.address_admitted("unanswered")
            return await admit_ip(self.actors, bucket, limit)
        self.metrics.address_admitted("owner")
        return admission

    async def aclose(self) -> None:
        self._idle.close()
        await trio.lowlevel.checkpoint()

    async def _in_lane(self, owner: str, ask: AddressAsk) -> Admission | None:
        """The owner's admission of `ask`, sent alone or with the others waiting; None when it gave none."""
        lane = self._lanes.setdefault(owner, _Lane())
        mine = _Waiting(ask)
        lane.waiting.append(mine)
        try:
            while not mine.done:
                if lane.sending:
                    await mine.turn.wait()
                    mine.turn = trio.Event() if not mine.done else mine.turn
                    continue
                await self._send_batch(owner, lane)
            return mine.admission
        finally:
            if not mine.done and mine in lane.waiting:
                lane.waiting.remove(mine)          # cancelled while waiting: nobody sends it now
                if lane.waiting and not lane.sending:
                    lane.waiting[0].turn.set()     # it may have been this one's turn: the next one's now

    async def _send_batch(self, owner: str, lane: _Lane) -> None:
        """Send the first MAX_BATCH waiting asks as one exchange, and hand each its answer; then wake the next in
        line to send the rest. Cancelled meanwhile, the batch goes back to the front of the line."""
        lane.sending = True
        batch, lane.waiting[:MAX_BATCH] = lane.waiting[:MAX_BATCH], []
        answered = False
        try:
            admissions = await self._ask(owner, [waiting.ask for waiting in batch])
            answered = True
        finally:
            lane.sending = False
            if answered:
                for waiting, admission in zip(batch, admissions or [None] * len(batch)):
                    waiting.done, waiting.admission = True, admission
                    waiting.turn.set()
            else:
                lane.waiting[:0] = batch
            if lane.waiting:
                lane.waiting[0].turn.set()
            elif not lane.sending:
                self._lanes.pop(owner, None)

    async def _ask(self, owner: str, asks: list[AddressAsk]) -> list[Admission] | None:
        """The owner's admissions of `asks` in order, or None when it gave none in time (or has no address)."""
        try:
            address = self._addresses.get(owner) or self._addresses.setdefault(owner, NodeAddress.parse(owner))
        except ValueError:
            self._warn("node %r owns client addresses and has no address to ask at", owner)
            return None
        self.metrics.address_admissions_sent(len(asks))
        body = msgspec.json.encode(asks)
        target = ADMISSION_PATH.encode()
        own_id = (self.nodes.own_id() or "").encode("ascii", "replace")
        # Sent again as it is when the idle connection turns out closed (pooled_exchange): the owner closed it unread,
        # so never took the proof's nonce; had it read it after all, it refuses the second, and the asks count here.
        request = h11.Request(method=b"POST", target=target, headers=[
            (b"host", address.host_header), (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *sign(self._secret, own_id, b"", b"POST", target, body_digest(body)).headers])
        answer = None
        with trio.move_on_after(ASK_SECONDS):
            try:
                answer = await pooled_exchange(self._idle, address.key, partial(address.connect, self._tls), request,
                                               body, max_body=MAX_ANSWER_BYTES, keep_body=True)
            except (*EXCHANGE_FAILURES, ClosedWithoutAnswer) as err:
                self._warn("node %s did not admit addresses (%s: %s); counting here", owner, type(err).__name__,
                           err)
                return None
        if answer is None:
            self._warn("node %s did not admit addresses within %g s; counting here", owner, ASK_SECONDS)
            return None
        try:
            if answer.status_code != 200 or answer.body is None:
                # Its error says why: a proof refused as stale names the clocks' offset (forwarding_proof.py).
                said = (answer.body or b"")[:300].decode("utf-8", "replace")
                raise ValueError(f"HTTP {answer.status_code} {said}".rstrip())
            admissions = _admissions.decode(answer.body)
            if len(admissions) != len(asks):
                raise ValueError(f"{len(admissions)} admissions for {len(asks)} asks")
            return admissions
        except (ValueError, msgspec.DecodeError) as err:
            self._warn("node %s answered with no admissions (%s); counting here", owner, err)
            return None

    def _warn(self, message: str, *args: object) -> None:
        # Every request from the owner's addresses meets an owner that is down: said once per WARN_EVERY_SECONDS.
        now = trio.current_time()
        if now - self._warned_at >= WARN_EVERY_SECONDS:
            self._warned_at = now
            log.warning(message, *args)


async def answer_admission(scope: Scope, receive: Receive, send: Send, actors: ActorSystem) -> None:
    """Answer another node's asks (its proof verified by the caller, and its body as it arrives: a body the proof
    does not cover never ends, forwarded_body.py): the admissions of this node's buckets, in order."""
    body = await _body(receive) if scope["method"] == "POST" else None
    asks = None
    if body is not None:
        try:
            asks = _asks.decode(body)
        except (msgspec.DecodeError, msgspec.ValidationError):
            pass
    if not asks or len(asks) > MAX_BATCH or not all(
            0 < len(ask.bucket) <= MAX_BUCKET_LENGTH and 0 < ask.limit < 2**31 for ask in asks):
        await _answer_json(send, 400, b'{"error":"bad_admission","message":"POST a list of buckets and limits."}')
        return
    await _answer_json(send, 200, msgspec.json.encode([await admit_ip(actors, ask.bucket, ask.limit)
                                                       for ask in asks]))


async def _body(receive: Receive) -> bytes | None:
    """The request's body, None past MAX_BATCH_BYTES or when the asking node left."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > MAX_BATCH_BYTES:
            return None
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _answer_json(send: Send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body, "more_body": False})
