"""What an API send answers, decided once for every front that sends as the API does (`POST /api/send-message`
today, MCP's send tool later); each front only translates the answer into its own protocol.

A send the conversation actor took to a verdict answers the spec's body: 200 `{success, messageId, channel}`,
or 500 with the platform's reason (`SendVerdict`, which an `Idempotency-Key` replays). A send refused before
anything went out (chat not visible to the key, consent, channel, a refused request) is a `SendRefusal`: a
status and the sentence, never remembered.
"""

from __future__ import annotations

import msgspec

from inbox_actors.conversations.messages import NotVisible, Refused, SendOutcome

CONTACT_NOT_FOUND = "Contact not found"
NOT_SENT = "The message was not sent"


# The spec's bodies (their names are the published contract's schema names, so they carry no docstring).
class SendSuccess(msgspec.Struct, frozen=True):
    success: bool
    messageId: str
    channel: str


class SendFailure(msgspec.Struct, frozen=True):
    error: str
    errorCode: int
    errorTitle: str
    errorSubcode: int | None
    errorDetails: str | None


class SendVerdict(msgspec.Struct, frozen=True):
    """A send that reached a verdict: accepted (200) or failed at the platform or the window (500)."""

    status: int
    body: SendSuccess | SendFailure


class SendRefusal(msgspec.Struct, frozen=True):
    """A send refused before anything went out: answered `status` with `sentence`, and not remembered."""

    status: int
    sentence: str


def send_answer(reply: object) -> SendVerdict | SendRefusal:
    """The answer to the conversation actor's reply to a `Send` (NotVisible, Refused or a SendOutcome)."""
    if isinstance(reply, NotVisible):
        return SendRefusal(404, CONTACT_NOT_FOUND)
    if isinstance(reply, Refused):
        return SendRefusal(reply.status, reply.message)
    if not isinstance(reply, SendOutcome):
        raise TypeError(f"a send cannot be answered from {type(reply).__name__}")
    if reply.refused_status is not None:
        return SendRefusal(reply.refused_status, reply.refused_sentence or NOT_SENT)
    if reply.failure is not None:
        failure = reply.failure
        return SendVerdict(500, SendFailure(error=failure.message, errorCode=failure.code, errorTitle=failure.title,
                                            errorSubcode=failure.subcode, errorDetails=failure.details))
    return SendVerdict(200, SendSuccess(success=True, messageId=reply.platform_message_id or "",
                                        channel=reply.channel))
