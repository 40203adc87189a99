"""`POST /api/send-message`: one message to one contact, exactly as the spec has it.

Scope whatsapp_api; 403 feature_disabled_for_org when the workspace's cloud API is off; a key limited to
assigned chats (scope inbox_assigned_only, or a creator who sees only assigned chats) may send only to chats
assigned to its creator (others: 404 Contact not found). The send itself is the conversation actor's
(consent, channel, the 24-hour window, the pending message, the platform, the outcome). `Idempotency-Key`
replays the first answer and never lets a message go out twice (inbox_http/idempotency.py: 409 while another
request holds the key, or while the key's message has an outcome not known yet).
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.conversations import conversation
from inbox_actors.conversations.messages import KeyReservation
from inbox_actors.conversations.send_answers import SendRefusal, SendSuccess, send_answer
from inbox_actors.domain.access import ErrorStyle, assigned_only_member
from inbox_actors.domain.plans import ApiTier
from inbox_http import idempotency
from inbox_http.contract import answers, takes
from inbox_http.errors import ApiError, SentenceError
from inbox_http.guard import current_credential, guarded, responds
from inbox_http.send_body import read_send_body, send_body_schema
from inbox_http.services import services

blueprint = Blueprint("send_message", __name__)


@blueprint.post("/api/send-message")
@responds(SendSuccess)
@guarded(tier=ApiTier.CORE, scopes=("whatsapp_api",), errors=ErrorStyle.SENTENCE, sending=True)
@takes(send_body_schema())
@answers(402, 404, 409)
async def send_message():
    """Send one message (text, media or template) to one contact; success carries messageId."""
    credential = current_credential()
    if not credential.cloud_api_enabled:
        raise ApiError(403, "feature_disabled_for_org", "The messaging cloud API is switched off for this workspace.")
    key = idempotency.current_key()
    raw = await request.get_data()
    phone, send_request = read_send_body(raw)
    state = services()

    async def send(reservation: KeyReservation | None) -> tuple[int, object]:
        """(status, body) of a send that reached a verdict (stored on the reservation by the conversation, with
        the outcome); raises for refusals that sent nothing."""
        order = conversation.Send(
            request=send_request, sender_type="system", author=f"api_key:{credential.key_id}",
            sender_label=credential.key_name, only_assigned_to=assigned_only_member(credential),
            reservation=reservation)
        answer = send_answer(await conversation.ask_conversation(state.actors, credential.workspace_id, phone, order))
        if isinstance(answer, SendRefusal):
            raise SentenceError(answer.status, answer.sentence)
        return answer.status, answer.body

    return await idempotency.answer_once(state.db, credential.workspace_id, key,
                                         idempotency.request_hash(request.method, request.path, raw), send,
                                         now=state.clock.now())
