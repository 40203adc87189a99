"""The agent inbox's list over the API, beside one chat's actions (`inbox.py`, whose blueprint this nests in, under
`/api/inbox/conversations`; full API, ours, beside the specification's calls):

- a member's saved views, `GET`/`POST /saved-views`, `PATCH`/`DELETE /saved-views/{id}`: each a name and the view and
  filters it opens in the inbox (`use_cases/saved_views.py`); a key's are its creator's, a dashboard session's its
  member's;
- bulk actions, `POST /bulk/{resolve,assign,label,snooze}`: one action on up to 100 chats by phone, each chat's
  own use case run as the acting member (the permissions and rules of one chat), answered with a report per chat
  (`use_cases/bulk_actions.py`); an `idempotency_key` in the body makes a retry answer the first report.

Stable-code errors; the rules and their codes are the use cases'.
"""

from __future__ import annotations

from quart import Blueprint

from inbox_actors.domain.plans import ApiTier
from inbox_actors.use_cases import bulk_actions, saved_views
from inbox_actors.use_cases.bulk_actions import BulkReport
from inbox_actors.use_cases.saved_views import SavedView, SavedViewList
from inbox_http.contract import answers, body_of, takes
from inbox_http.guard import guarded, responds
from inbox_http.outcome_answers import run_route

blueprint = Blueprint("inbox_lists", __name__)


@blueprint.get("/saved-views")
@responds(SavedViewList)
@guarded(tier=ApiTier.FULL, use_case=saved_views.LIST, dashboard=True)
async def list_saved_views():
    """The acting member's saved views by name: id, name, filters (view, label, assignee, state, waiting,
    unread), created_at, updated_at."""
    return await run_route(saved_views.LIST)


@blueprint.post("/saved-views")
@responds(SavedView, 201)
@guarded(tier=ApiTier.FULL, use_case=saved_views.SAVE, dashboard=True)
@takes(body_of(saved_views.SAVE, path=()))
@answers(409)
async def save_view():
    """Save a view for the acting member: {name, filters?}; a name is unique among the member's whatever its case,
    and a member keeps at most 50."""
    return await run_route(saved_views.SAVE, 201, body=True)


@blueprint.patch("/saved-views/<id:view_id>")
@responds(SavedView)
@guarded(tier=ApiTier.FULL, use_case=saved_views.CHANGE, dashboard=True)
@takes(body_of(saved_views.CHANGE, path=("view_id",)))
@answers(404, 409)
async def change_saved_view(view_id: int):
    """Rename a saved view or replace its filters: {name?, filters?}; a field left out keeps its value."""
    return await run_route(saved_views.CHANGE, body=True, view_id=view_id)


@blueprint.delete("/saved-views/<id:view_id>")
@responds(SavedView)
@guarded(tier=ApiTier.FULL, use_case=saved_views.DELETE, dashboard=True)
@answers(404)
async def delete_saved_view(view_id: int):
    """Delete a saved view; the answer is the view as it was."""
    return await run_route(saved_views.DELETE, view_id=view_id)


@blueprint.post("/bulk/resolve")
@responds(BulkReport)
@guarded(tier=ApiTier.FULL, use_case=bulk_actions.RESOLVE)
@takes(body_of(bulk_actions.RESOLVE, path=()))
@answers(409, 422)
async def bulk_resolve():
    """Resolve each chat: {phones, reason?, idempotency_key?}. The report says, per chat, resolved or why not (a
    chat with the bot: invalid_transition, as for one chat)."""
    return await run_route(bulk_actions.RESOLVE, body=True)


@blueprint.post("/bulk/assign")
@responds(BulkReport)
@guarded(tier=ApiTier.FULL, use_case=bulk_actions.ASSIGN)
@takes(body_of(bulk_actions.ASSIGN, path=()))
@answers(409, 422)
async def bulk_assign():
    """Assign each chat to an active member: {phones, to_user_id, reason?, idempotency_key?}. A chat someone holds
    is transferred; any other is claimed by the acting member, then transferred."""
    return await run_route(bulk_actions.ASSIGN, body=True)


@blueprint.post("/bulk/label")
@responds(BulkReport)
@guarded(tier=ApiTier.FULL, use_case=bulk_actions.LABEL)
@takes(body_of(bulk_actions.LABEL, path=()))
@answers(409, 422)
async def bulk_label():
    """Put a label of the workspace's set on each chat: {phones, label, idempotency_key?}."""
    return await run_route(bulk_actions.LABEL, body=True)


@blueprint.post("/bulk/snooze")
@responds(BulkReport)
@guarded(tier=ApiTier.FULL, use_case=bulk_actions.SNOOZE)
@takes(body_of(bulk_actions.SNOOZE, path=()))
@answers(409, 422)
async def bulk_snooze():
    """Snooze each chat: {phones, for_hours?, idempotency_key?}; for_hours left out: until each customer writes."""
    return await run_route(bulk_actions.SNOOZE, body=True)
