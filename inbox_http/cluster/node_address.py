"""Where another node is reached: its base URL (`http(s)://host[:port]`, the node's id) parsed once, and a new
connection to it."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import trio

from inbox_actors.outbound_http.connections import Connection, PoolKey, TlsContext, open_connection


@dataclass(frozen=True, slots=True)
class NodeAddress:
    key: PoolKey
    host_header: bytes            # for a request that carries no Host (HTTP/2 has :authority instead)

    @classmethod
    def parse(cls, url: str) -> NodeAddress:
        """ValueError for a URL that is not a base URL."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/") \
                or parts.query:
            raise ValueError(f"a node's URL is http(s)://host[:port], not {url!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls((parts.scheme, parts.hostname, port), parts.netloc.rpartition("@")[2].encode())

    async def connect(self, tls: TlsContext) -> Connection:
        scheme, host, port = self.key
        addresses = [(family, sockaddr) for family, _type, _proto, _name, sockaddr in
                     await trio.socket.getaddrinfo(host, port, type=trio.socket.SOCK_STREAM)]
        return await open_connection(addresses, tls=tls.for_scheme(scheme), server_hostname=host)
