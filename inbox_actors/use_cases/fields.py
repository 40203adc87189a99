"""Field types the use cases' argument structs share: each type's rules (and, where a door answers a broken one
with its own code, that code and sentence) stated once, here, for every struct that takes such a field."""

from __future__ import annotations

from typing import Annotated

import msgspec

from inbox_actors.domain import contact_fields
from inbox_actors.domain.phones import PHONE_PATTERN
from inbox_actors.platform.payloads import MAX_TEXT
from inbox_actors.use_cases.use_case import rule

BIGINT_MAX = 2**63 - 1
MAX_REASON = 500

# Text a person or a model may send: no control character but a line break or a tab (`domain/text.py`).
LINES = r"[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"
MULTI_LINE = rf"^{LINES}*$"
# Text on one line: no control character at all.
ONE_LINE = r"^[^\x00-\x1f\x7f]*$"
# One line, not blank once trimmed.
FILLED_LINE = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f\x85][^\x00-\x1f\x7f]*$"

Phone = Annotated[str, msgspec.Meta(pattern=PHONE_PATTERN, examples=["919876543210"],
                                    description="The customer's phone number with country code, digits only "
                                                "(a leading + and spaces are ignored).")]
ChatPhone = Annotated[str, msgspec.Meta(
    pattern=PHONE_PATTERN, examples=["919876543210"],
    description="The customer's phone number with country code, digits only (a leading + and spaces are ignored).",
    extra=rule("not_found", "No such chat in this workspace.", 404))]
"""A chat named by its customer's phone: text that is no phone names no chat."""
Reason = Annotated[str, msgspec.Meta(
    max_length=MAX_REASON, pattern=MULTI_LINE, description="Why, for the team's audit log (optional).",
    extra=rule("invalid_reason", f"reason must be at most {MAX_REASON} characters, with no control characters "
                                 "but line breaks and tabs."))]
Text = Annotated[str, msgspec.Meta(
    min_length=1, max_length=MAX_TEXT, pattern=MULTI_LINE,
    extra=rule("invalid_text", f"text must be 1 to {MAX_TEXT:,} characters, with no control characters but "
                               "line breaks and tabs."))]
ReplyText = Annotated[str, msgspec.Meta(
    min_length=1, max_length=MAX_TEXT, pattern=MULTI_LINE,
    description="The reply (up to 4,096 characters), sent as the member this connection acts as. Within 24 hours "
                "of the customer's last message only.",
    extra=rule("invalid_text", f"A reply is 1 to {MAX_TEXT:,} characters, with no control characters but line "
                               "breaks and tabs; shorten it and send again."))]
"""A member's reply: a rule sentence a person reads beside the box the reply was typed in."""
MAX_IDEMPOTENCY_KEY = 100
IdempotencyKey = Annotated[str, msgspec.Meta(
    min_length=1, max_length=MAX_IDEMPOTENCY_KEY, pattern=r"^[!-~]+$",
    description="A key of your own for this message (1 to 100 printable characters, no spaces): a retry with the "
                "same key sends nothing again and answers as the first did, for 24 hours. The key is yours alone: "
                "another member's same key is another key.",
    extra=rule("invalid_idempotency_key", f"idempotency_key must be 1 to {MAX_IDEMPOTENCY_KEY} printable "
                                          "characters, without spaces."))]
"""What makes a composed message go once however often it is sent (`use_cases/keyed_sends.py`)."""
Tag = Annotated[str, msgspec.Meta(min_length=1, max_length=contact_fields.MAX_TAG, pattern=contact_fields.TAG_PATTERN,
                                  description="The tag, as the team uses it (case is ignored when matching).")]
Cursor = Annotated[str, msgspec.Meta(min_length=1, max_length=2000, description="The `next_cursor` of the "
                                                                                "previous page, to read on; pass "
                                                                                "the other arguments unchanged.")]
MemberId = Annotated[int, msgspec.Meta(ge=1, le=BIGINT_MAX)]
