"""The forwarding proof (inbox_http/cluster/forwarding_proof.py) and the check of a forwarded body as it arrives
(forwarded_body.py), without sockets: what a proof covers, its window, its nonce, and the bounded memory of nonces."""

from __future__ import annotations

import hashlib

import pytest

from inbox_http.cluster.forwarded_body import as_forwarded
from inbox_http.cluster.forwarding_proof import (
    SEAL_BYTES,
    WINDOW_SECONDS,
    Forwarded,
    ProofCheck,
    Refused,
    body_digest,
    sign,
)
from inbox_http.cluster.seen_nonces import NonceUse, SeenNonces

SECRET = b"the cluster's secret"
NODE = b"http://10.0.0.7:8080"
NOW = 1_800_000_000.0
SEND = b'{"to": "919800000001", "message": "hello"}'


class Clock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _scope(headers, method: str = "POST", path: str = "/api/send-message", query: bytes = b"",
           length: int | None = None) -> dict:
    framing = [(b"content-length", str(length).encode())] if length is not None else []
    return {"type": "http", "method": method, "path": path, "raw_path": path.encode(), "query_string": query,
            "headers": [(b"host", b"inbox"), *framing, *headers], "client": ("10.0.0.8", 51234)}


def _signed(body: bytes | None = SEND, *, at: float = NOW, client: bytes = b"203.0.113.9", method: bytes = b"POST",
            target: bytes = b"/api/send-message"):
    return sign(SECRET, NODE, client, method, target, None if body is None else body_digest(body), now=at)


def _check(clock: Clock | None = None, **kwargs) -> ProofCheck:
    return ProofCheck(SECRET, clock=clock or Clock(), **kwargs)


def test_a_proof_is_taken_once_for_the_request_it_was_made_for():
    check, signed = _check(), _signed()
    forwarded = check.check(_scope(signed.headers))
    assert isinstance(forwarded, Forwarded)
    assert (forwarded.node_id, forwarded.client_ip, forwarded.digest) == (NODE.decode(), "203.0.113.9",
                                                                          body_digest(SEND))
    again = check.check(_scope(signed.headers))
    assert isinstance(again, Refused) and (again.status, again.code) == (403, "forwarding_replayed")


@pytest.mark.parametrize("change", ["method", "path", "query", "client", "body", "time", "secret"])
def test_a_proof_verifies_for_nothing_else(change):
    signed = _signed()
    headers = dict(signed.headers)
    scope = _scope(signed.headers)
    if change == "method":
        scope["method"] = "PUT"
    elif change == "path":
        scope["raw_path"] = b"/api/bulk-send"
    elif change == "query":
        scope["query_string"] = b"dry_run=1"
    elif change == "client":
        headers[b"x-inbox-client-ip"] = b"198.51.100.1"
    elif change == "body":                     # the proof's own claim of the body, changed
        made, nonce, _body, mac = headers[b"x-inbox-forwarded-proof"].split(b" ")
        headers[b"x-inbox-forwarded-proof"] = b" ".join((made, nonce, b"sha256=" + body_digest(b"{}"), mac))
    elif change == "time":
        made, nonce, body, mac = headers[b"x-inbox-forwarded-proof"].split(b" ")
        headers[b"x-inbox-forwarded-proof"] = b" ".join((str(int(made) + 1000).encode(), nonce, body, mac))
    if change in ("client", "body", "time"):
        scope = _scope(list(headers.items()))
    check = ProofCheck(b"another secret" if change == "secret" else SECRET, clock=Clock())
    assert check.check(scope) is None          # any client's: nothing it claims is believed


@pytest.mark.parametrize(("made", "taken"), [(NOW - WINDOW_SECONDS, True), (NOW + WINDOW_SECONDS, True),
                                             (NOW - WINDOW_SECONDS - 0.5, False), (NOW + WINDOW_SECONDS + 0.5, False)])
def test_a_proof_is_taken_within_the_window_either_side_of_the_receivers_clock(made, taken):
    verdict = _check().check(_scope(_signed(at=made).headers))
    if taken:
        assert isinstance(verdict, Forwarded)
    else:
        assert isinstance(verdict, Refused) and (verdict.status, verdict.code) == (403, "forwarding_stale")
        side = "behind" if made < NOW else "ahead of"
        assert f"made 30 s {side} this node's clock" in verdict.message and "NTP" in verdict.message


