"""Signing in and out, and setting a password from an invite: `/app/sign-in`, `/app/sign-out`,
`/app/invite/<token>`.

The rules (rate limits per address and per account, what a wrong password is told, invites' lives) are
`access/sign_in.py`'s and `access/invites.py`'s; these pages read the form, ask, and set or clear the cookie.
"""

from __future__ import annotations

from quart import Blueprint, g, redirect, request

from inbox_actors.access import invites, sign_in
from inbox_http.dependencies import dependencies
from inbox_http.guard import client_ip, rate_bucket_address
from inbox_http.web.page_guard import (
    HOME_PATH,
    SIGN_IN_PATH,
    admit_ip,
    check_origin,
    clear_session_cookie,
    safe_next,
    set_session_cookie,
    signed_in,
)
from inbox_http.web.pages import page

blueprint = Blueprint("web_sign_in", __name__, url_prefix="/app", template_folder="templates")

# A form field longer than this is no email or password anyone types; refused before any work.
_MAX_FIELD = 1024


@blueprint.get("/")
async def home():
    return redirect(HOME_PATH, 303)


@blueprint.get("/sign-in")
async def sign_in_form():
    return await page("sign_in.html", next=safe_next(request.args.get("next")), email="", message=None)


@blueprint.post("/sign-in")
async def sign_in_submit():
    await admit_ip()
    check_origin()
    form = await request.form
    email, password = form.get("email", "").strip(), form.get("password", "")
    target = safe_next(form.get("next"))
    if not email or not password or len(email) > _MAX_FIELD or len(password) > _MAX_FIELD:
        return await page("sign_in.html", 400, next=target, email=email[:_MAX_FIELD],
                          message="Enter your email and your password.")
    state = dependencies()
    outcome = await sign_in.sign_in(state.db, state.addresses, email=email, password=password,
                                    ip=rate_bucket_address(client_ip()),
                                    now=state.clock.now())
    if isinstance(outcome, sign_in.SignInRefusal):
        response = await page("sign_in.html", outcome.status, next=target, email=email, message=outcome.message)
        if outcome.retry_after_seconds:
            response.headers["Retry-After"] = str(outcome.retry_after_seconds)
        return response
    response = redirect(target, 303)
    set_session_cookie(response, outcome.token, outcome.expires_at)
    return response


@blueprint.post("/sign-out")
@signed_in
async def sign_out():
    state = dependencies()
    await sign_in.sign_out(state.db, g.session_token, state.clock.now())
    response = redirect(SIGN_IN_PATH, 303)
    clear_session_cookie(response)
    return response


@blueprint.get("/invite/<token>")
async def invite_form(token: str):
    await admit_ip()
    state = dependencies()
    invite = await invites.invite_status(state.db, token[:_MAX_FIELD])
    return await page("invite.html", 200 if invite is not None and invite.usable else 404, invite=invite,
                      message=None)


@blueprint.post("/invite/<token>")
async def invite_submit(token: str):
    await admit_ip()
    check_origin()
    state = dependencies()
    now = state.clock.now()
    form = await request.form
    password, again = form.get("password", ""), form.get("password_again", "")
    invite = await invites.invite_status(state.db, token[:_MAX_FIELD])
    if invite is None or not invite.usable:
        return await page("invite.html", 404, invite=invite, message=None)
    if password != again:
        return await page("invite.html", 400, invite=invite, message="The two passwords differ.")
    outcome = await invites.accept_invite(state.db, token=token, password=password[:_MAX_FIELD], now=now)
    if isinstance(outcome, sign_in.SignInRefusal):
        return await page("invite.html", outcome.status, invite=invite, message=outcome.message)
    response = redirect(HOME_PATH, 303)
    set_session_cookie(response, outcome.token, outcome.expires_at)
    return response
