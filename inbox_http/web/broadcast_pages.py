"""Broadcasts for admins: `/app/broadcasts?status=…` (the workspace's broadcasts, those awaiting approval unless
another status is chosen) and `/app/broadcasts/<id>` (one broadcast with its progress, the view the API's
`GET /api/broadcasts/{id}` answers), with approving and rejecting for members the declarations allow. Each decision
is a broadcasts use case (`broadcasts.APPROVE`, `broadcasts.REJECT`): the runner checks the member's permission and
the reason, the broadcast's actor owns its status and refuses what the status does not allow, and the page shows
that sentence. Reading is `broadcasts.LIST`'s permission.
"""

from __future__ import annotations

from urllib.parse import urlencode

from quart import Blueprint, redirect, request

from inbox_actors.broadcasts import views
from inbox_actors.paging.parameters import InvalidParameter
from inbox_actors.use_cases import broadcasts, team
from inbox_actors.use_cases.outcomes import Reason, Refused
from inbox_actors.use_cases.use_case import run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.page_guard import WebRefusal, signed_in
from inbox_http.web.pages import page, refused_page

blueprint = Blueprint("web_broadcasts", __name__, url_prefix="/app/broadcasts", template_folder="templates")

AWAITING = "pending_approval"
EVERY_STATUS = "all"
STATUS_NAMES = {"pending_approval": "Awaiting approval", "scheduled": "Scheduled", "sending": "Sending",
                "paused": "Paused", "completed": "Completed", "cancelled": "Cancelled", "rejected": "Rejected",
                EVERY_STATUS: "Every status"}
_DONE = {"approve": "Broadcast approved: it sends now, or at its scheduled time.",
         "reject": "Broadcast rejected: nothing is sent."}


def _may_decide() -> bool:
    return broadcasts.APPROVE.allows(current_caller())


def _require_reading() -> None:
    if not broadcasts.LIST.allows(current_caller()):
        raise WebRefusal(403, f"Broadcasts need the {broadcasts.LIST.needed()} permission.")


@blueprint.get("")
@signed_in
async def list_page():
    _require_reading()
    return await _list(_status(request.args.get("status")), request.args.get("cursor"),
                       notice=_DONE.get(request.args.get("done", "")))


@blueprint.get("/<int:broadcast_id>")
@signed_in
async def broadcast_page(broadcast_id: int):
    _require_reading()
    return await _one(broadcast_id, notice=_DONE.get(request.args.get("done", "")))


@blueprint.post("/<int:broadcast_id>/<any(approve, reject):decision>")
@signed_in
async def decide(broadcast_id: int, decision: str):
    _require_reading()
    form = await request.form
    use_case, arguments = broadcasts.APPROVE, {"broadcast_id": broadcast_id}
    if decision == "reject":
        use_case, reason = broadcasts.REJECT, form.get("reason", "").strip()
        arguments = {**arguments, **({"reason": reason} if reason else {})}
    outcome = await run(dependencies().use_case_deps, current_caller(), use_case, arguments)
    # Back where the decision was made: the list (with its filter) or the broadcast's page.
    from_list, status = form.get("from") == "list", _status(form.get("status"))
    if isinstance(outcome, Refused):
        return await (_list(status, None, outcome) if from_list else _one(broadcast_id, outcome))
    if from_list:
        return redirect(f"/app/broadcasts?{urlencode({'status': status, 'done': decision})}", 303)
    return redirect(f"/app/broadcasts/{broadcast_id}?done={decision}", 303)


def _status(raw: str | None) -> str:
    """The filter chosen; an unknown one is left for the list to refuse with its sentence."""
    return raw or AWAITING


async def _list(status: str, cursor: str | None, refused: Refused | None = None, notice: str | None = None):
    state, caller = dependencies(), current_caller()
    args = {**({"status": status} if status != EVERY_STATUS else {}), **({"cursor": cursor} if cursor else {})}
    try:
        listed = await views.list_broadcasts(state.db, caller.workspace_id, args)
    except InvalidParameter as err:
        return await refused_page(Refused(Reason.INVALID, err.message, 400))
    more_url = None
    if listed.next_cursor:
        more_url = "/app/broadcasts?" + urlencode({"status": status, "cursor": listed.next_cursor})
    return await page("broadcasts.html", refused.status if refused else 200, listed=listed.data, chosen=status,
                      statuses=STATUS_NAMES, names=await _member_names(), may_decide=_may_decide(),
                      more_url=more_url, notice=notice, refusal=refused.message if refused else None)


async def _one(broadcast_id: int, refused: Refused | None = None, notice: str | None = None):
    found = await broadcasts.view(dependencies().use_case_deps, current_caller(), broadcast_id)
    if isinstance(found, Refused):
        return await refused_page(refused or found)
    return await page("broadcasts_one.html", refused.status if refused else 200, broadcast=found,
                      statuses=STATUS_NAMES, names=await _member_names(), may_decide=_may_decide(),
                      notice=notice, refusal=refused.message if refused else None)


async def _member_names() -> dict[int, str]:
    """Members' names by id, for a member who may see who is on the team (`team.MEMBER_NAMES`); the broadcast
    reads themselves name members by id only, so anyone else sees the numbers."""
    if not team.MEMBER_NAMES.allows(current_caller()):
        return {}
    named = await run(dependencies().use_case_deps, current_caller(), team.MEMBER_NAMES, {})
    return {} if isinstance(named, Refused) else {member.user_id: member.name for member in named.data}