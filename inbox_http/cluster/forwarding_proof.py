"""What a node adds to a request it sends another node (a relayed request, an address admission), and how the
receiving node checks it.

Three headers: who forwarded it (`X-Inbox-Forwarded-By`), the client's address it saw (`X-Inbox-Client-Ip`), and the
proof (`X-Inbox-Forwarded-Proof: <unix ms> <nonce> <body> <mac>`): an HMAC-SHA256, keyed by the cluster's secret,
over both, the method, the target (path and query as sent), the time it was made, a random nonce and the body:
`sha256=<hex>` for a body the sender has whole, `sealed` for one it streams, which is followed on the wire by its
seal (SEAL_BYTES: an HMAC over the body's SHA-256, bound to this proof's MAC), since HTTP/1.1 gives a request no
place after its body that the ASGI server passes on. The receiving node checks the body as it arrives
(forwarded_body.py), hashing it once, as the sender did: nothing is read whole for it.

The receiving node accepts a proof made within WINDOW_SECONDS either side of its own wall clock (the nodes' clocks
are kept in step, NTP) and only once: its nonce is remembered until the proof is too old anyway (seen_nonces.py).
So a proof seen on the wire is worth nothing for another body, method, path or client, after the window, or a second
time within it. What each check answers:

- no forwarding headers, or a MAC that does not verify: not forwarded (None); the request is any client's, and a
  client's own copies of the headers prove nothing.
- a proof out of the window: 403 `forwarding_stale` (a replay, or a node whose clock is off by more than the window;
  it says by how much, and the receiving node logs it).
- a nonce already accepted: 403 `forwarding_replayed`.
- more proofs within the window than this node remembers: 503 `forwarding_busy` with Retry-After.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from inbox_http.cluster.asgi import Scope, Send, target_of
from inbox_http.cluster.seen_nonces import NonceUse, SeenNonces

log = logging.getLogger("inbox_http.cluster.forwarding_proof")

FORWARDED_BY = b"x-inbox-forwarded-by"
FORWARDED_PROOF = b"x-inbox-forwarded-proof"
CLIENT_IP = b"x-inbox-client-ip"
FORWARDING = frozenset({FORWARDED_BY, FORWARDED_PROOF, CLIENT_IP})
# Either side of the receiving node's clock. Wide enough for clocks NTP keeps in step and a request's time on the
# way; narrow enough that a captured proof is soon worthless.
WINDOW_SECONDS = 30.0
SEALED = b"sealed"
SEAL_BYTES = 64                          # a hex HMAC-SHA256
EMPTY_BODY_DIGEST = hashlib.sha256(b"").hexdigest().encode()
WARN_EVERY_SECONDS = 5.0


def body_digest(body: bytes) -> bytes:
    """What a proof says of a body sent whole."""
    return hashlib.sha256(body).hexdigest().encode() if body else EMPTY_BODY_DIGEST


class BodySeal:
    """A streamed body's seal, computed as the body passes (by its sender and by its receiver alike)."""

    def __init__(self, secret: bytes, mac: bytes) -> None:
        self._secret, self._mac = secret, mac
        self._hash = hashlib.sha256()

    def update(self, data: bytes) -> None:
        self._hash.update(data)

    def seal(self) -> bytes:
        message = b"seal\n" + self._mac + b"\n" + self._hash.digest()
        return hmac.digest(self._secret, message, "sha256").hex().encode()


@dataclass(frozen=True, slots=True)
class Signed:
    headers: list[tuple[bytes, bytes]]
    seal: BodySeal | None                # for a streamed body: what follows it


def sign(secret: bytes, node_id: bytes, client_ip: bytes, method: bytes, target: bytes, digest: bytes | None, *,
         now: float | None = None) -> Signed:
    """The headers node `node_id` adds to a request it sends, for a body of `digest` (body_digest()), or for a
    streamed one when `digest` is None: then the body must be followed by `seal.seal()`, SEAL_BYTES more."""
    made = str(int((time.time() if now is None else now) * 1000)).encode()
    nonce = os.urandom(12).hex().encode()
    body = SEALED if digest is None else b"sha256=" + digest
    mac = _mac(secret, node_id, client_ip, method, target, made, nonce, body)
    headers = [(FORWARDED_BY, node_id), (CLIENT_IP, client_ip), (FORWARDED_PROOF, b" ".join((made, nonce, body, mac)))]
    return Signed(headers, BodySeal(secret, mac) if digest is None else None)


