"""Which node answers a request: the one holding its workspace's lease (inbox_actors/cluster/placement.py).

In front of the app, each request's workspace is read off what it carries, before any of its work is done: an API
key (the credential cache), a dashboard session (its bearer token or the web app's cookie), an MCP token, or, on
the platform's webhook, the envelope's `phone_number_id`. A workspace this node holds, or takes because no node
holds it, is served here; one another node holds is relayed there unchanged (relay.py), its answer streamed back,
so the key's rate bucket, the chat's actor and the number's send pacer that the request meets are that node's, the
only ones. A request that names no workspace (health, metrics, sign-in, OAuth, the static pages) is served where
it lands. A node of a cluster names itself (`X-Inbox-Node`) on each answer it serves for a workspace it holds, relayed
or not, so that a balancer that knows workspaces sends the workspace's next requests to it and none is relayed. Another
node's ask to admit a request against a client address's bucket is answered here, before any of this
(address_admission.py).

A request another node forwarded carries that node's proof (forwarding_proof.py: accepted once, within a replay
window, its body checked as it arrives): it is served here, with the client's address the forwarding node saw,
whatever this node holds, unless this node has just handed the workspace to another node (rebalancing): then it goes
on to that one, which is sure to hold it. Never further.

While the database is out, a look-up that cannot be made (the workspace of a key or a number, who holds it) is no
reason to serve a request here: the outage is raised, and answered 503 with Retry-After (database_outage.py).

A request served here for a workspace runs under the workspace's lease fence (persistence/statement_fence.py), as
its actors do: the writes it makes itself (an Idempotency-Key's record, say) reach PostgreSQL only while this node
holds the workspace, so a node that wakes from a pause with requests half done writes nothing for a workspace
another node has taken.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from inbox_actors.access.sessions import has_session_shape
from inbox_actors.domain.api_keys import has_key_shape, hash_key
from inbox_actors.mcp import tokens as mcp_tokens
from inbox_actors.runtime.expiring_cache import ExpiringCache
from inbox_http.cluster.address_admission import ADMISSION_PATH, answer_admission
from inbox_http.cluster.asgi import App, Message, Receive, Scope, Send
from inbox_http.cluster.forwarded_body import as_forwarded
from inbox_http.cluster.forwarding_proof import ProofCheck, Refused
from inbox_http.cluster.relay import NodeRelay
from inbox_http.dependencies import Dependencies
from persistence.queries import mcp as mcp_queries
from persistence.queries import sessions as session_queries

log = logging.getLogger("inbox_http.cluster.routing")


PLATFORM_WEBHOOK = "/webhooks/whatsapp"
SESSION_COOKIE = b"inbox_session"
# A platform envelope is read whole to find its number; a bigger body is left to the app, which refuses it.
MAX_ENVELOPE_BYTES = 1024 * 1024
# A body up to this size is kept while a request is relayed, so that it can be served here if the owner is gone.
MAX_KEPT_BODY = 64 * 1024
# Names the node that served a request for its workspace, the one holding it: what a balancer that knows workspaces
# learns where to send the workspace's next requests from (docs/nodes.md, "Sending each workspace to its node").
OWNER_HEADER = b"x-inbox-node"
# How long a secret's workspace is remembered for routing (it never changes; the bound keeps the memory fresh of
# revoked secrets) and how many are.
SECRET_MEMORY_SECONDS = 60.0
SECRETS_REMEMBERED = 50_000


class _Metadata(msgspec.Struct):
    phone_number_id: str


class _Value(msgspec.Struct):
    metadata: _Metadata | None = None


class _Change(msgspec.Struct):
    value: _Value | None = None


class _Entry(msgspec.Struct):
    changes: list[_Change] = []


class _Envelope(msgspec.Struct):
    entry: list[_Entry] = []


_envelope = msgspec.json.Decoder(_Envelope)


class WorkspaceRouting:
    """ASGI middleware: serve a request here or relay it to the node holding its workspace."""

    def __init__(self, app: App, state: Dependencies, *, secret: bytes | None = None) -> None:
        self.app, self.state = app, state
        self.secret = secret or secrets.token_bytes(32)
        self._proofs = ProofCheck(self.secret)
        self._relay: NodeRelay | None = None     # made at the first forward: the node is named once listening
        self._secrets: ExpiringCache[bytes, int | None] = ExpiringCache(SECRET_MEMORY_SECONDS, SECRETS_REMEMBERED)
        self._metrics = state.metrics
        self._under_way: dict[int, int] = {}
        # A node of a cluster names itself on what it serves for a workspace it holds (OWNER_HEADER).
        self._clustered = secret is not None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        proof = self._proofs.check(scope)
        if isinstance(proof, Refused):        # made with the secret, but stale or used before
            await proof.answer(send)
            return
        forwarded = proof is not None
        if forwarded:
            scope, receive, send = as_forwarded(proof, scope, receive, send)
        if forwarded and scope["path"] == ADMISSION_PATH:
            # Another node's ask to count requests against this node's address buckets.
            await answer_admission(scope, receive, send, self.state.actors)
            return
        if forwarded:
            self._metrics.node_request("taken")
        workspace, receive = await self._workspace_of(scope, receive)
        placement = self.state.placement
        if workspace is None or placement.admits(workspace):
            await self._serve_here(workspace, scope, receive, send)
            return
        if forwarded:
            # Sent here as the workspace's node, which this one may not know yet (restarted under its name, it takes
            # its leases back at once). Served here whatever the claim says, unless this node has just handed the
            # workspace on (rebalancing): then to the node it handed it to, which holds it for sure. Never further.
            placement.forget_owner(workspace)        # what this node remembers is older than the forwarder's word
            # The database out (DatabaseUnavailable), here as below: answered 503 (database_outage.py), never served
            # under a lease this node cannot know it holds.
            owner = await placement.claim(workspace)
            handed_to = placement.handed_to(workspace)
            if owner is not None and owner == handed_to:
                await self._relayer().forward(scope, receive, send, owner)
                return
            await self._serve_here(workspace, scope, receive, send)
            return
        owner = await placement.claim(workspace)
        if owner is None:
            await self._serve_here(workspace, scope, receive, send)
            return
        self._metrics.node_request("relayed")
        relay = self._relayer()
        if not owner.startswith(("http://", "https://")):
            log.warning("workspace %d is held by node %r, which has no address to forward to", workspace, owner)
            owner = "http://node-without-an-address.invalid"
        # A body small enough to keep can be served here after all if the owner is gone: it handed the workspace
        # over since this node last asked (a node leaving releases its leases), so asking again takes it.
        body, replay = await _read_body(receive, MAX_KEPT_BODY)
        if body is None:
            if not await relay.forward(scope, replay, send, owner):
                self._metrics.node_request("unreachable")
                placement.forget_owner(workspace)
            return
        # Read whole: each try gets the body afresh, then what the client sends next (its leaving) from `receive`,
        # never the body twice.
        if await relay.forward(scope, _replaying(body, receive), send, owner, answer_unreachable=False):
            return
        self._metrics.node_request("unreachable")
        placement.forget_owner(workspace)
        owner = await placement.claim(workspace)
        if owner is None:
            await self._serve_here(workspace, scope, _replaying(body, receive), send)
        else:
            await relay.forward(scope, _replaying(body, receive), send, owner)

    def _relayer(self) -> NodeRelay:
        if self._relay is None:
            self._relay = NodeRelay(node_id=self.state.placement.node_id, secret=self.secret,
                                    drain_began=self.state.lifecycle.drain_began)
        return self._relay

    def requests_under_way(self, workspace_id: int) -> int:
        """How many requests for the workspace this node is serving now (a hand-over waits for them)."""
        return self._under_way.get(workspace_id, 0)

    async def _serve_here(self, workspace: int | None, scope: Scope, receive: Receive, send: Send) -> None:
        # A forwarded request for a workspace another node holds after all (the forwarding node's knowledge was
        # stale) is fenced by no epoch: it writes nothing, and its actors say where the workspace is served.
        if workspace is None:
            with self.state.placement.guarding(None):
                await self.app(scope, receive, send)
            return
        under_way = self._under_way
        under_way[workspace] = under_way.get(workspace, 0) + 1
        if self._clustered:
            send = self._naming_owner(workspace, send)
        try:
            with self.state.placement.guarding(workspace):
                await self.app(scope, receive, send)
        finally:
            if under_way[workspace] == 1:
                del under_way[workspace]
            else:
                under_way[workspace] -= 1

    def _naming_owner(self, workspace: int, send: Send) -> Send:
        """`send` with OWNER_HEADER added to the answer's head while this node holds the workspace: a balancer that
        remembers it sends the workspace's next requests here, not to a node that would relay them."""
        placement = self.state.placement
        owner = placement.node_id.encode("latin-1")

        async def naming(message: Message) -> None:
            if message["type"] == "http.response.start" and placement.holds(workspace):
                message = {**message, "headers": [*message.get("headers", ()), (OWNER_HEADER, owner)]}
            await send(message)

        return naming

    async def aclose(self) -> None:
        if self._relay is not None:
            await self._relay.aclose()

    async def _workspace_of(self, scope: Scope, receive: Receive) -> tuple[int | None, Receive]:
        """The request's workspace (None: it names none, or nothing it names is known) and how to read its body."""
        headers = scope["headers"]
        if scope["path"] == PLATFORM_WEBHOOK and scope["method"] == "POST":
            body, receive = await _read_body(receive, MAX_ENVELOPE_BYTES)
            return (await self._workspace_of_envelope(body) if body is not None else None), receive
        for name, value in headers:
            if name == b"authorization":
                scheme, _, token = value.decode("latin-1").strip().partition(" ")
                if scheme.lower() == "bearer":
                    return await self._workspace_of_token(token.strip()), receive
                break
        for name, value in headers:
            if name == b"cookie":
                for part in value.decode("latin-1").split(";"):
                    key, _, token = part.strip().partition("=")
                    if key.encode() == SESSION_COOKIE:
                        return await self._workspace_of_token(token), receive
        return None, receive

    async def _workspace_of_token(self, token: str) -> int | None:
        state = self.state
        if has_key_shape(token):
            credential = await state.credentials.lookup(token)
            return credential.workspace_id if credential is not None else None
        if has_session_shape(token):
            return await self._remembered(hash_key(token), session_queries.workspace_of_session)
        if mcp_tokens.has_token_shape(token):
            return await self._remembered(mcp_tokens.hash_token(token), mcp_queries.workspace_of_token)
        return None

    async def _remembered(self, secret_hash: bytes, look_up: Callable[[Any, bytes], Awaitable[int | None]]
                          ) -> int | None:
        known = self._secrets.recall(secret_hash)
        if known is not None:
            return known[0]
        workspace = await look_up(self.state.db, secret_hash)
        self._secrets.keep(secret_hash, workspace)
        return workspace

    async def _workspace_of_envelope(self, body: bytes) -> int | None:
        try:
            envelope = _envelope.decode(body)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None       # the app says what is wrong with it
        for entry in envelope.entry:
            for change in entry.changes:
                if change.value is not None and change.value.metadata is not None:
                    # One number per envelope, as the platform sends them; an envelope that mixed workspaces
                    # would be served with the first's, the others' batches refused (503) and sent again.
                    return await self.state.platform.workspace_of(self.state.db, change.value.metadata.phone_number_id)
        return None


async def _read_body(receive: Receive, limit: int) -> tuple[bytes | None, Receive]:
    """The whole body, if it is at most `limit` bytes (else None), and a `receive` that hands on what was read and
    then the rest."""
    taken: list[Message] = []
    size = 0
    while True:
        message = await receive()
        taken.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        if size > limit or not message.get("more_body", False):
            break
    complete = taken[-1]["type"] == "http.request" and not taken[-1].get("more_body", False)
    body = b"".join(m.get("body", b"") for m in taken) if complete and size <= limit else None

    async def replay() -> Message:
        if taken:
            return taken.pop(0)
        return await receive()

    return body, replay


def _replaying(body: bytes, receive: Receive) -> Receive:
    """A fresh `receive` for a body read whole: the body once, then whatever the client does next (its leaving)."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replay
