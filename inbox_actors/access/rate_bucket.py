"""Rate bucket actors: one per API key and one per client IP, each owning an exact sliding window in memory.

A key's bucket lives on the node holding the key's workspace. An address's bucket belongs to no workspace: callers
admit against it through an `AddressAdmission`, which on a node alone is this node's bucket (`NodeAddresses`) and
in a cluster the bucket on the node that owns the address (inbox_http/cluster/address_admission.py).

A bucket passivates after two windows without a request: by then its window is empty, so leaving memory loses
nothing. The limit travels with every request, so an edited key limit applies from its next call.
"""

from __future__ import annotations

from typing import Protocol

import msgspec
import trio

from inbox_actors.domain.rate_window import WINDOW_SECONDS, Admission, SlidingWindow
from inbox_actors.runtime import Actor, ActorKind, ActorSystem, workspace_in_key

KEY_BUCKET = "key_rate_bucket"
IP_BUCKET = "ip_rate_bucket"


class Admit(msgspec.Struct, frozen=True):
    limit: int


class Peek(msgspec.Struct, frozen=True):
    """The bucket's state, admitting nothing."""

    limit: int


class RateBucket(Actor):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self._window: SlidingWindow | None = None

    async def receive(self, message: object) -> Admission:
        if not isinstance(message, (Admit, Peek)):
            raise TypeError(f"rate bucket cannot handle {type(message).__name__}")
        if self._window is None:
            self._window = SlidingWindow(message.limit, WINDOW_SECONDS)
        else:
            self._window.resize(message.limit)
        if isinstance(message, Peek):
            return self._window.peek(trio.current_time())
        return self._window.admit(trio.current_time())


def rate_bucket_kinds() -> list[ActorKind]:
    # Many requests of one key or one address can be in flight at once: a roomy mailbox. Admission never awaits:
    # an ask finding the bucket idle is answered in the request's own task (ActorKind.inline_asks).
    # A key's bucket runs on the node holding the key's workspace, so its limit holds whichever node a call lands
    # on; an address's bucket is placed by the AddressAdmission that asks it.
    return [ActorKind(name=name, factory=RateBucket, mailbox_capacity=512, idle_timeout=2 * WINDOW_SECONDS,
                      ask_timeout=5.0, inline_asks=True, workspace_of=placed)
            for name, placed in ((KEY_BUCKET, workspace_in_key), (IP_BUCKET, None))]


def key_bucket(workspace_id: int, key_id: int) -> str:
    return f"{workspace_id}:{key_id}"


async def admit_key(actors: ActorSystem, workspace_id: int, key_id: int, limit: int) -> Admission:
    return await actors.ref(KEY_BUCKET, key_bucket(workspace_id, key_id)).ask(Admit(limit))


async def admit_ip(actors: ActorSystem, ip: str, limit: int) -> Admission:
    """Admit against the address bucket `ip` of this node's actors (an AddressAdmission decides which node's)."""
    return await actors.ref(IP_BUCKET, ip).ask(Admit(limit))


class AddressAdmission(Protocol):
    """Admits one request against a client address's bucket (the per-IP ceiling, the sign-in attempts)."""

    async def admit(self, bucket: str, limit: int) -> Admission: ...


class NodeAddresses:
    """A node alone: it counts every address in its own buckets."""

    def __init__(self, actors: ActorSystem) -> None:
        self.actors = actors

    async def admit(self, bucket: str, limit: int) -> Admission:
        return await admit_ip(self.actors, bucket, limit)


async def peek_key(actors: ActorSystem, workspace_id: int, key_id: int, limit: int) -> Admission:
    return await actors.ref(KEY_BUCKET, key_bucket(workspace_id, key_id)).ask(Peek(limit))
