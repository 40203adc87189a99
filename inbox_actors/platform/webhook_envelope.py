"""The inbound webhook: Meta's signature and envelope, as pure functions.

Meta signs the raw body with the app secret (`X-Hub-Signature-256: sha256=<hex HMAC-SHA256>`), and the body
is an envelope of entries of changes; each `messages` change's `value` carries one business number's customer
messages and delivery statuses. `parse_envelope` turns it into `InboundBatch`es and `build_envelope` is its
inverse (the simulator and tests write envelopes with it). Fields Meta adds, and changes other than
`messages` (account updates, template reviews), are ignored; what the service cannot use is refused with
`InvalidEnvelope`.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from datetime import datetime, timezone

import msgspec

from inbox_actors.platform.payloads import InboundBatch, InboundMessage, StatusUpdate

SIGNATURE_HEADER = "X-Hub-Signature-256"
SIGNATURE_PREFIX = "sha256="
ENVELOPE_OBJECT = "whatsapp_business_account"
MESSAGES_FIELD = "messages"
# Kinds whose body is a media object (`{"id", "caption", "mime_type", ...}`) under the kind's own name.
MEDIA_KINDS = ("image", "video", "audio", "document", "sticker")


class InvalidEnvelope(ValueError):
    """The webhook body is not a WhatsApp Business Account envelope the service can read."""


# -- the signature ------------------------------------------------------------------------------------------

def sign(app_secret: str, raw_body: bytes) -> str:
    """The `X-Hub-Signature-256` value for `raw_body`."""
    digest = hmac.new(app_secret.encode(), raw_body, hashlib.sha256).hexdigest()
    return SIGNATURE_PREFIX + digest


def verify_signature(app_secret: str, raw_body: bytes, header: str | None) -> bool:
    """Whether `header` is the signature of exactly these bytes (compared in constant time)."""
    if not header or not header.startswith(SIGNATURE_PREFIX):
        return False
    return hmac.compare_digest(sign(app_secret, raw_body).encode(), header.strip().lower().encode())


# -- the wire shapes ----------------------------------------------------------------------------------------

class _Profile(msgspec.Struct, frozen=True, omit_defaults=True):
    name: str | None = None


class _Contact(msgspec.Struct, frozen=True, omit_defaults=True):
    wa_id: str
    profile: _Profile | None = None


class _Text(msgspec.Struct, frozen=True):
    body: str


class _Media(msgspec.Struct, frozen=True, omit_defaults=True):
    id: str | None = None
    caption: str | None = None
    mime_type: str | None = None
    filename: str | None = None


class _Button(msgspec.Struct, frozen=True, omit_defaults=True):
    text: str | None = None
    payload: str | None = None


class _Reply(msgspec.Struct, frozen=True, omit_defaults=True):
    id: str | None = None
    title: str | None = None


class _Interactive(msgspec.Struct, frozen=True, omit_defaults=True):
    type: str | None = None
    button_reply: _Reply | None = None
    list_reply: _Reply | None = None


class _Context(msgspec.Struct, frozen=True, omit_defaults=True):
    """What a message replies to: `id` is the business's message (a forwarded message has a context without one)."""

    from_: str | None = msgspec.field(default=None, name="from")
    id: str | None = None


class _Message(msgspec.Struct, frozen=True, omit_defaults=True):
    from_: str = msgspec.field(name="from")
    id: str
    timestamp: str | int
    type: str
    context: _Context | None = None
    text: _Text | None = None
    image: _Media | None = None
    video: _Media | None = None
    audio: _Media | None = None
    document: _Media | None = None
    sticker: _Media | None = None
    button: _Button | None = None
    interactive: _Interactive | None = None


class _StatusError(msgspec.Struct, frozen=True, omit_defaults=True):
    code: int
    title: str | None = None
    message: str | None = None


class _Status(msgspec.Struct, frozen=True, omit_defaults=True):
    id: str
    status: str
    timestamp: str | int
    recipient_id: str
    errors: tuple[_StatusError, ...] = ()
    biz_opaque_callback_data: str | None = None  # what the send carried, echoed


class _Metadata(msgspec.Struct, frozen=True):
    phone_number_id: str
    display_phone_number: str = ""


class _Value(msgspec.Struct, frozen=True, omit_defaults=True):
    metadata: _Metadata
    messaging_product: str | None = None     # always "whatsapp"; written by build_envelope, not checked
    contacts: tuple[_Contact, ...] = ()
    messages: tuple[_Message, ...] = ()
    statuses: tuple[_Status, ...] = ()


class _Change(msgspec.Struct, frozen=True):
    field: str
    # Decoded only for `messages` changes: other fields have values of other shapes.
    value: msgspec.Raw = msgspec.Raw(b"null")


class _Entry(msgspec.Struct, frozen=True):
    id: str = ""
    changes: tuple[_Change, ...] = ()


class _Envelope(msgspec.Struct, frozen=True):
    object: str
    entry: tuple[_Entry, ...] = ()


# -- reading ------------------------------------------------------------------------------------------------

def parse_envelope(raw_body: bytes) -> list[InboundBatch]:
    """One `InboundBatch` per `messages` change, in envelope order. Raises InvalidEnvelope."""
    try:
        envelope = msgspec.json.decode(raw_body, type=_Envelope)
    except msgspec.DecodeError as err:
        raise InvalidEnvelope(f"not a webhook envelope: {err}") from None
    if envelope.object != ENVELOPE_OBJECT:
        raise InvalidEnvelope(f"object is {envelope.object!r}, not {ENVELOPE_OBJECT!r}")
    batches = []
    for entry in envelope.entry:
        for change in entry.changes:
            if change.field != MESSAGES_FIELD:
                continue
            try:
                value = msgspec.json.decode(change.value, type=_Value)
            except msgspec.DecodeError as err:
                raise InvalidEnvelope(f"messages change: {err}") from None
            batches.append(_batch(value))
    return batches


