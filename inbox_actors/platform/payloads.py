"""What crosses the platform boundary, in the service's own terms (the Meta JSON shapes stay in client.py,
envelope.py and the simulator).

Outbound: a `SendRequest` becomes `POST {WHATSAPP_API_URL}/{phone_number_id}/messages`; the answer is a
`SendAccepted` (the platform's message id) or a `SendRefused` (Meta's error body, mapped to the spec's
errorCode/errorTitle/errorSubcode/errorDetails). Refusals are values, not exceptions: the caller records a
failed message and answers the spec's 500 body.

Inbound: one signed webhook POST carries `InboundBatch`es, one per `entry[].changes[].value`, each naming the
business number (`phone_number_id`) it belongs to.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

# Media kinds the send call accepts besides text and template.
MEDIA_TYPES = ("image", "video", "audio", "document")
MESSAGE_TYPES = ("text", "template", *MEDIA_TYPES)
# What the platform takes in one send: a text body, a media caption, a template's body parameters. Every front
# door's schema and body reader, and every broadcast, holds a send to these.
MAX_TEXT = 4096
MAX_CAPTION = 1024
MAX_PARAMETERS = 50
# The service's own interactive message (the satisfaction survey, team/csat.py): a WhatsApp list message. Not a type
# a client sends (MESSAGE_TYPES); the wire takes it besides them (PLATFORM_TYPES).
INTERACTIVE = "interactive"
PLATFORM_TYPES = (*MESSAGE_TYPES, INTERACTIVE)
# Meta's limits on a list message.
MAX_LIST_ROWS = 10
MAX_LIST_BODY = 1024
MAX_LIST_BUTTON = 20
MAX_ROW_ID = 200
MAX_ROW_TITLE = 24
MAX_ROW_DESCRIPTION = 72


class ListRow(msgspec.Struct, frozen=True):
    """One choice of a list message; the customer's choice comes back as its `id` (InboundMessage.reply_id)."""

    id: str
    title: str
    description: str | None = None


class InteractiveList(msgspec.Struct, frozen=True):
    """A list message: a body, the button that opens the list, and one section of rows."""

    body: str
    button: str
    rows: tuple[ListRow, ...]
    section_title: str | None = None


class SendRequest(msgspec.Struct, frozen=True):
    to: str                                  # normalised phone, digits with country code
    type: str = "text"                       # one of MESSAGE_TYPES
    text: str | None = None                  # text body, or the caption of media
    media_url: str | None = None             # image, video, audio, document: sent by link
    filename: str | None = None              # document (kept on our record of any media sent)
    template_name: str | None = None
    template_language: str | None = None
    template_parameters: tuple[str, ...] = ()
    # Meta's biz_opaque_callback_data: echoed on the message's status webhooks (the send's row id, so a status
    # can settle a send whose answer was lost).
    callback_data: str | None = None
    # Media uploaded to the platform first (its media endpoint's id), sent by id instead of a link; its type is
    # ours to keep (Meta's send does not carry it).
    media_id: str | None = None
    mime_type: str | None = None
    # type "interactive" only (the service's own; never a client's send).
    interactive: InteractiveList | None = None


class SendAccepted(msgspec.Struct, frozen=True):
    message_id: str                          # the platform's id ("wamid....")


class SendRefused(msgspec.Struct, frozen=True):
    """Meta's `{"error": {...}}`; `message` is the reason the spec's 500 carries in `error`."""

    message: str
    code: int                                # errorCode, e.g. 131047
    title: str                               # errorTitle
    subcode: int | None = None               # errorSubcode
    details: str | None = None               # errorDetails (Meta's error_data.details)
    http_status: int = 400                   # what the platform answered (0: it could not be reached)


class InboundMessage(msgspec.Struct, frozen=True):
    """A customer's message (`value.messages[]`, with its sender's profile name from `value.contacts[]`)."""

    message_id: str                          # platform id, the de-duplication key
    from_phone: str                          # digits with country code
    at: datetime                             # the platform's timestamp (UTC)
    type: str                                # text, image, ... (anything Meta sends)
    text: str | None = None                  # text body or media caption
    media_id: str | None = None              # the platform's id of an image, video, audio, document or sticker
    mime_type: str | None = None             # of the media, as the platform gave it
    filename: str | None = None              # of a document
    profile_name: str | None = None
    # An interactive reply's id (the list row or reply button chosen), or a quick-reply button's payload.
    reply_id: str | None = None
    # The platform id of the business's message the customer replied to (Meta's `context.id`), when they did.
    context_id: str | None = None


class StatusUpdate(msgspec.Struct, frozen=True):
    """A delivery status of an outbound message (`value.statuses[]`)."""

    message_id: str                          # platform id of our outbound message
    recipient_phone: str
    status: str                              # sent, delivered, read, failed
    at: datetime
    error_code: int | None = None            # for failed
    error_title: str | None = None
    callback_data: str | None = None         # the send's biz_opaque_callback_data, echoed by the platform


class InboundBatch(msgspec.Struct, frozen=True):
    phone_number_id: str                     # the business number: which workspace this belongs to
    messages: tuple[InboundMessage, ...] = ()
    statuses: tuple[StatusUpdate, ...] = ()
