"""Route guards: each handler declares its policy once, next to itself, and the guard enforces it.

    @blueprint.get("/whoami")
    @guarded(tier=ApiTier.CORE)
    async def whoami(): ...

For every request the guard:
  1. asks the client IP's rate bucket for admission (1,000/min; sends and exempt keys skip it) -> 429 per-IP;
  2. identifies the key (so the call is recorded in the key's activity, whatever the outcome);
  3. applies the auth ladder (and, on key management, the admin rules or a session) -> 401/403;
  4. asks the key's rate bucket for admission (the key's own limit, else 600/min unless exempt) -> 429;
  5. runs the handler; the key's X-RateLimit-* headers go on whatever answers the call.

The policy is also kept on the view function (`route_policy`), so the route list, the OpenAPI document and
the error handlers read what the handler declared rather than a second copy.
"""

from __future__ import annotations

import functools
import ipaddress
from typing import Awaitable, Callable, TypeVar

from quart import Quart, Response, g, request

from inbox_actors.access import rate_bucket
from inbox_actors.access.sessions import find_session, has_session_shape
from inbox_actors.domain import auth_ladder
from inbox_actors.domain.api_keys import has_key_shape, hash_key
from inbox_actors.domain.auth_ladder import NO_TOKEN, AdminRule, Credential, ErrorStyle, RoutePolicy
from inbox_actors.domain.key_rules import DEFAULT_RATE_LIMIT
from inbox_actors.domain.plans import ApiTier
from inbox_actors.domain.rate_window import WINDOW_SECONDS, Admission
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.use_case import UseCase
from inbox_http.dependencies import dependencies
from inbox_http.encoding import json_response
from inbox_http.errors import refusal_response, stable_error

Handler = TypeVar("Handler", bound=Callable[..., Awaitable[object]])

# Longer than any key by far: anything bigger is refused without hashing it.
_MAX_TOKEN_LENGTH = 512


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header; None when there is no bearer credential."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    token = token.strip()
    return token or None


def client_ip() -> str:
    return request.remote_addr or "unknown"


def guarded(*, tier: ApiTier, use_case: UseCase | None = None, scopes: tuple[str, ...] = (),
            errors: ErrorStyle = ErrorStyle.STABLE, admin: AdminRule | None = None, sending: bool = False,
            dashboard: bool = False):
    """The route's policy. A route that binds a use case names it (`use_case=chats.CLAIM`): the scopes it needs
    are the declaration's, checked here in the auth ladder's words before the body is read. `scopes` is for the
    routes no use case stands behind yet (reads of the Reporting API, key management)."""
    if use_case is not None:
        scopes, admin = use_case.permissions, use_case.admin or admin
    policy = RoutePolicy(tier=tier, scopes=scopes, errors=errors, admin=admin, sending=sending, dashboard=dashboard)

    def decorate(handler: Handler) -> Handler:
        @functools.wraps(handler)
        async def view(*args, **kwargs):
            return await _guard(policy, handler, args, kwargs)

        view.route_policy = policy  # type: ignore[attr-defined]
        return view  # type: ignore[return-value]

    return decorate


async def _guard(policy: RoutePolicy, handler, args, kwargs):
    state = dependencies()
    now = state.clock.now()
    token = bearer_token(request.headers.get("Authorization"))
    if token is not None and len(token) > _MAX_TOKEN_LENGTH:
        token = "invalid"  # never a key; answered as an invalid one
    by_session = token is not None and (policy.admin is not None or policy.dashboard) and has_session_shape(token)

    # Sends, and keys exempt from the default limits (long-standing integrations), skip the per-IP ceiling.
    exempt = token is not None and not by_session and state.credentials.is_exempt(token)
    if not policy.sending and not exempt:
        admission = await state.addresses.admit(rate_bucket_address(client_ip()),
                                                state.settings.ip_limit_per_minute)
        if not admission.allowed:
            # Over the ceiling nothing may reach the database, yet every call of a key is recorded: by the key in
            # memory, or by its hash for the activity log's writer to resolve (a token that is no key: nothing).
            if token is not None and not by_session:
                g.audit_credential = state.credentials.cached(token)
                if g.audit_credential is None and has_key_shape(token):
                    g.audit_key_hash = hash_key(token)
            return ip_limited(admission)

    credential = None
    if token is not None and not by_session:
        credential = await state.credentials.lookup(token)
        g.audit_credential = credential  # every call of a known key is recorded, whatever the answer

    if token is None:
        return refusal_response(NO_TOKEN)
    if by_session:
        session = await find_session(state.db, token)
        if session is None:
            return refusal_response(auth_ladder.INVALID_SESSION)
        if policy.admin is not None:
            refusal = auth_ladder.check_session_admin(session.member_status, session.role, session.permissions,
                                                 policy.admin)
        else:
            refusal = auth_ladder.check_session_member(session.member_status, session.role, session.permissions,
                                                  policy.scopes, request.method)
        if refusal is not None:
            return refusal_response(refusal)
        g.caller = Caller.of_session(session)
        return await handler(*args, **kwargs)

    refusal = auth_ladder.check_access(credential, policy, request.method, now)
    if refusal is None and policy.admin is not None:
        refusal = auth_ladder.check_key_admin(credential, policy.admin)
    limit = None
    if credential is not None:
        # A limit set on the key binds every call; the default binds neither sends nor an exempt key.
        limit = credential.rate_limit_per_minute or (
            None if policy.sending or credential.limits_exempt else DEFAULT_RATE_LIMIT)
    if refusal is not None:
        if limit is not None and auth_ladder.is_live(credential, now):
            # A refused call uses none of the allowance, but still shows where the key stands.
            g.rate_limit_headers = _key_limit_headers(await rate_bucket.peek_key(
                state.actors, credential.workspace_id, credential.key_id, limit))
        return refusal_response(refusal)
    g.credential = credential

    if limit is not None:
        admission = await rate_bucket.admit_key(state.actors, credential.workspace_id, credential.key_id, limit)
        # Added to whatever answers this call, an error raised by the handler included (install_guard).
        g.rate_limit_headers = _key_limit_headers(admission)
        if not admission.allowed:
            return _key_limited(admission)
    return await handler(*args, **kwargs)


