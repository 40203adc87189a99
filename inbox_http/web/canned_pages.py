"""The workspace's canned responses: `/app/canned` (the set, and a form to add one), `/app/canned/<id>` (change
one) and `/app/canned/<id>/delete` (a page that asks before removing, so a keyboard user confirms as anyone else
does, without a script); and `/app/canned/choices`, the set as JSON for the composer's script, which searches it
as "/" is typed in the reply box and fills the placeholders in the browser.

Each form runs one of the canned responses' use cases (`use_cases/canned_responses.py`), whose permission and rules
(a shortcut unique whatever its case, the fields' lengths) answer with a refusal the page shows; the pages open for
whoever may read the set (`canned_responses.LIST`: whoever may reply) and offer changes to whoever the
declarations allow them (`settings`).
"""

from __future__ import annotations

from typing import Any

import msgspec
from quart import Blueprint, Response, redirect, request

from inbox_actors.canned_responses.canned_set import CannedResponse
from inbox_actors.use_cases import canned_responses
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import UseCase, run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.composer import form_text
from inbox_http.web.page_guard import WebRefusal, signed_in
from inbox_http.web.pages import page

blueprint = Blueprint("web_canned", __name__, url_prefix="/app/canned", template_folder="templates")

_DONE = {"added": "Canned response added.", "changed": "Canned response saved.",
         "removed": "Canned response removed."}
_FIELDS = ("shortcut", "title", "text")


class Choice(msgspec.Struct, frozen=True):
    """What the composer's script needs of one: to search it and to insert it."""

    id: int
    shortcut: str
    title: str
    text: str


def _may_change() -> bool:
    return canned_responses.CHANGE.allows(current_caller())


def _require_reading() -> None:
    if not canned_responses.LIST.allows(current_caller()):
        raise WebRefusal(403, "The canned responses need the inbox permission.")


def _require_changing() -> None:
    """The pages that only change one (its form, the question before removing it)."""
    _require_reading()
    if not _may_change():
        raise WebRefusal(403, "Changing the canned responses needs the settings permission.")


async def _run(use_case: UseCase, arguments: dict[str, Any]):
    return await run(dependencies().use_case_deps, current_caller(), use_case, arguments, strict=False)


async def _typed() -> dict[str, str]:
    """The form's fields as typed, a text area's line breaks as one character each (as the box counted them)."""
    form = await request.form
    return {"shortcut": (form.get("shortcut") or "").strip(), "title": form.get("title") or "",
            "text": form_text(form, "text")}


@blueprint.get("")
@signed_in
async def canned_page():
    _require_reading()
    return await _list_page(notice=_DONE.get(request.args.get("done", "")))


@blueprint.get("/choices")
@signed_in
async def choices():
    """The set for the composer's script (a JSON array, by shortcut)."""
    _require_reading()
    listed = [Choice(c.id, c.shortcut, c.title, c.text) for c in await _canned_set()]
    return Response(msgspec.json.encode(listed), content_type="application/json")


@blueprint.post("")
@signed_in
async def add():
    _require_reading()
    typed = await _typed()
    added = await _run(canned_responses.ADD, typed)
    if isinstance(added, Refused):
        return await _list_page(added, typed=typed)
    return redirect("/app/canned?done=added", 303)


@blueprint.get("/<int:canned_id>")
@signed_in
async def canned_one(canned_id: int):
    _require_changing()
    return await _one_page("canned_edit.html", canned_id, notice=_DONE.get(request.args.get("done", "")))


@blueprint.post("/<int:canned_id>")
@signed_in
async def change(canned_id: int):
    _require_changing()  # a refusal shows the response's form, which only those who may change it see
    typed = await _typed()
    changed = await _run(canned_responses.CHANGE, {**typed, "canned_id": canned_id})
    if isinstance(changed, Refused):
        return await _one_page("canned_edit.html", canned_id, changed, typed=typed)
    return redirect(f"/app/canned/{canned_id}?done=changed", 303)


@blueprint.get("/<int:canned_id>/delete")
@signed_in
async def confirm_remove(canned_id: int):
    _require_changing()
    return await _one_page("canned_delete.html", canned_id)


@blueprint.post("/<int:canned_id>/delete")
@signed_in
async def remove(canned_id: int):
    _require_reading()
    removed = await _run(canned_responses.REMOVE, {"canned_id": canned_id})
    if isinstance(removed, Refused):
        return await _list_page(removed)
    return redirect("/app/canned?done=removed", 303)


async def _canned_set() -> list[CannedResponse]:
    listed = await _run(canned_responses.LIST, {})
    if isinstance(listed, Refused):  # only a permission, which every page here checked first
        raise WebRefusal(listed.status, listed.message)
    return listed.data.data


async def _list_page(refused: Refused | None = None, notice: str | None = None, typed: dict | None = None):
    """The set, and the add form empty or as typed into a refused one."""
    return await page("canned.html", refused.status if refused else 200, canned=await _canned_set(),
                      may_change=_may_change(), typed={name: "" for name in _FIELDS} | (typed or {}),
                      notice=notice, refusal=refused.message if refused else None)


async def _one_page(template: str, canned_id: int, refused: Refused | None = None, notice: str | None = None,
                    typed: dict | None = None):
    """One response's page; its form shows it as saved, or as typed into a refused form."""
    # The set is at most a few hundred (canned_set.MAX_CANNED): one read, the response picked from it.
    found = next((c for c in await _canned_set() if c.id == canned_id), None)
    if found is None:
        raise WebRefusal(404, "No such canned response in this workspace.")
    shown = {name: getattr(found, name) for name in _FIELDS} | (typed or {})
    return await page(template, refused.status if refused else 200, canned=found, shown=shown, notice=notice,
                      refusal=refused.message if refused else None)
