"""The ASGI shapes the cluster's middleware handles (a request's scope, its messages, the app), and the request's
target as it came on the wire."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import quote

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

_PATH_SAFE = "/:@!$&'()*+,;="             # RFC 3986's pchar and "/", for a scope without raw_path


def target_of(scope: Scope) -> bytes:
    """The request's path and query as the client sent them (percent-encoded)."""
    path = scope.get("raw_path") or quote(scope["path"], safe=_PATH_SAFE).encode("ascii")
    query = scope.get("query_string", b"")
    return path + b"?" + query if query else path
