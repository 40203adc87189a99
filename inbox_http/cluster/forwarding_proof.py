"""What a node adds to a request it forwards, and how the receiving node checks it: who forwarded it
(`X-Inbox-Forwarded-By`), the client's address it saw (`X-Inbox-Client-Ip`), and an HMAC-SHA256 over both, the
method and the target, keyed by the cluster's secret (`X-Inbox-Forwarded-Proof`). A client's own copies of the three
are dropped by the relay; a request whose proof does not verify is any client's."""

from __future__ import annotations

import hashlib
import hmac

from inbox_http.cluster.asgi import Scope, target_of

FORWARDED_BY = b"x-inbox-forwarded-by"
FORWARDED_PROOF = b"x-inbox-forwarded-proof"
CLIENT_IP = b"x-inbox-client-ip"
FORWARDING = frozenset({FORWARDED_BY, FORWARDED_PROOF, CLIENT_IP})


def proof_headers(secret: bytes, node_id: bytes, scope: Scope, method: bytes,
                  raw_target: bytes) -> list[tuple[bytes, bytes]]:
    """The three headers node `node_id` adds to the request of `scope` it forwards."""
    client = scope.get("client")
    client_ip = client[0].encode("ascii", "replace") if client else b""
    proof = _proof(secret, node_id, client_ip, method, raw_target)
    return [(FORWARDED_BY, node_id), (FORWARDED_PROOF, proof), (CLIENT_IP, client_ip)]


def forwarded_by(scope: Scope, secret: bytes) -> str | None:
    """The node id a request was forwarded by, if its proof header verifies with `secret`; else None."""
    verified = _verified(scope, secret)
    return verified[0] if verified else None


def forwarded_client_ip(scope: Scope, secret: bytes) -> str | None:
    """The client's address the forwarding node saw, if the request's proof verifies with `secret`; else None."""
    verified = _verified(scope, secret)
    return verified[1] if verified else None


def _verified(scope: Scope, secret: bytes) -> tuple[str, str] | None:
    if not secret:
        return None
    found: dict[bytes, list[bytes]] = {name: [] for name in FORWARDING}
    for name, value in scope.get("headers", ()):
        if (name := name.lower()) in found:
            found[name].append(value)
    # Exactly one of each: with two, which one the proof covers would be the reader's guess.
    if any(len(values) != 1 for values in found.values()):
        return None
    (node_id,), (proof,), (client_ip,) = found[FORWARDED_BY], found[FORWARDED_PROOF], found[CLIENT_IP]
    expected = _proof(secret, node_id, client_ip, scope["method"].encode("ascii"), target_of(scope))
    if not hmac.compare_digest(expected, proof):
        return None
    return node_id.decode("latin-1"), client_ip.decode("latin-1")


def _proof(secret: bytes, node_id: bytes, client_ip: bytes, method: bytes, raw_target: bytes) -> bytes:
    message = b"\n".join((node_id, client_ip, method, raw_target))
    return hmac.new(secret, message, hashlib.sha256).hexdigest().encode("ascii")
