"""Which headers a relay passes on (inbox_http/cluster/relay.py): not the hop-by-hop ones, which describe one
connection and which h11 writes itself for the next (RFC 9110, 7.6.1), nor, on an answer, what the front server
writes on every answer of its own."""

from __future__ import annotations

from collections.abc import Iterable

Headers = Iterable[tuple[bytes, bytes]]

_HOP_BY_HOP = frozenset({b"connection", b"keep-alive", b"transfer-encoding", b"te", b"trailer", b"upgrade"})
# Hypercorn writes its own Date and Server on every answer: the target's copies would make each appear twice.
_FRONT_SERVER_WRITES = frozenset({b"date", b"server"})


def declared_length(headers: Headers) -> int | None:
    for name, value in headers:
        if name.lower() == b"content-length":
            try:
                return int(value)         # the front server has validated it
            except ValueError:
                return None
    return None


def nominated_hop_by_hop(headers: Headers) -> frozenset[bytes]:
    """The headers a Connection header names: hop-by-hop too (RFC 9110, 7.6.1)."""
    return frozenset(token.strip().lower() for name, value in headers if name.lower() == b"connection"
                     for token in value.split(b",") if token.strip())


def is_hop_by_hop(name: bytes, nominated: frozenset[bytes]) -> bool:
    return name in _HOP_BY_HOP or name.startswith(b"proxy-") or name in nominated


def response_headers(headers: Headers) -> list[tuple[bytes, bytes]]:
    nominated = nominated_hop_by_hop(headers)
    return [(name, value) for name, value in headers
            if not is_hop_by_hop(name, nominated) and name not in _FRONT_SERVER_WRITES]
