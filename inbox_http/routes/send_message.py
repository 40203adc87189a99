"""`POST /api/send-message`: one message to one contact, exactly as the spec has it.

Scope whatsapp_api; 403 feature_disabled_for_org when the workspace's cloud API is off; a key limited to
assigned chats (scope inbox_assigned_only, or a creator who sees only assigned chats) may send only to chats
assigned to its creator (others: 404 Contact not found). The send itself is the conversation actor's
(consent, channel, the 24-hour window, the platform, the record). `Idempotency-Key` replays the first answer.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.conversations import conversation
from inbox_actors.conversations.send_answers import SendRefusal, SendSuccess, send_answer
from inbox_actors.domain.access import ErrorStyle, assigned_only_member
from inbox_actors.domain.plans import ApiTier
from inbox_http import idempotency
from inbox_http.errors import ApiError, SentenceError
from inbox_http.guard import current_credential, guarded, responds
from inbox_http.send_body import read_send_body
from inbox_http.services import services

blueprint = Blueprint("send_message", __name__)


@blueprint.post("/api/send-message")
@responds(SendSuccess)
@guarded(tier=ApiTier.CORE, scopes=("whatsapp_api",), errors=ErrorStyle.SENTENCE, sending=True)
async def send_message():
    """Send one message (text, media or template) to one contact; success carries messageId."""
    credential = current_credential()
    if not credential.cloud_api_enabled:
        raise ApiError(403, "feature_disabled_for_org", "The messaging cloud API is switched off for this workspace.")
    key = idempotency.current_key()
    raw = await request.get_data()
    phone, send_request = read_send_body(raw)
    state = services()

    async def send() -> tuple[int, object]:
        """(status, body) to remember for a send that reached a verdict; raises for refusals that sent nothing."""
        order = conversation.Send(
            request=send_request, sender_type="system", author=f"api_key:{credential.key_id}",
            sender_label=credential.key_name, only_assigned_to=assigned_only_member(credential))
        answer = send_answer(await conversation.ask_conversation(state.actors, credential.workspace_id, phone, order))
        if isinstance(answer, SendRefusal):
            raise SentenceError(answer.status, answer.sentence)
        return answer.status, answer.body

    return await idempotency.answer_once(state.db, credential.workspace_id, key,
                                         idempotency.request_hash(request.method, request.path, raw), send,
                                         now=state.clock.now())