def _batch(value: _Value) -> InboundBatch:
    names = {contact.wa_id: contact.profile.name for contact in value.contacts if contact.profile}
    messages = tuple(_inbound_message(message, names) for message in value.messages)
    statuses = tuple(_status_update(status) for status in value.statuses)
    return InboundBatch(phone_number_id=value.metadata.phone_number_id, messages=messages, statuses=statuses)


def _inbound_message(message: _Message, names: dict[str, str | None]) -> InboundMessage:
    if not message.id or not message.from_:
        raise InvalidEnvelope("a message has an empty id or sender")
    text, media = _content(message)
    return InboundMessage(message_id=message.id, from_phone=message.from_, at=_time(message.timestamp),
                          type=message.type, text=text, media_id=media.id, mime_type=media.mime_type,
                          filename=media.filename, profile_name=names.get(message.from_),
                          reply_id=_reply_id(message), context_id=message.context.id if message.context else None)


_NO_MEDIA = _Media()


def _content(message: _Message) -> tuple[str | None, _Media]:
    """(text or caption, media) of a message; kinds the inbox does not read (location, reaction...) give
    neither."""
    if message.type == "text":
        return (message.text.body if message.text else None), _NO_MEDIA
    if message.type in MEDIA_KINDS:
        media: _Media | None = getattr(message, message.type)
        return (media.caption, media) if media else (None, _NO_MEDIA)
    if message.type == "button" and message.button:
        return message.button.text, _NO_MEDIA
    if message.type == "interactive" and message.interactive:
        reply = message.interactive.button_reply or message.interactive.list_reply
        return (reply.title if reply else None), _NO_MEDIA
    return None, _NO_MEDIA


def _reply_id(message: _Message) -> str | None:
    """The id of the list row or reply button chosen, or a quick-reply button's payload."""
    if message.type == "button" and message.button:
        return message.button.payload
    if message.type == "interactive" and message.interactive:
        reply = message.interactive.button_reply or message.interactive.list_reply
        return reply.id if reply else None
    return None


def _status_update(status: _Status) -> StatusUpdate:
    error = status.errors[0] if status.errors else None
    return StatusUpdate(message_id=status.id, recipient_phone=status.recipient_id, status=status.status,
                        at=_time(status.timestamp), error_code=error.code if error else None,
                        error_title=(error.title or error.message) if error else None,
                        callback_data=status.biz_opaque_callback_data)


def _time(timestamp: str | int) -> datetime:
    """Meta's timestamps are unix seconds, as a string."""
    try:
        return datetime.fromtimestamp(int(timestamp), timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise InvalidEnvelope(f"bad timestamp {timestamp!r}") from None


# -- writing ------------------------------------------------------------------------------------------------

def build_envelope(
    phone_number_id: str, display_phone_number: str, *, messages: Sequence[InboundMessage] = (),
    statuses: Sequence[StatusUpdate] = (), business_account_id: str = "0",
) -> bytes:
    """The envelope Meta would post for these messages and statuses of one business number."""
    contacts: dict[str, _Contact] = {}
    for message in messages:
        if message.from_phone not in contacts:
            contacts[message.from_phone] = _Contact(wa_id=message.from_phone,
                                                    profile=_Profile(name=message.profile_name))
    value = _Value(
        messaging_product="whatsapp",
        metadata=_Metadata(phone_number_id=phone_number_id, display_phone_number=display_phone_number),
        contacts=tuple(contacts.values()),
        messages=tuple(_wire_message(message, display_phone_number) for message in messages),
        statuses=tuple(_wire_status(status) for status in statuses),
    )
    change = _Change(field=MESSAGES_FIELD, value=msgspec.Raw(msgspec.json.encode(value)))
    envelope = _Envelope(object=ENVELOPE_OBJECT, entry=(_Entry(id=business_account_id, changes=(change,)),))
    return msgspec.json.encode(envelope)


def _wire_message(message: InboundMessage, display_phone_number: str) -> _Message:
    content: dict = {}
    if message.type == "text":
        content["text"] = _Text(body=message.text or "")
    elif message.type in MEDIA_KINDS:
        content[message.type] = _Media(id=message.media_id, caption=message.text, mime_type=message.mime_type,
                                       filename=message.filename)
    elif message.type == "button":
        content["button"] = _Button(text=message.text, payload=message.reply_id)
    elif message.type == "interactive":
        # Meta's list_reply also carries the row's description; InboundMessage does not keep it.
        content["interactive"] = _Interactive(type="list_reply", list_reply=_Reply(id=message.reply_id,
                                                                                   title=message.text))
    if message.context_id is not None:
        # Meta names the business number the replied-to message came from.
        content["context"] = _Context(from_=display_phone_number, id=message.context_id)
    return _Message(from_=message.from_phone, id=message.message_id, timestamp=_unix(message.at),
                    type=message.type, **content)


def _wire_status(status: StatusUpdate) -> _Status:
    errors = ()
    if status.error_code is not None:
        errors = (_StatusError(code=status.error_code, title=status.error_title, message=status.error_title),)
    return _Status(id=status.message_id, status=status.status, timestamp=_unix(status.at),
                   recipient_id=status.recipient_phone, errors=errors, biz_opaque_callback_data=status.callback_data)


def _unix(at: datetime) -> str:
    return str(int(at.timestamp()))
