"""`POST /api/send-message`: one message to one contact, exactly as the spec has it.

Scope whatsapp_api. The send is the chats use case `send_message` (`use_cases/chats.py`: the cloud API switched on, a
key limited to assigned chats sending only to chats assigned to its creator) and the conversation actor's (consent,
channel, the 24-hour window, the pending message, the platform, the outcome); this route reads the body, keeps the
`Idempotency-Key` promise (`inbox_http/idempotency.py`: the first answer replayed, 409 while another request holds
the key or while the key's message has an outcome not known yet) and answers in the spec's convention.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.conversations.send_answers import SendSuccess
from inbox_actors.domain.auth_ladder import ErrorStyle
from inbox_actors.domain.plans import ApiTier
from inbox_actors.use_cases import chats
from inbox_actors.use_cases.use_case import run
from inbox_http import idempotency
from inbox_http.contract import answers, takes
from inbox_http.dependencies import dependencies
from inbox_http.errors import ApiError
from inbox_http.guard import current_caller, guarded, responds
from inbox_http.send_body import read_send_body, send_body_schema

blueprint = Blueprint("send_message", __name__)


@blueprint.post("/api/send-message")
@responds(SendSuccess)
@guarded(tier=ApiTier.CORE, use_case=chats.SEND_MESSAGE, errors=ErrorStyle.SENTENCE, sending=True)
@takes(send_body_schema())
@answers(402, 404, 409)
async def send_message():
    """Send one message (text, media or template) to one contact; success carries messageId."""
    caller = current_caller()
    # Before the body is read and the key reserved: a workspace that may not send is told so whatever it sent.
    if (refused := chats.sending_refusal(caller)) is not None:
        raise ApiError(refused.status, refused.code, refused.message)
    key = idempotency.current_key()
    raw = await request.get_data()
    phone, send_request = read_send_body(raw)
    outcome = await run(dependencies().use_case_deps, caller, chats.SEND_MESSAGE, {
        "to": phone or "", "message": send_request, "idempotency_key": key,
        "request_hash": None if key is None else idempotency.request_hash(request.method, request.path, raw)})
    return idempotency.keyed_answer(outcome)
