"""Who is on the other side of a web page: the member a session cookie stands for, checked on every request.

The cookie carries the same dashboard session token `Authorization: Bearer session_…` carries (HttpOnly, so no
script reads it; SameSite=Lax, so another site's form or script does not send it; Secure over HTTPS). It is looked
up on every request, so a member suspended, removed or signed out elsewhere is out at once.

A state-changing request must also carry the page's CSRF token (a hidden form field, or the `X-CSRF-Token` header
for the pages' script) and, when the browser sends one, an Origin of this service. The token is an HMAC of the
session token, so it needs no storage and dies with the session; it is never the session token itself.

Every request of the web app counts against the per-IP ceiling the API has (the same rate bucket).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from datetime import datetime
from typing import Awaitable, Callable, TypeVar
from urllib.parse import quote, urlsplit

from quart import Response, g, redirect, request

from inbox_actors.access.sessions import Session, find_session
from inbox_actors.use_cases.caller import Caller
from inbox_http.dependencies import dependencies
from inbox_http.guard import client_ip, rate_bucket_address

SESSION_COOKIE = "inbox_session"
CSRF_FIELD = "csrf"
CSRF_HEADER = "X-CSRF-Token"
SIGN_IN_PATH = "/app/sign-in"
HOME_PATH = "/app/inbox"

Handler = TypeVar("Handler", bound=Callable[..., Awaitable[object]])


class WebRefusal(Exception):
    """A request the web app answers with a page saying why (status, a sentence)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def csrf_token(session_token: str) -> str:
    return hmac.new(session_token.encode(), b"inbox-actors web csrf", hashlib.sha256).hexdigest()


def set_session_cookie(response: Response, token: str, expires_at: datetime) -> None:
    response.set_cookie(SESSION_COOKIE, token, expires=expires_at, path="/app", httponly=True, samesite="Lax",
                        secure=request.scheme == "https")


def clear_session_cookie(response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/app", httponly=True, samesite="Lax",
                           secure=request.scheme == "https")


def safe_next(target: str | None) -> str:
    """Where to go after signing in: a path of the web app only (never another site)."""
    if not target or not target.startswith("/app/") or target.startswith("//") or "\\" in target:
        return HOME_PATH
    parts = urlsplit(target)
    return target if not parts.scheme and not parts.netloc else HOME_PATH


def sign_in_redirect() -> Response:
    here = request.full_path.rstrip("?") if request.method == "GET" else HOME_PATH
    return redirect(f"{SIGN_IN_PATH}?next={quote(here, safe='/')}", 303)


async def admit_ip() -> None:
    """The per-IP ceiling, as the API's guard applies it; over it, a WebRefusal (429)."""
    state = dependencies()
    admission = await state.addresses.admit(rate_bucket_address(client_ip()), state.settings.ip_limit_per_minute)
    if not admission.allowed:
        raise WebRefusal(429, f"Too many requests from this address; retry in {admission.retry_after_seconds} seconds.")


def signed_in(view: Handler) -> Handler:
    """The view runs for an active member's session (`g.caller`, `g.session`, `g.csrf`); without one a page
    redirects to sign-in, and a script's request (a part, the stream, an action) gets 401, which the workspace's
    script answers by keeping what was typed and offering to sign in again."""

    @functools.wraps(view)
    async def guarded_view(*args, **kwargs):
        await admit_ip()
        state = dependencies()
        token = request.cookies.get(SESSION_COOKIE)
        session: Session | None = None
        if token:
            session = await find_session(state.db, token)
        if session is None or session.member_status != "active":
            if request.method in ("GET", "HEAD") and not is_script_request():  # a HEAD is a GET without its body
                response = sign_in_redirect()
                if token:
                    clear_session_cookie(response)
                return response
            raise WebRefusal(401, "Your session has ended; sign in again.")
        g.session_token = token
        g.session = session
        g.caller = Caller.of_session(session)
        g.csrf = csrf_token(token)
        if request.method not in ("GET", "HEAD"):
            await check_csrf(g.csrf)
        return await view(*args, **kwargs)

    return guarded_view  # type: ignore[return-value]


def check_origin() -> None:
    """A browser names the page a form or script was sent from; one of another site is refused (the sign-in and
    invite forms, which have no session yet, rely on this alone)."""
    origin = request.headers.get("Origin")
    if origin is not None and urlsplit(origin).netloc != request.host:
        raise WebRefusal(403, "This request came from another site; it was refused.")


async def check_csrf(expected: str) -> None:
    check_origin()
    form = await request.form
    sent = request.headers.get(CSRF_HEADER) or form.get(CSRF_FIELD) or ""
    if not hmac.compare_digest(sent, expected):
        raise WebRefusal(403, "This form has expired; reload the page and try again.")


def is_script_request() -> bool:
    """A page's script asking (a part to swap, the event stream, an action), not the browser loading a page: the
    Back button's restore of a page (htmx's `HX-History-Restore-Request`) is a page load."""
    if request.headers.get("HX-History-Restore-Request") == "true":
        return False
    return request.headers.get("HX-Request") == "true" or request.headers.get("X-Requested-With") == "fetch" or \
        "text/event-stream" in request.headers.get("Accept", "")
