"""A forwarded request as the receiving node serves it, once its proof verified (forwarding_proof.py): with the
client's address the forwarding node saw, and its body checked against the proof as it arrives.

The body passes on as it comes, each part hashed once; a sealed (streamed) body's last SEAL_BYTES are its seal,
held back and never passed on, and the Content-Length the app sees is the body's own. A body that does not match
its proof never ends for the app: in place of its last part the app hears that the client left, so a handler, which
acts on a body read whole, does nothing with it. The request is answered 400 `forwarded_body_mismatch` unless an
answer had begun, and whatever the app sends after that is dropped; the node logs it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging

from inbox_http.cluster.asgi import Message, Receive, Scope, Send
from inbox_http.cluster.forwarding_proof import EMPTY_BODY_DIGEST, SEAL_BYTES, Forwarded

log = logging.getLogger("inbox_http.cluster.forwarded_body")

_LEFT: Message = {"type": "http.disconnect"}
_MISMATCH = json.dumps({"error": "forwarded_body_mismatch",
                        "message": "The body of this forwarded request is not the one its proof covers."}).encode()


def as_forwarded(forwarded: Forwarded, scope: Scope, receive: Receive, send: Send) -> tuple[Scope, Receive, Send]:
    """The request's scope (the client's address, the body's own length), and a `receive` that checks its body with
    the `send` that answers when it does not match."""
    changes: dict = {}
    if forwarded.client_ip:
        changes["client"] = (forwarded.client_ip, 0)
    if forwarded.seal is not None:
        changes["headers"] = [(name, _less_the_seal(value) if name.lower() == b"content-length" else value)
                              for name, value in scope["headers"]]
    checked = _CheckedBody(forwarded, receive, send, scope.get("path", ""))
    return ({**scope, **changes} if changes else scope), checked.receive, checked.send


def _less_the_seal(length: bytes) -> bytes:
    # A sealed body with too short a length cannot match its seal: what is left is the app's to judge, never
    # negative.
    return str(max(0, int(length) - SEAL_BYTES)).encode() if length.isdigit() else length


class _CheckedBody:
    def __init__(self, forwarded: Forwarded, receive: Receive, send: Send, path: str) -> None:
        self._forwarded = forwarded
        self._receive, self._send = receive, send
        self._path = path
        self._hash: hashlib._Hash | None = None   # a whole body's, made at its first byte (most have none)
        self._held = b""                  # a sealed body's last bytes so far: its seal, if no more come
        self._ended = False
        self._started = False             # an answer began
        self._refused = False             # answered 400 here: the app's answer goes nowhere

    async def receive(self) -> Message:
        message = await self._receive()
        if self._ended or message["type"] != "http.request":
            return message
        body = message.get("body", b"")
        more = message.get("more_body", False)
        seal = self._forwarded.seal
        if seal is None:
            if body:
                if self._hash is None:
                    self._hash = hashlib.sha256()
                self._hash.update(body)
            if not more:
                self._ended = True
                digest = self._hash.hexdigest().encode() if self._hash is not None else EMPTY_BODY_DIGEST
                if not hmac.compare_digest(digest, self._forwarded.digest or b""):
                    return await self._mismatch()
            return message
        data = self._held + body if self._held else body
        cut = max(0, len(data) - SEAL_BYTES)
        passed, self._held = data[:cut], data[cut:]
        seal.update(passed)
        if not more:
            self._ended = True
            if not hmac.compare_digest(seal.seal(), self._held):
                return await self._mismatch()
        return {"type": "http.request", "body": passed, "more_body": more}

    async def send(self, message: Message) -> None:
        if self._refused:
            return
        self._started = True
        await self._send(message)

    async def _mismatch(self) -> Message:
        log.warning("a request to %s forwarded by %s carries a body its proof does not cover: refused",
                    self._path, self._forwarded.node_id)
        if not self._started:
            self._refused = True
            await self._send({"type": "http.response.start", "status": 400, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(_MISMATCH)).encode())]})
            await self._send({"type": "http.response.body", "body": _MISMATCH, "more_body": False})
        return _LEFT
