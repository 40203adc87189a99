"""How large a request body may be, and the answer past it: 413 `payload_too_large`, the connection then closed.

- Each path has its limit (`body_limit`): 1 MiB, 8 MiB for a broadcast's audience and for the agent inbox's reply
  form, which may carry a file (`use_cases/attachments.py`).
- A body that declares its length is judged from Content-Length before any handler runs, and never read.
- A body that declares none (`Transfer-Encoding: chunked`) is held to the same limit while it arrives: each request
  is made with its path's limit (`LimitedRequest`), not the app-wide MAX_CONTENT_LENGTH, so Quart stops keeping it
  past the limit and reading it raises RequestEntityTooLarge, which the error handler answers 413
  (errors.py). A request answered so, or answered before its body was read and found too large afterwards, closes
  its connection (`Connection: close`): the rest of the body is never read, and a connection left with part of a
  request unread cannot carry the next one.
"""

from __future__ import annotations

from quart import Quart, request
from quart_trio.wrappers import TrioRequest
from werkzeug.exceptions import RequestEntityTooLarge

from inbox_http.errors import payload_too_large

# No body the API takes comes near this; larger requests are refused before they are read.
MAX_BODY_BYTES = 1 * 1024 * 1024
# Except a broadcast's audience: 100,000 recipients with parameters of their own fit.
BULK_SEND_BODY_BYTES = 8 * 1024 * 1024
_LARGE_BODY_PATHS = {"/api/bulk-send": BULK_SEND_BODY_BYTES}
# And a member's reply in the agent inbox (`/app/chats/{phone}/reply`): a file attached and its caption.
REPLY_FORM_BODY_BYTES = 8 * 1024 * 1024
# The largest any path takes.
LARGEST_BODY_BYTES = max(MAX_BODY_BYTES, REPLY_FORM_BODY_BYTES, *_LARGE_BODY_PATHS.values())


def body_limit(path: str) -> int:
    """The largest body a request to `path` may carry."""
    if path.startswith("/app/chats/") and path.endswith("/reply"):
        return REPLY_FORM_BODY_BYTES
    return _LARGE_BODY_PATHS.get(path, MAX_BODY_BYTES)


class LimitedRequest(TrioRequest):
    """A request whose body is held to its path's limit as it arrives, with or without a Content-Length."""

    def __init__(self, method: str, scheme: str, path: str, *args, **kwargs) -> None:
        kwargs["max_content_length"] = body_limit(path)
        super().__init__(method, scheme, path, *args, **kwargs)
        self.max_content_length = kwargs["max_content_length"]


def install_body_limit(app: Quart) -> None:
    app.request_class = LimitedRequest
    # The largest any path takes (the request class gives each its own).
    app.config["MAX_CONTENT_LENGTH"] = LARGEST_BODY_BYTES
    app.before_request(_refuse_declared_oversize)
    app.after_request(_read_unread_body)


async def _refuse_declared_oversize():
    """Answer 413 from the headers alone; waiting for a body no handler will read would stall the client."""
    limit = body_limit(request.path)
    if (request.content_length or 0) > limit:
        return payload_too_large(limit)
    return None


async def _read_unread_body(response):
    """Read the body of a request answered without it (a refusal, a route that takes none): left unread, it
    can stall the next request on the same keep-alive connection. An oversized one is not read; that answer
    closes the connection instead, as does one whose body, without a Content-Length, turned out too large. A
    request without Content-Length or Transfer-Encoding has no body (most GETs): nothing to wait for."""
    length = request.content_length
    if (length is not None and 0 < length <= body_limit(request.path)) or \
            (length is None and "Transfer-Encoding" in request.headers):
        try:
            await request.get_data()
        except RequestEntityTooLarge:
            response.headers["Connection"] = "close"
    return response
