"""The Reporting API's reads about one chat, `/api/reporting/v1/conversations/{phone}/...`.

A chat that does not exist in the workspace, or is not assigned to a member limited to assigned chats, is
404 not_found (`ChatNotFound`, answered in `inbox_http.errors`). None of these reads is a view: only a member
opening the chat in the inbox records one.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging import parameter_catalog as catalog
from inbox_actors.reporting import assignment_history, attention, conversation_detail, replies, thread
from inbox_actors.use_cases import reports
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import run
from inbox_http.contract import answers
from inbox_http.dependencies import dependencies
from inbox_http.guard import accepts, current_caller, guarded, responds
from inbox_http.media_answer import media_response
from inbox_http.outcome_answers import answer, run_route

blueprint = Blueprint("reporting_chat", __name__, url_prefix="/api/reporting/v1/conversations")


@blueprint.get("/<phone>")
@responds(conversation_detail.ConversationDetail)
@guarded(tier=ApiTier.FULL, use_case=reports.CHAT)
@answers(404)
async def detail(phone: str):
    """One chat over its whole life, with its contact."""
    return await run_route(reports.CHAT, phone=phone)


@blueprint.get("/<phone>/messages")
@responds(thread.MessagePage)
@guarded(tier=ApiTier.FULL, use_case=reports.THREAD)
@accepts(catalog.THREAD)
@answers(404)
async def messages(phone: str):
    """The chat's messages: since, to, order (asc | desc), expand=receipts, limit (default 100), cursor."""
    return await run_route(reports.THREAD, phone=phone, query=request.args.to_dict())


@blueprint.get("/<phone>/messages/<id:message_id>/media")
@responds(bytes, media=("application/octet-stream",))
@guarded(tier=ApiTier.FULL, use_case=reports.MEDIA)
@answers(404, 502)
async def message_media(phone: str, message_id: int):
    """A customer's image, video, audio or document (a message's `media_url`), fetched from the platform and
    streamed; small files are kept in memory a while."""
    outcome = await run(dependencies().use_case_deps, current_caller(), reports.MEDIA,
                        {"phone": phone, "message_id": message_id})
    if isinstance(outcome, Refused):
        return answer(outcome)
    return media_response(outcome.data)


@blueprint.get("/<phone>/receipts")
@responds(thread.ReceiptList)
@guarded(tier=ApiTier.FULL, use_case=reports.RECEIPTS)
@accepts(catalog.RECEIPTS)
@answers(404)
async def receipts(phone: str):
    """Outbound messages with their delivery receipts, most recent first: since, to, limit (default 100)."""
    return await run_route(reports.RECEIPTS, phone=phone, query=request.args.to_dict())


@blueprint.get("/<phone>/seen-by")
@responds(attention.SeenBy)
@guarded(tier=ApiTier.FULL, use_case=reports.SEEN_BY)
@answers(404)
async def seen_by(phone: str):
    """Which members opened the chat, when, and what they have not seen since."""
    return await run_route(reports.SEEN_BY, phone=phone)


@blueprint.get("/<phone>/views")
@responds(attention.ViewPage)
@guarded(tier=ApiTier.FULL, use_case=reports.VIEWS)
@accepts(catalog.VIEWS)
@answers(404)
async def views(phone: str):
    """Each time a member opened the chat, newest first (repeated opens within a minute count once)."""
    return await run_route(reports.VIEWS, phone=phone, query=request.args.to_dict())


@blueprint.get("/<phone>/replies")
@responds(replies.ChatReplies)
@guarded(tier=ApiTier.FULL, use_case=reports.CHAT_REPLIES)
@accepts(catalog.WINDOW_ONLY)
@answers(404)
async def chat_replies(phone: str):
    """The chat's replies with response times on two clocks, and its first (human) response."""
    return await run_route(reports.CHAT_REPLIES, phone=phone, query=request.args.to_dict())


@blueprint.get("/<phone>/assignment-history")
@responds(assignment_history.AssignmentHistory)
@guarded(tier=ApiTier.FULL, use_case=reports.ASSIGNMENT_HISTORY)
@answers(404)
async def history(phone: str):
    """Claims, releases, transfers and resolutions, newest first."""
    return await run_route(reports.ASSIGNMENT_HISTORY, phone=phone)
