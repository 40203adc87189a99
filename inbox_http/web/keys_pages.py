"""The workspace's API keys for admins: `/app/keys` (the list, creating a key) and `/app/keys/<id>` (one key:
editing it, rotating it, revoking it).

Who may open them is key management's admin rule, which the key use cases declare (`use_cases/keys.py`): the
list and a key's page open for `keys.LIST`, every change is its own use case's (*manage*). Each form runs one of
them, whose key ring decides the rest (the limits of a name, an expiry, a
grace period, 20 active keys, only an active key changes) and answers a refusal the page shows. A key's plaintext
is shown once, on the page that made it, as the API answers it once.
"""

from __future__ import annotations

from datetime import datetime, timezone

from msgspec import UNSET, UnsetType
from quart import Blueprint, redirect, request
from werkzeug.datastructures import MultiDict

from inbox_actors.domain import key_rules
from inbox_actors.domain import scopes as scope_rules
from inbox_actors.use_cases import keys
from inbox_actors.use_cases.outcomes import Reason, Refused
from inbox_actors.use_cases.use_case import UseCase, run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.page_guard import WebRefusal, signed_in
from inbox_http.web.pages import page, refused_page

blueprint = Blueprint("web_keys", __name__, url_prefix="/app/keys", template_folder="templates")

# What the create form offers: every scope, each with its read-only variant where it has one (`all` apart).
SCOPE_CHOICES = [(base, f"{base}:read" if has_read else None) for base, has_read in scope_rules.SCOPES.items()]
_DONE = {"changed": "Changes saved.", "revoked": "Key revoked: it is refused from the next request."}


class FormFieldError(ValueError):
    """A field the form's own shape cannot read (text where a number goes); the action never saw it."""

    def refused(self) -> Refused:
        return Refused(Reason.INVALID, str(self), 400, "invalid_body")


@blueprint.app_template_filter("day_utc")
def day_utc(moment: datetime | None) -> str:
    """A key's dates with their year (an expiry may be two years away), in UTC as the API's are."""
    return "" if moment is None else moment.astimezone(timezone.utc).strftime("%d %b %Y %H:%M")


def _require(use_case: UseCase) -> None:
    refused = use_case.refusal_for(current_caller())
    if refused is not None:
        raise WebRefusal(refused.status, refused.message)


async def _run(use_case: UseCase, **arguments: object):
    return await run(dependencies().use_case_deps, current_caller(), use_case, arguments)


@blueprint.get("")
@signed_in
async def key_list():
    _require(keys.LIST)
    return await _list_page(notice=_DONE.get(request.args.get("done", "")))


@blueprint.post("")
@signed_in
async def create():
    _require(keys.CREATE)
    form = await request.form
    try:
        expires_in_days = _whole(form, "expires_in_days", "The expiry")
        rate_limit = _whole(form, "rate_limit_per_minute", "The per-minute limit")
    except FormFieldError as err:
        return await _list_page(refused=err.refused(), draft=form)
    issued = await _run(keys.CREATE, name=form.get("name", ""), scopes=form.getlist("scope"),
                        expires_in_days=expires_in_days, rate_limit_per_minute=rate_limit)
    if isinstance(issued, Refused):
        return await _list_page(refused=issued, draft=form)
    return await page("keys_issued.html", 201, issued=issued.data, previous=None)


@blueprint.get("/<int:key_id>")
@signed_in
async def key_page(key_id: int):
    _require(keys.LIST)
    return await _key_page(key_id, notice=_DONE.get(request.args.get("done", "")))


@blueprint.post("/<int:key_id>")
@signed_in
async def edit(key_id: int):
    _require(keys.EDIT)
    form = await request.form
    try:
        expiry = _expiry_change(form)
        rate_limit = _whole(form, "rate_limit_per_minute", "The per-minute limit")
    except FormFieldError as err:
        return await _key_page(key_id, refused=err.refused())
    edited = await _run(keys.EDIT, key_id=key_id, name=form.get("name", ""), rate_limit_per_minute=rate_limit,
                        limits_exempt=form.get("limits_exempt") == "on",
                        **({} if expiry is UNSET else {"expires_in_days": expiry}))
    if isinstance(edited, Refused):
        return await _key_page(key_id, refused=edited)
    return redirect(f"/app/keys/{key_id}?done=changed", 303)


@blueprint.post("/<int:key_id>/rotate")
@signed_in
async def rotate(key_id: int):
    _require(keys.ROTATE)
    form = await request.form
    try:
        grace_hours = _whole(form, "grace_hours", "The grace period")
    except FormFieldError as err:
        return await _key_page(key_id, refused=err.refused())
    # Left blank: the API's default, as a rotation without a body gets.
    rotation = await _run(keys.ROTATE, key_id=key_id, **({} if grace_hours is None else {"grace_hours": grace_hours}))
    if isinstance(rotation, Refused):
        return await _key_page(key_id, refused=rotation)
    return await page("keys_issued.html", 201, issued=rotation.data.key, previous=rotation.data.previous)


@blueprint.post("/<int:key_id>/revoke")
@signed_in
async def revoke(key_id: int):
    _require(keys.REVOKE)
    revoked = await _run(keys.REVOKE, key_id=key_id)
    if isinstance(revoked, Refused):
        return await _key_page(key_id, refused=revoked)
    return redirect("/app/keys?done=revoked", 303)


# -- rendering -----------------------------------------------------------------------------------------------


async def _list_page(*, notice: str | None = None, refused: Refused | None = None, draft=None):
    listed = await _run(keys.LIST)
    return await page("keys.html", refused.status if refused else 200, keys=listed.data.data,
                      may_manage=keys.CREATE.allows(current_caller()), scope_choices=SCOPE_CHOICES,
                      draft=draft or MultiDict(), limits=_limits(), notice=notice,
                      refusal=refused.message if refused else None)


async def _key_page(key_id: int, *, notice: str | None = None, refused: Refused | None = None):
    found = await _run(keys.SHOW, key_id=key_id)
    if isinstance(found, Refused):
        if refused is not None:
            return await refused_page(refused)
        raise WebRefusal(404, "There is no such key in this workspace.")
    return await page("keys_key.html", refused.status if refused else 200, key=found.data,
                      may_manage=keys.CREATE.allows(current_caller()), limits=_limits(), notice=notice,
                      refusal=refused.message if refused else None)


def _limits() -> dict[str, object]:
    """The key rules' bounds, for the forms' hints and input attributes (the key ring still checks them)."""
    return {"expiry_days": key_rules.EXPIRY_DAYS, "rate_limit": key_rules.RATE_LIMIT,
            "max_grace_hours": key_rules.MAX_GRACE_HOURS, "default_grace_hours": key_rules.DEFAULT_GRACE_HOURS,
            "default_rate_limit": key_rules.DEFAULT_RATE_LIMIT, "max_name": key_rules.MAX_NAME}


# -- reading the forms ---------------------------------------------------------------------------------------


def _whole(form, field: str, label: str) -> int | None:
    """A number field: None when left blank."""
    raw = form.get(field, "").strip()
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise FormFieldError(f"{label} must be a whole number.") from None


def _expiry_change(form) -> int | None | UnsetType:
    """The edit form's expiry: kept (UNSET), removed (None), or a number of days from now."""
    choice = form.get("expiry", "keep")
    if choice == "never":
        return None
    if choice == "days":
        days = _whole(form, "expires_in_days", "The expiry")
        if days is None:
            raise FormFieldError("Say in how many days the key expires, or keep its expiry.")
        return days
    return UNSET
