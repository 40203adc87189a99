"""What an API send answers, decided once for every front that sends as the API does (`POST /api/send-message`
today, MCP's send tool later); each front only translates the answer into its own protocol.

A send the conversation actor took to a verdict answers the spec's body: 200 `{success, messageId, channel}`,
or 500 with the platform's reason (`SendVerdict`, which an `Idempotency-Key` replays: the actor stores it on the
key in the transaction that records the outcome). A send refused before anything went out (chat not visible to
the key, consent, channel, a refused request, a key no longer the request's) is a `SendRefusal`: a status and
the sentence, never remembered. A send committed as pending whose outcome is not known (the node lost the
workspace mid-send: `SendOutcome.in_doubt`) is `SendInDoubt`: it may have gone out, so its answer must never invite
a blind retry (409 with IN_DOUBT_SENTENCE without a key; a keyed one answers as a retry of its key would, the key's
409 in doubt). `message_verdict` answers from a message row, for a key whose answer was not stored (a send settled
after a crash).
"""

from __future__ import annotations

import msgspec

from inbox_actors.conversations.conversation_protocol import NotVisible, Refused, SendOutcome
from inbox_actors.domain import delivery_status

CONTACT_NOT_FOUND = "Contact not found"
NOT_SENT = "The message was not sent"
KEY_IN_PROGRESS = "A request with this Idempotency-Key is still in progress."
IN_DOUBT_SENTENCE = ("This message may have been sent: the service lost this workspace in the middle of the send, and "
                     "its outcome is not known yet. Do not send it again blindly: GET /api/reporting/v1/messages?"
                     "status=pending lists it until its delivery status settles it. Send with an Idempotency-Key to "
                     "be able to retry safely.")
# Meta's generic "Something went wrong", for a failure recorded without the platform's own code.
UNKNOWN_FAILURE_CODE = 131000


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


class SendInDoubt(msgspec.Struct, frozen=True):
    """A send committed as pending whose outcome is not known: it may have gone out. Never remembered."""


def send_answer(reply: object) -> SendVerdict | SendRefusal | SendInDoubt:
    """The answer to the conversation actor's reply to a `Send` (NotVisible, Refused or a SendOutcome)."""
    if isinstance(reply, NotVisible):
        return SendRefusal(404, CONTACT_NOT_FOUND)
    if isinstance(reply, Refused):
        return SendRefusal(reply.status, reply.message)
    if not isinstance(reply, SendOutcome):
        raise TypeError(f"a send cannot be answered from {type(reply).__name__}")
    if reply.in_doubt:
        return SendInDoubt()
    if reply.refused_status is not None:
        return SendRefusal(reply.refused_status, reply.refused_sentence or NOT_SENT)
    if reply.failure is not None:
        failure = reply.failure
        return SendVerdict(500, SendFailure(error=failure.message, errorCode=failure.code, errorTitle=failure.title,
                                            errorSubcode=failure.subcode, errorDetails=failure.details))
    return SendVerdict(200, SendSuccess(success=True, messageId=reply.platform_message_id or "",
                                        channel=reply.channel))


def message_verdict(status: str, platform_message_id: str | None, channel: str, error_code: int | None,
                    error_text: str | None) -> SendVerdict | None:
    """The answer a send's message row gives: 200 once it is known sent, 500 once failed; None while pending."""
    if status == delivery_status.PENDING:
        return None
    if status == delivery_status.FAILED or not platform_message_id:
        reason = error_text or NOT_SENT
        return SendVerdict(500, SendFailure(error=reason, errorCode=error_code or UNKNOWN_FAILURE_CODE,
                                            errorTitle=reason, errorSubcode=None, errorDetails=error_text))
    return SendVerdict(200, SendSuccess(success=True, messageId=platform_message_id, channel=channel))
