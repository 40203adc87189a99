"""Bulk actions from the workspace's list: `POST /app/inbox/bulk?view=…&…` with the chats ticked in the list
(`phone`, each a checkbox of a row) and what to do with them (`action`: assign, label, snooze, resolve, each with its
field), bound to the declared use case of that action (`bulk_actions.RESOLVE`, `ASSIGN`, `LABEL`, `SNOOZE`), which
runs each chat's own use case as the member.

The form carries its own idempotency key (rendered with it, new after each answer), so a double click or a retry
acts once: a second request while the first runs waits for its report (`composer.run_composed`). Without the
script the answer is a redirect to the list with the report's key (`?bulk=<key>`), whose page reads the report
back (`bulk_actions.REPORT`), so a reload repeats nothing; with it, the list pane with the report. A refusal of the
whole request (no chat ticked, no member chosen) is a person's sentence above the list.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, redirect, request

from inbox_actors.use_cases import bulk_actions, keyed_sends
from inbox_actors.use_cases.outcomes import Done, Reason, Refused
from inbox_actors.use_cases.use_case import run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web import composer, fragments, workspace
from inbox_http.web.list_tools import SNOOZE_CHOICES
from inbox_http.web.page_guard import signed_in

blueprint = Blueprint("web_bulk", __name__, url_prefix="/app/inbox", template_folder="templates")

# A person's sentence for the refusals a form's own choices make, instead of the fields' names the API's use.
_SENTENCES = {
    "invalid_phones": f"Tick 1 to {bulk_actions.MAX_CHATS} chats in the list first, then choose what to do with "
                      "them.",
    "invalid_action": "Choose what to do with the ticked chats.",
    "invalid_to_user_id": "Choose the member to assign the ticked chats to.",
    "invalid_arguments": "Choose what to do with the ticked chats, and its choice (a member, a label, how long).",
    "invalid_label": "Choose the label to put on the ticked chats.",
    "invalid_for_hours": "Choose how long to snooze the ticked chats.",
    keyed_sends.DIFFERENT_REQUEST: "This form already acted on other chats; the list is shown afresh: tick the chats "
                                   "again.",
}


@blueprint.post("/bulk")
@signed_in
async def bulk():
    form = await request.form
    where = workspace.place(phone="")
    use_case = bulk_actions.BY_ACTION.get(form.get("action") or "")
    if use_case is None:
        outcome: Done | Refused = Refused(Reason.INVALID, _SENTENCES["invalid_action"], 400, "invalid_action")
    else:
        outcome = await composer.run_composed(use_case, _arguments(form))
    if isinstance(outcome, Refused):
        sentence = _SENTENCES.get(outcome.code, outcome.message)
        if fragments.from_script():
            return await workspace.list_part(where, "list_pane", outcome.status, bulk_refusal=sentence)
        return await workspace.whole_page(where, None, outcome.status, tools={"bulk_refusal": sentence})
    if fragments.from_script():
        return await workspace.list_part(where, "list_pane", report=outcome.data)
    return redirect(f"/app/inbox?{where.query(bulk=form.get(composer.KEY_FIELD))}", 303)


def _arguments(form) -> dict[str, Any]:
    """The form's fields as the chosen action's arguments: only its own field, hours to snooze as hours (so that
    a second click asks the very same), a reason left blank left out."""
    action = form.get("action") or ""
    arguments: dict[str, Any] = {"phones": form.getlist("phone"), **composer.key_of(form)}
    if action == "assign":
        arguments["to_user_id"] = form.get("to_user_id") or ""  # none chosen: the field's own rule says so
    elif action == "label":
        arguments["label"] = form.get("label") or ""
    elif action == "snooze":
        choice = form.get("until") or ""
        arguments["for_hours"] = SNOOZE_CHOICES[choice] if choice in SNOOZE_CHOICES else "choose"
    reason = (form.get("reason") or "").strip()
    if reason and action in ("assign", "resolve"):
        arguments["reason"] = reason
    return arguments


async def report_tools() -> dict[str, Any]:
    """The report of the bulk action named by the address (`?bulk=<key>`, after the form's redirect), if it is
    the member's; nothing otherwise."""
    key = request.args.get("bulk")
    if not key:
        return {}
    found = await run(dependencies().use_case_deps, current_caller(), bulk_actions.REPORT, {"idempotency_key": key})
    return {"report": found.data} if isinstance(found, Done) else {}
