"""`POST /api/send-message`: one message to one contact, exactly as the spec has it.

Scope whatsapp_api. The send is the chats use case `send_message` (`actions/chats.py`: the cloud API switched on,
a key limited to assigned chats sending only to chats assigned to its creator) and the conversation actor's (consent, channel,
the 24-hour window, the pending message, the platform, the outcome); this route reads the body, keeps the
`Idempotency-Key` promise (`inbox_http/idempotency.py`: the first answer replayed, 409 while another request holds
the key or while the key's message has an outcome not known yet) and answers in the spec's convention.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.actions import chats
from inbox_actors.actions.outcomes import Refused
from inbox_actors.actions.use_case import run
from inbox_actors.conversations.conversation_protocol import KeyReservation
from inbox_actors.conversations.send_answers import SendSuccess
from inbox_actors.domain.auth_ladder import ErrorStyle
from inbox_actors.domain.plans import ApiTier
from inbox_http import idempotency
from inbox_http.contract import answers, takes
from inbox_http.errors import ApiError, SentenceError
from inbox_http.guard import current_caller, guarded, responds
from inbox_http.send_body import read_send_body, send_body_schema
from inbox_http.services import services

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
    state = services()

    async def send(reservation: KeyReservation | None) -> tuple[int, object]:
        """(status, body) of a send that reached a verdict (stored on the reservation by the conversation, with
        the outcome); raises for refusals that sent nothing."""
        outcome = await run(state.action_deps, caller, chats.SEND_MESSAGE,
                            {"to": phone or "", "message": send_request, "reservation": reservation})
        if isinstance(outcome, Refused):
            if outcome.code == "not_sent":
                raise SentenceError(outcome.status, outcome.message)
            raise ApiError(outcome.status, outcome.code, outcome.message)
        return outcome.data.status, outcome.data.body

    return await idempotency.answer_once(state.db, caller.workspace_id, key,
                                         idempotency.request_hash(request.method, request.path, raw), send,
                                         now=state.clock.now())
