"""The ASGI app Hypercorn serves: the OAuth paths go to the SDK's handlers (Starlette), everything else to the
Quart app, in the same process and under the same trio worker (Starlette's anyio runs on trio).

The OAuth endpoints answer anyone (registration and the token endpoint are unauthenticated by nature), so each
request counts against the per-IP ceiling first, as every API route's does. The metadata and the resource a token
is for depend on the origin the client used, so the routes are built per origin and the last few kept; an origin
that is neither HTTPS nor a loopback address is not offered OAuth (OAuth 2.1 wants TLS for it).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any
from urllib.parse import parse_qs

from quart_trio import QuartTrio

from inbox_actors.mcp import oauth_codes
from inbox_http.dependencies import Dependencies
from inbox_http.guard import ip_limit_body, ip_limit_headers, rate_bucket_address
from inbox_http.oauth import addresses
from inbox_http.request_metrics import ROUTE_KEY

# Distinct origins whose routes are kept: a service is reached under a handful of names; a client sending made-up
# Host headers only makes its own routes be built again.
KEPT_ORIGINS = 16
_PREFIXES = ("/oauth/", "/.well-known/oauth-")
# A token request's form holds a code, a verifier, a client's id and a redirect URI: a few hundred bytes.
_MAX_TOKEN_FORM = 64 * 1024


class OAuthMount:
    def __init__(self, app: QuartTrio) -> None:
        self.app = app
        self._state: Dependencies = app.extensions["inbox"]
        self._routers: OrderedDict[str, Any] = OrderedDict()

    async def __call__(self, scope: dict, receive, send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(_PREFIXES):
            return await self.app(scope, receive, send)
        if scope["path"] in addresses.PATHS:
            scope[ROUTE_KEY] = scope["path"]  # the request metrics' route label (the paths are fixed)
        answer = await self._refusal(scope)
        if answer is not None:
            return await answer(scope, receive, send)
        from starlette.responses import JSONResponse  # the SDK's side: imported once OAuth is first asked for

        origin = addresses.origin(scope["scheme"], _host(scope))
        if origin is None:
            answer = JSONResponse({"error": "invalid_request", "error_description": "No valid Host header."}, 400)
        elif not addresses.serves_oauth(origin):
            answer = JSONResponse({"error": "not_found", "error_description": "OAuth is offered over HTTPS only "
                                   "(plain HTTP on a loopback address)."}, 404)
        else:
            answer = self._router(origin)
            if scope["path"] == addresses.TOKEN_PATH and scope["method"] == "POST":
                return await self._exchange(answer, scope, receive, send)
        return await answer(scope, receive, send)

    async def _exchange(self, router: Any, scope: dict, receive, send) -> None:
        """The token endpoint, with one rule the SDK's handler lacks: an authorization code a request failed with
        is burnt (a wrong verifier must not leave it usable for the next guess). The form is read here to know
        the code, and handed on unchanged."""
        body = await _read_body(receive, _MAX_TOKEN_FORM)
        if body is None:
            from starlette.responses import JSONResponse

            return await JSONResponse({"error": "invalid_request", "error_description": "The token request's "
                                       "form is too large."}, 413)(scope, _empty_receive, send)
        status: list[int] = []

        async def watched_send(message: dict) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        sent = False

        async def replay() -> dict:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await router(scope, replay, watched_send)
        form = parse_qs(body.decode("latin-1"))
        code = form.get("code", [""])[0]
        if status and status[0] >= 400 and form.get("grant_type") == ["authorization_code"] and code:
            await oauth_codes.burn_code(self._state.db, code)

    async def _refusal(self, scope: dict) -> Any:
        """The per-IP ceiling, as `guard.ip_limited` answers it."""
        state = self._state
        client = scope.get("client")
        address = rate_bucket_address(client[0] if client else "unknown")
        admission = await state.addresses.admit(address, state.settings.ip_limit_per_minute)
        if admission.allowed:
            return None
        state.metrics.request_rate_limited("ip")
        from starlette.responses import JSONResponse

        return JSONResponse(ip_limit_body(admission), 429, headers=ip_limit_headers(admission))

    def _router(self, origin: str) -> Any:
        router = self._routers.get(origin)
        if router is None:
            # The SDK (with pydantic and starlette) costs ~0.4 s to import: a process that never serves OAuth (the
            # command line, most starts) does not pay it.
            from starlette.routing import Router

            from inbox_http.oauth import routes

            router = Router(routes.routes_for(self._state, origin))
            self._routers[origin] = router
            while len(self._routers) > KEPT_ORIGINS:
                self._routers.popitem(last=False)
        else:
            self._routers.move_to_end(origin)
        return router


async def _read_body(receive, limit: int) -> bytes | None:
    """The request's whole body, or None past `limit` bytes."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _empty_receive() -> dict:
    return {"type": "http.request", "body": b"", "more_body": False}


def _host(scope: dict) -> str | None:
    """The Host header (ProxyFixMiddleware has put the proxy's X-Forwarded-Host there), else the bound address."""
    for name, value in scope.get("headers", ()):
        if name == b"host":
            return value.decode("latin-1")
    server = scope.get("server")
    return f"{server[0]}:{server[1]}" if server else None