def test_the_nonces_are_bounded_refused_past_the_bound_and_forgotten_once_their_proofs_are_stale():
    clock = Clock()
    check = _check(clock, nonces=SeenNonces(capacity=2))
    assert all(isinstance(check.check(_scope(_signed().headers)), Forwarded) for _ in range(2))
    full = check.check(_scope(_signed().headers))
    assert isinstance(full, Refused) and (full.status, full.code) == (503, "forwarding_busy")
    assert (b"retry-after", b"1") in full.headers
    assert len(check.nonces) == 2
    # Once the first two proofs are out of the window they cannot come again, and their nonces go.
    clock.now += WINDOW_SECONDS + 0.001
    assert isinstance(check.check(_scope(_signed(at=clock.now).headers)), Forwarded)
    assert len(check.nonces) == 1


def test_seen_nonces_expire_by_time_whatever_the_order_they_came_in():
    seen = SeenNonces(capacity=10)
    assert seen.use(b"late", NOW + 60, NOW) is NonceUse.FIRST
    assert seen.use(b"early", NOW + 1, NOW) is NonceUse.FIRST
    assert seen.use(b"early", NOW + 1, NOW + 0.5) is NonceUse.REPLAYED
    assert seen.use(b"early", NOW + 2, NOW + 1) is NonceUse.FIRST        # its proof is stale by now: may go
    assert len(seen) == 2
    assert seen.use(b"late", NOW + 61, NOW + 59) is NonceUse.REPLAYED  # and "early" has gone meanwhile
    assert len(seen) == 1


class Wire:
    """The messages a forwarded request's body arrives in, and what is sent back."""

    def __init__(self, parts: list[bytes]) -> None:
        self.messages = [{"type": "http.request", "body": part, "more_body": n < len(parts) - 1}
                         for n, part in enumerate(parts)]
        self.sent: list[dict] = []

    async def receive(self) -> dict:
        return self.messages.pop(0) if self.messages else {"type": "http.disconnect"}

    async def send(self, message: dict) -> None:
        self.sent.append(message)


async def _read(receive) -> tuple[bytes, str]:
    """The body as the app reads it, and how it ended: "whole", or "left" (the client left first)."""
    body = b""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return body, "left"
        body += message.get("body", b"")
        if not message.get("more_body", False):
            return body, "whole"


async def test_a_whole_body_reaches_the_app_only_when_it_is_the_one_the_proof_covers():
    for parts, ending in (([SEND[:10], SEND[10:]], "whole"), ([SEND.replace(b"hello", b"HELLO")], "left")):
        wire = Wire(parts)
        forwarded = _check().check(_scope(_signed().headers))
        scope, receive, send = as_forwarded(forwarded, _scope([]), wire.receive, wire.send)
        assert scope["client"] == ("203.0.113.9", 0)
        body, how = await _read(receive)
        assert how == ending
        if ending == "whole":
            assert body == SEND and wire.sent == []
        else:
            await send({"type": "http.response.start", "status": 200, "headers": []})   # the app's: dropped
            assert [message.get("status") for message in wire.sent] == [400, None]
            assert b'"forwarded_body_mismatch"' in wire.sent[1]["body"]


async def test_a_sealed_body_streams_through_without_its_seal_and_is_refused_if_changed_or_cut():
    body = bytes(range(256)) * 300
    cuts = [0, 5, 70, 70, 4096, len(body)]                # parts shorter than the seal, and empty ones
    for tamper in ("none", "changed", "cut"):
        signed = _signed(None)
        signed.seal.update(body)
        wired = body + signed.seal.seal()
        if tamper == "changed":
            wired = wired[:1000] + b"\x00" + wired[1001:]
        elif tamper == "cut":
            wired = wired[:-SEAL_BYTES]
        parts = [wired[a:b] for a, b in zip(cuts, cuts[1:])] + [wired[cuts[-1]:]]
        forwarded = _check().check(_scope(signed.headers))
        assert isinstance(forwarded, Forwarded) and forwarded.digest is None
        wire = Wire(parts)
        scope, receive, _send = as_forwarded(forwarded, _scope([], length=len(wired)), wire.receive, wire.send)
        assert dict(scope["headers"])[b"content-length"] == str(len(wired) - SEAL_BYTES).encode()
        seen, how = await _read(receive)
        if tamper == "none":
            assert (how, hashlib.sha256(seen).digest(), wire.sent) == ("whole", hashlib.sha256(body).digest(), [])
        else:
            assert how == "left" and wire.sent[0]["status"] == 400, tamper
