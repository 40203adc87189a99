"""The workspace's labels for admins: `/app/labels` (the set, and a form to create one), `/app/labels/<id>` (rename
or recolour) and `/app/labels/<id>/delete` (a page that asks before deleting, so a keyboard user confirms as
anyone else does, without a script). Each form runs one of the label set's use cases (`use_cases/labels.py`), whose
permission and rules (unique names, the limits) answer with a refusal the page shows; the page opens for whoever
may read the set (`labels.LIST`) and offers the changes to whoever the declarations allow them.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, redirect, request

from inbox_actors.labels import label_set
from inbox_actors.use_cases import labels
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import UseCase, run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.page_guard import WebRefusal, signed_in
from inbox_http.web.pages import page

blueprint = Blueprint("web_labels", __name__, url_prefix="/app/labels", template_folder="templates")

_DONE = {"created": "Label created.", "changed": "Label saved; chats that had it carry the new name.",
         "deleted": "Label deleted; it came off every chat that had it."}


def _may_change() -> bool:
    return labels.CHANGE.allows(current_caller())


def _require_reading() -> None:
    if not labels.LIST.allows(current_caller()):
        raise WebRefusal(403, "The labels need the inbox or contacts permission.")


def _require_changing() -> None:
    """The pages that only change a label (its form, the question before deleting it)."""
    _require_reading()
    if not _may_change():
        raise WebRefusal(403, "Changing the labels needs the settings permission.")


async def _run(use_case: UseCase, arguments: dict[str, Any]):
    return await run(dependencies().use_case_deps, current_caller(), use_case, arguments, strict=False)


@blueprint.get("")
@signed_in
async def labels_page():
    _require_reading()
    return await _list_page(notice=_DONE.get(request.args.get("done", "")))


@blueprint.post("")
@signed_in
async def create():
    _require_reading()
    form = await request.form
    typed = {"name": form.get("name", ""), "colour": form.get("colour", "")}
    created = await _run(labels.CREATE, {"name": typed["name"], "colour": typed["colour"] or label_set.DEFAULT_COLOUR})
    if isinstance(created, Refused):
        return await _list_page(created, typed=typed)
    return redirect("/app/labels?done=created", 303)


@blueprint.get("/<int:label_id>")
@signed_in
async def label_page(label_id: int):
    _require_changing()
    return await _one_page("labels_edit.html", label_id, notice=_DONE.get(request.args.get("done", "")))


@blueprint.post("/<int:label_id>")
@signed_in
async def change(label_id: int):
    _require_changing()  # a refusal shows the label's form, which only those who may change it see
    form = await request.form
    typed = {"name": form.get("name", ""), "colour": form.get("colour", "")}
    changed = await _run(labels.CHANGE, {**typed, "label_id": label_id})
    if isinstance(changed, Refused):
        return await _one_page("labels_edit.html", label_id, changed, typed=typed)
    return redirect(f"/app/labels/{label_id}?done=changed", 303)


@blueprint.get("/<int:label_id>/delete")
@signed_in
async def confirm_delete(label_id: int):
    _require_changing()
    return await _one_page("labels_delete.html", label_id)


@blueprint.post("/<int:label_id>/delete")
@signed_in
async def delete(label_id: int):
    _require_reading()
    deleted = await _run(labels.DELETE, {"label_id": label_id})
    if isinstance(deleted, Refused):
        return await _list_page(deleted)
    return redirect("/app/labels?done=deleted", 303)


async def _label_set() -> list[label_set.LabelView]:
    listed = await _run(labels.LIST, {})
    if isinstance(listed, Refused):  # only a permission, which every page here checked first
        raise WebRefusal(listed.status, listed.message)
    return listed.data.data


async def _list_page(refused: Refused | None = None, notice: str | None = None, typed: dict | None = None):
    """The set, and the create form empty or as typed into a refused one."""
    typed = {"name": "", "colour": label_set.DEFAULT_COLOUR} | {key: value for key, value in (typed or {}).items()
                                                                 if value}
    return await page("labels.html", refused.status if refused else 200, labels=await _label_set(),
                      may_change=_may_change(), typed=typed, notice=notice,
                      refusal=refused.message if refused else None)


async def _one_page(template: str, label_id: int, refused: Refused | None = None, notice: str | None = None,
                    typed: dict | None = None):
    """One label's page; its form shows the label as saved, or as typed into a refused form."""
    # The set is at most a few hundred labels (label_set.MAX_LABELS): one read, the label picked from it.
    label = next((found for found in await _label_set() if found.id == label_id), None)
    if label is None:
        raise WebRefusal(404, "No such label in this workspace.")
    shown = {"name": label.name, "colour": label.colour} | {key: value for key, value in (typed or {}).items()
                                                             if value}
    return await page(template, refused.status if refused else 200, label=label, shown=shown, notice=notice,
                      refusal=refused.message if refused else None)
