"""What the simulated platform decides, as pure functions: which sends it refuses and which statuses follow.

The rules, in the order a send is checked (the first that applies answers; throughput is checked by the
simulator before these, since it needs the per-number window):
- recipient starts with 999: 131026 Message undeliverable;
- template unknown by name or in that language: 132001; wrong number of body parameters: 132000;
- MARKETING template to a recipient starting with 997: 131049 (healthy ecosystem engagement);
- text, media or an interactive list more than 24 hours after the customer's last message to this business
  number (a row they chose counts), or to a customer who never wrote: 131047 Re-engagement message (templates are
  allowed outside the window).
After an accepted send the statuses follow at fixed delays after acceptance: sent, delivered, then read when
the customer has read receipts on (by default on, off for numbers ending in 0) and reads as messages arrive (by
default; otherwise when told to, `POST /simulator/customers/{phone}/read`); a recipient starting with 998 gets sent
then failed (131026), and media sent by an uploaded id that its message kind cannot carry (a PDF as an image) sent
then failed (131053), as Meta fails media it cannot deliver after accepting the send.

Uploads (`POST /{phone_number_id}/media`) are judged as Meta judges them: `messaging_product`, `file` and `type`
required (100); the file's own type one Meta takes (100, Meta's sentence listing them); its size within Meta's
limit for its kind (131053). A send naming a media id the platform never gave is 100, in Meta's words.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import msgspec

from inbox_actors.platform import media_types
from inbox_actors.platform.cloud_api import ErrorData, GraphError
from inbox_actors.platform.payloads import SendRequest
from inbox_actors.platform.template_catalog import TemplateSpec

SERVICE_WINDOW = timedelta(hours=24)
UNDELIVERABLE_PREFIX = "999"                 # refused at send: 131026
FAILS_AFTER_SENT_PREFIX = "998"              # accepted, then statuses sent and failed (131026)
DECLINES_MARKETING_PREFIX = "997"            # MARKETING templates refused: 131049
NO_READ_RECEIPTS_SUFFIX = "0"                # read receipts off by default

INVALID_TOKEN = 190
INVALID_PARAMETER = 100
THROUGHPUT_EXCEEDED = 130429
UNDELIVERABLE = 131026
RE_ENGAGEMENT = 131047
ECOSYSTEM_ENGAGEMENT = 131049
MEDIA_UPLOAD_ERROR = 131053
PARAMETER_COUNT_MISMATCH = 132000
TEMPLATE_NOT_FOUND = 132001

UNDELIVERABLE_TITLE = "Message undeliverable"
MEDIA_UPLOAD_TITLE = "Media upload error"


class Refusal(msgspec.Struct, frozen=True):
    """An error answer of the platform: Meta's error body and the HTTP status it comes with."""

    http_status: int
    error: GraphError


def _refusal(code: int, message: str, title: str | None, details: str | None, *, http_status: int = 400,
             subcode: int | None = None) -> Refusal:
    data = ErrorData(messaging_product="whatsapp", details=details) if details else None
    return Refusal(http_status=http_status, error=GraphError(
        message=message, type="OAuthException", code=code, error_subcode=subcode, error_user_title=title,
        error_user_msg=details, error_data=data))


def invalid_token() -> Refusal:
    return _refusal(INVALID_TOKEN, "Invalid OAuth access token - Cannot parse access token", None, None,
                    http_status=401)


def invalid_parameter(details: str) -> Refusal:
    return _refusal(INVALID_PARAMETER, "(#100) Invalid parameter", "Invalid parameter", details)


def unknown_path(path: str) -> Refusal:
    return _refusal(INVALID_PARAMETER, f"Unsupported request - method type or path: {path}", None, None)


def throughput_exceeded(per_second: int) -> Refusal:
    return _refusal(THROUGHPUT_EXCEEDED, "(#130429) Rate limit hit", "Rate limit hit",
                    f"Cloud API message throughput has been reached ({per_second} messages per second "
                    "for this phone number).")


def undeliverable() -> Refusal:
    return _refusal(UNDELIVERABLE, "(#131026) Message Undeliverable", UNDELIVERABLE_TITLE,
                    "Message could not be delivered: the recipient is not a WhatsApp user or cannot receive "
                    "messages from this business.")


def template_not_found(name: str, language: str, *, name_known: bool) -> Refusal:
    details = (f"template name ({name}) does not exist in {language}" if name_known
               else f"template name ({name}) does not exist")
    return _refusal(TEMPLATE_NOT_FOUND, "(#132001) Template name does not exist in the translation",
                    "Template name does not exist in the translation", details)


def parameter_count_mismatch(given: int, expected: int) -> Refusal:
    return _refusal(PARAMETER_COUNT_MISMATCH,
                    "(#132000) Number of parameters does not match the expected number of params",
                    "Number of parameters does not match the expected number of params",
                    f"body: number of localizable_params ({given}) does not match the expected number of "
                    f"params ({expected})")


def ecosystem_engagement() -> Refusal:
    message = "This message was not delivered to maintain healthy ecosystem engagement."
    return _refusal(ECOSYSTEM_ENGAGEMENT, f"(#131049) {message}", message,
                    "In order to maintain a healthy ecosystem engagement, the marketing message was not delivered.")