def install_guard(app: Quart) -> None:
    @app.after_request
    async def add_rate_limit_headers(response: Response) -> Response:
        headers = g.get("rate_limit_headers")
        if headers:
            response.headers.update(headers)
        return response


def rate_bucket_address(ip: str) -> str:
    """The per-IP bucket an address counts against: IPv6 by its /64, which one subscriber usually holds whole
    (otherwise one client could walk through addresses to escape the ceiling)."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ip
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


def _key_limit_headers(admission: Admission) -> dict[str, str]:
    return {
        "X-RateLimit-Limit": str(admission.limit),
        "X-RateLimit-Remaining": str(admission.remaining),
        "X-RateLimit-Reset": str(admission.reset_seconds),
    }


def _key_limited(admission: Admission):
    dependencies().metrics.request_rate_limited("key")
    wait = admission.retry_after_seconds
    return stable_error(
        429, "rate_limited",
        f"This key is over its limit of {admission.limit:,} requests per minute; retry in {wait} seconds.",
        headers={"Retry-After": str(wait)}, retry_after_seconds=wait,
    )


def ip_limited(admission: Admission):
    """The per-IP ceiling's refusal, as every route answers it (the MCP endpoint too, which has no guard)."""
    dependencies().metrics.request_rate_limited("ip")
    return json_response(ip_limit_body(admission), 429, ip_limit_headers(admission))


def ip_limit_body(admission: Admission) -> dict[str, str]:
    """The per-IP refusal's body and headers, shared with the OAuth endpoints, which are no Quart routes."""
    return {"error": f"Too many requests from this IP address; retry in {admission.retry_after_seconds} seconds."}


def ip_limit_headers(admission: Admission) -> dict[str, str]:
    return {"RateLimit-Limit": str(admission.limit), "RateLimit-Remaining": str(admission.remaining),
            "RateLimit-Reset": str(admission.reset_seconds),
            "RateLimit-Policy": f"{admission.limit};w={int(WINDOW_SECONDS)}",
            "Retry-After": str(admission.retry_after_seconds)}


def responds(response_type: type, status: int = 200, *, media: tuple[str, ...] = ()) -> Callable[[Handler], Handler]:
    """Declare the body and status a handler answers with on success (read by the OpenAPI document); `media`: the
    content types of a body that is not JSON (a `bytes` stream such as an export)."""

    def decorate(view: Handler) -> Handler:
        view.response_type = response_type  # type: ignore[attr-defined]
        view.response_status = status  # type: ignore[attr-defined]
        view.response_media = media  # type: ignore[attr-defined]
        return view

    return decorate


def accepts(parameters: tuple) -> Callable[[Handler], Handler]:
    """Declare the query parameters a handler reads (`QueryParameter`s; read by the OpenAPI document)."""

    def decorate(view: Handler) -> Handler:
        view.query_parameters = parameters  # type: ignore[attr-defined]
        return view

    return decorate


def current_credential() -> Credential:
    return g.credential


def current_caller() -> Caller:
    """Who calls, as the actions see it: a session's member, or a key's creator with the key's effective
    permissions, labelled with the key's name on what it sends."""
    caller = g.get("caller")
    if caller is None:
        credential = current_credential()
        caller = g.caller = Caller.of_api_key(credential, label=credential.key_name)
    return caller
