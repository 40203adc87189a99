"""What the simulator's control routes take and answer for a simulated customer: the message they write (text or
media), the row they choose of an interactive list they were sent, and what became of it."""

from __future__ import annotations

import msgspec

from inbox_actors.platform.payloads import MEDIA_TYPES

CUSTOMER_MESSAGE_TYPES = ("text", *MEDIA_TYPES)


class CustomerMessage(msgspec.Struct, frozen=True):
    """The body of `POST /simulator/customers/{phone}/messages`."""

    phone_number_id: str
    text: str | None = None                  # the body, or the caption of media
    name: str | None = None                  # the customer's profile name
    type: str = "text"                       # text, image, video, audio, document
    # Media only: the file (base64; a small made-up file of the kind when left out), its type and a document's
    # file name.
    content_base64: str | None = None
    mime_type: str | None = None
    filename: str | None = None


class CustomerChoice(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The body of `POST /simulator/customers/{phone}/choices`: the customer picks a row of an interactive list that
    business number sent them."""

    phone_number_id: str
    choice: str                              # a row's id, or its title (case-insensitive)
    message_id: str | None = None            # the list message; the newest sent to the customer when left out


class CustomerMessageResult(msgspec.Struct, frozen=True):
    message_id: str
    delivered_to_service: bool
    service_status: int                      # the service's HTTP status; 0 when it could not be reached
    media_id: str | None = None              # of media: what the service downloads it by


class InvalidCustomerMessage(ValueError):
    """A simulated customer's message the simulator cannot write (bad phone, missing text, bad file, a choice of no
    row of a list sent to them)."""


class CustomerSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The body of `PUT /simulator/customers/{phone}`: the settings given change, the others stay."""

    read_receipts: bool | None = None        # read statuses posted at all (Meta's privacy setting)
    auto_read: bool | None = None            # reads each message as it arrives; false: only when told to


class CustomerReads(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The body of `POST /simulator/customers/{phone}/read` (may be empty): one business number's chat, or all."""

    phone_number_id: str | None = None