def re_engagement() -> Refusal:
    return _refusal(RE_ENGAGEMENT, "(#131047) Re-engagement message", "Re-engagement message",
                    "Message failed to send because more than 24 hours have passed since the customer last "
                    "replied to this number.")


# -- media ----------------------------------------------------------------------------------------------------

def missing_parameter(name: str) -> Refusal:
    return _refusal(INVALID_PARAMETER, f"(#100) The parameter {name} is required.", None, None)


def unsupported_upload_type(received: str) -> Refusal:
    return _refusal(INVALID_PARAMETER, "(#100) Param file must be a file with one of the following types: "
                    f"{', '.join(media_types.UPLOADABLE)}. Received file of type '{received}'.", None, None)


def media_too_large(mime_type: str, size: int, limit: int) -> Refusal:
    return _refusal(MEDIA_UPLOAD_ERROR, f"(#{MEDIA_UPLOAD_ERROR}) {MEDIA_UPLOAD_TITLE}", MEDIA_UPLOAD_TITLE,
                    f"The file is {size:,} bytes; the platform takes at most {limit:,} bytes of {mime_type}.")


def unknown_media_id(kind: str) -> Refusal:
    return _refusal(INVALID_PARAMETER,
                    f"(#100) Param {kind}['id'] is not a valid whatsapp business account media attachment ID", None,
                    None)


def upload_refusal(mime_type: str, size: int) -> Refusal | None:
    """Why the platform refuses a file of this type (the file part's own) and size; None when it takes it."""
    limit = media_types.meta_limit(mime_type)
    if mime_type not in media_types.UPLOADABLE or limit is None:
        return unsupported_upload_type(mime_type)
    if size > limit:
        return media_too_large(mime_type, size, limit)
    return None


# -- numbers ------------------------------------------------------------------------------------------------

def wa_id(raw: str) -> str | None:
    """The recipient as WhatsApp ids spell it (digits with country code), or None when `raw` is no number.

    Like the platform, accepts `+`, spaces, dashes, dots and brackets around the digits.
    """
    digits = "".join(ch for ch in raw if ch not in "+ -.()")
    if not digits.isascii() or not digits.isdigit() or not 7 <= len(digits) <= 15:
        return None
    return digits


def default_read_receipts(phone: str) -> bool:
    return not phone.endswith(NO_READ_RECEIPTS_SUFFIX)


def within_service_window(last_inbound: datetime | None, now: datetime) -> bool:
    """Whether free-form messages may go out: the customer wrote in the last 24 hours."""
    return last_inbound is not None and now - last_inbound <= SERVICE_WINDOW


# -- sends --------------------------------------------------------------------------------------------------

def refusal_for(request: SendRequest, recipient: str, *, now: datetime, last_inbound: datetime | None,
                template: TemplateSpec | None, template_name_known: bool) -> Refusal | None:
    """Why the platform refuses this send, or None when it accepts it.

    `recipient` is the normalised `request.to`; `template` is the catalog's entry for the request's template
    name and language (None when missing or not a template send), `template_name_known` whether the name
    exists in any language.
    """
    if recipient.startswith(UNDELIVERABLE_PREFIX):
        return undeliverable()
    if request.type == "template":
        name, language = request.template_name or "", request.template_language or ""
        if template is None:
            return template_not_found(name, language, name_known=template_name_known)
        if len(request.template_parameters) != template.parameter_count:
            return parameter_count_mismatch(len(request.template_parameters), template.parameter_count)
        if template.category == "MARKETING" and recipient.startswith(DECLINES_MARKETING_PREFIX):
            return ecosystem_engagement()
        return None
    if not within_service_window(last_inbound, now):
        return re_engagement()
    return None


# -- statuses -----------------------------------------------------------------------------------------------

class StatusDelays(msgspec.Struct, frozen=True):
    """Seconds after acceptance at which each status is posted (kept in this order)."""

    sent: float = 0.05
    delivered: float = 0.2
    read: float = 0.5


class PlannedStatus(msgspec.Struct, frozen=True):
    after: float                             # seconds after acceptance
    status: str                              # sent, delivered, read, failed
    error_code: int | None = None
    error_title: str | None = None


def planned_statuses(recipient: str, *, read_receipts: bool, delays: StatusDelays,
                     media_fails: bool = False) -> tuple[PlannedStatus, ...]:
    """The statuses an accepted message will get, in order. `read_receipts`: the customer reads it (as it
    arrives) and has read receipts on; `media_fails`: its media cannot be delivered."""
    sent = PlannedStatus(after=delays.sent, status="sent")
    if recipient.startswith(FAILS_AFTER_SENT_PREFIX):
        return sent, PlannedStatus(after=delays.delivered, status="failed", error_code=UNDELIVERABLE,
                                   error_title=UNDELIVERABLE_TITLE)
    if media_fails:
        return sent, PlannedStatus(after=delays.delivered, status="failed", error_code=MEDIA_UPLOAD_ERROR,
                                   error_title=MEDIA_UPLOAD_TITLE)
    delivered = PlannedStatus(after=delays.delivered, status="delivered")
    if not read_receipts:
        return sent, delivered
    return sent, delivered, read_now(delays.read)


def read_now(after: float) -> PlannedStatus:
    """The read status of a message the customer reads `after` seconds past its acceptance."""
    return PlannedStatus(after=after, status="read")
