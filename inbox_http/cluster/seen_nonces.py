"""The forwarding proofs' nonces this node has accepted, each kept until its proof is too old to be accepted again:
a proof whose nonce is here is a replay (forwarding_proof.py).

Bounded: a nonce leaves when its proof's time leaves the replay window, and at most `capacity` are kept; past it a
proof is neither accepted nor remembered, so a node forwarded more requests than that within the window refuses the
excess (503) rather than grow. Only proofs made with the cluster's secret get here, so no outsider can fill it.
"""

from __future__ import annotations

import heapq
from enum import Enum

# A node takes a few thousand forwarded requests a second at most; a nonce lives at most the window (60 s) and
# typically half of it. About 20 MB when full.
CAPACITY = 100_000


class NonceUse(Enum):
    FIRST = "first"
    REPLAYED = "replayed"
    FULL = "full"


class SeenNonces:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._seen: set[bytes] = set()
        self._expiries: list[tuple[float, bytes]] = []     # a heap: the next to leave first

    def __len__(self) -> int:
        return len(self._seen)

    def use(self, nonce: bytes, until: float, now: float) -> NonceUse:
        """Record `nonce`, which may be used again once `until` has passed (its proof is stale by then)."""
        expiries, seen = self._expiries, self._seen
        while expiries and expiries[0][0] <= now:
            seen.discard(heapq.heappop(expiries)[1])
        if nonce in seen:
            return NonceUse.REPLAYED
        if len(seen) >= self.capacity:
            return NonceUse.FULL
        seen.add(nonce)
        heapq.heappush(expiries, (until, nonce))
        return NonceUse.FIRST