@dataclass(frozen=True, slots=True)
class Forwarded:
    """A request whose proof verified: its body is yet to be checked as it arrives (forwarded_body.py)."""

    node_id: str
    client_ip: str
    digest: bytes | None                 # the body's, or None: sealed
    seal: BodySeal | None = None         # a sealed body's, computed as it arrives


@dataclass(frozen=True, slots=True)
class Refused:
    status: int
    code: str
    message: str
    headers: tuple[tuple[bytes, bytes], ...] = ()

    async def answer(self, send: Send) -> None:
        body = json.dumps({"error": self.code, "message": self.message}).encode()
        await send({"type": "http.response.start", "status": self.status, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *self.headers]})
        await send({"type": "http.response.body", "body": body, "more_body": False})


class ProofCheck:
    """Checks the proofs of the requests another node sends this one, and remembers their nonces. `clock`: wall
    time in seconds (PostgreSQL's plays no part: the check makes no statement)."""

    def __init__(self, secret: bytes, *, window: float = WINDOW_SECONDS, nonces: SeenNonces | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self._secret = secret
        self.window = window
        self.nonces = nonces if nonces is not None else SeenNonces()
        self._clock = clock
        self._warned: dict[str, float] = {}

    def check(self, scope: Scope) -> Forwarded | Refused | None:
        if not self._secret:
            return None
        found: dict[bytes, list[bytes]] = {name: [] for name in FORWARDING}
        for name, value in scope.get("headers", ()):
            if (name := name.lower()) in found:
                found[name].append(value)
        # Exactly one of each: with two, which one the proof covers would be the reader's guess.
        if any(len(values) != 1 for values in found.values()):
            return None
        (node_id,), (proof,), (client_ip,) = found[FORWARDED_BY], found[FORWARDED_PROOF], found[CLIENT_IP]
        parts = proof.split(b" ")
        if len(parts) != 4 or not parts[0].isdigit() or not (parts[2] == SEALED or parts[2].startswith(b"sha256=")):
            return None
        made, nonce, body, mac = parts
        expected = _mac(self._secret, node_id, client_ip, scope["method"].encode("ascii"), target_of(scope), made,
                        nonce, body)
        if not hmac.compare_digest(expected, mac):
            return None
        node = node_id.decode("latin-1")
        now, at = self._clock(), int(made) / 1000
        if abs(now - at) > self.window:
            return self._stale(node, at - now)
        use = self.nonces.use(nonce, at + self.window, now)
        if use is NonceUse.REPLAYED:
            self._warn("replayed", "a request forwarded by %s carries a proof already used: refused", node)
            return Refused(403, "forwarding_replayed", "This forwarded request's proof was used before: each is "
                                                       "accepted once.")
        if use is NonceUse.FULL:
            self._warn("full", "more forwarded requests within %g s than the %d remembered: refused", self.window,
                       self.nonces.capacity)
            return Refused(503, "forwarding_busy", "This node took more forwarded requests in the last "
                                                   f"{self.window:g} s than it can check; retry shortly.",
                           ((b"retry-after", b"1"),))
        if body == SEALED:
            return Forwarded(node, client_ip.decode("latin-1"), None, BodySeal(self._secret, mac))
        return Forwarded(node, client_ip.decode("latin-1"), body[len(b"sha256="):])

    def _stale(self, node: str, offset: float) -> Refused:
        side = "ahead of" if offset > 0 else "behind"
        self._warn("stale", "a request forwarded by %s carries a proof %.1f s %s this node's clock (beyond %g s): "
                   "refused; a replay, or the nodes' clocks are out of step", node, abs(offset), side, self.window)
        return Refused(403, "forwarding_stale",
                       f"The forwarding proof was made {abs(offset):.0f} s {side} this node's clock; it is accepted "
                       f"within {self.window:g} s either side. A replayed request, or the nodes' clocks are out of "
                       "step (keep them in step with NTP).")

    def _warn(self, what: str, message: str, *args: object) -> None:
        # Every request a skewed node forwards meets it: said once per WARN_EVERY_SECONDS per kind.
        now = time.monotonic()
        if now - self._warned.get(what, -WARN_EVERY_SECONDS) >= WARN_EVERY_SECONDS:
            self._warned[what] = now
            log.warning(message, *args)


def _mac(secret: bytes, node_id: bytes, client_ip: bytes, method: bytes, target: bytes, made: bytes, nonce: bytes,
         body: bytes) -> bytes:
    # No field holds a newline: h11 refuses one in a header value and in a target.
    message = b"\n".join((node_id, client_ip, method, target, made, nonce, body))
    return hmac.digest(secret, message, "sha256").hex().encode()
