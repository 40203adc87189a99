"""The workspace's labels for admins: `/app/labels` (the set, and a form to create one), `/app/labels/<id>` (rename
or recolour) and `/app/labels/<id>/delete` (a page that asks before deleting, so a keyboard user confirms as
anyone else does, without a script). Each form is one of the label set's use cases (`actions/labels.py`), whose
rules (unique names, the limits) answer with a refusal the page shows. Reading the set needs what reading chats
does, changing it `settings` (`permissions.py`).
"""

from __future__ import annotations

from quart import Blueprint, redirect, request

from inbox_actors.actions import labels as label_actions
from inbox_actors.actions import permissions
from inbox_actors.actions.outcomes import Refused
from inbox_actors.team import labels
from inbox_http.services import services
from inbox_http.web.page_guard import WebRefusal, current_caller, signed_in
from inbox_http.web.pages import form_fields, page

blueprint = Blueprint("web_labels", __name__, url_prefix="/app/labels", template_folder="templates")

_DONE = {"created": "Label created.", "changed": "Label saved; chats that had it carry the new name.",
         "deleted": "Label deleted; it came off every chat that had it."}


def _may_change() -> bool:
    return current_caller().may(permissions.SETTINGS, "POST")


def _require_reading() -> None:
    if not current_caller().may(permissions.CHAT_CONTENT, "GET"):
        raise WebRefusal(403, "The labels need the inbox or contacts permission.")


def _require_changing() -> None:
    _require_reading()
    if not _may_change():
        raise WebRefusal(403, "Changing the labels needs the settings permission.")


@blueprint.get("")
@signed_in
async def labels_page():
    _require_reading()
    return await _list_page(notice=_DONE.get(request.args.get("done", "")))


@blueprint.post("")
@signed_in
async def create():
    _require_changing()
    form = await request.form
    body = form_fields(labels.CreateLabel, {"name": form.get("name", ""),
                                        "colour": form.get("colour") or labels.DEFAULT_COLOUR})
    if not isinstance(body, Refused):
        body = await label_actions.create(services().action_deps, current_caller(), body)
    if isinstance(body, Refused):
        return await _list_page(body, typed={"name": form.get("name", ""), "colour": form.get("colour", "")})
    return redirect("/app/labels?done=created", 303)


@blueprint.get("/<int:label_id>")
@signed_in
async def label_page(label_id: int):
    _require_changing()
    return await _one_page("labels_edit.html", label_id, notice=_DONE.get(request.args.get("done", "")))


@blueprint.post("/<int:label_id>")
@signed_in
async def change(label_id: int):
    _require_changing()
    form = await request.form
    body = form_fields(labels.ChangeLabel, {"name": form.get("name", ""), "colour": form.get("colour", "")})
    if not isinstance(body, Refused):
        body = await label_actions.change(services().action_deps, current_caller(), label_id, body)
    if isinstance(body, Refused):
        return await _one_page("labels_edit.html", label_id, body,
                               typed={"name": form.get("name", ""), "colour": form.get("colour", "")})
    return redirect(f"/app/labels/{label_id}?done=changed", 303)


@blueprint.get("/<int:label_id>/delete")
@signed_in
async def confirm_delete(label_id: int):
    _require_changing()
    return await _one_page("labels_delete.html", label_id)


@blueprint.post("/<int:label_id>/delete")
@signed_in
async def delete(label_id: int):
    _require_changing()
    outcome = await label_actions.delete(services().action_deps, current_caller(), label_id)
    if isinstance(outcome, Refused):
        return await _list_page(outcome)
    return redirect("/app/labels?done=deleted", 303)


async def _label_set():
    return (await labels.labels(services().db, current_caller().workspace_id)).data


async def _list_page(refused: Refused | None = None, notice: str | None = None, typed: dict | None = None):
    """The set, and the create form empty or as typed into a refused one."""
    typed = {"name": "", "colour": labels.DEFAULT_COLOUR} | {key: value for key, value in (typed or {}).items()
                                                              if value}
    return await page("labels.html", refused.status if refused else 200, labels=await _label_set(),
                      may_change=_may_change(), typed=typed, notice=notice,
                      refusal=refused.message if refused else None)


async def _one_page(template: str, label_id: int, refused: Refused | None = None, notice: str | None = None,
                    typed: dict | None = None):
    """One label's page; its form shows the label as saved, or as typed into a refused form."""
    # The set is at most a few hundred labels (labels.MAX_LABELS): one read, the label picked from it.
    label = next((found for found in await _label_set() if found.id == label_id), None)
    if label is None:
        raise WebRefusal(404, "No such label in this workspace.")
    shown = {"name": label.name, "colour": label.colour} | {key: value for key, value in (typed or {}).items()
                                                             if value}
    return await page(template, refused.status if refused else 200, label=label, shown=shown, notice=notice,
                      refusal=refused.message if refused else None)
