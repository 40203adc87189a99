"""What an action answers when it changed nothing, in terms every front door can translate: REST answers
`status` with `code` and `message`; MCP shows `message` to the model; the connectors answer by `reason`."""

from __future__ import annotations

import enum
from collections.abc import Awaitable
from typing import Any, TypeVar

import msgspec


class Reason(str, enum.Enum):
    """Why an action changed nothing."""

    INVALID = "invalid"              # an argument the action cannot take
    NOT_FOUND = "not_found"          # no such chat, contact or broadcast (or not one the caller may touch)
    PERMISSION = "permission"        # the caller's permissions lack the action's
    REFUSED = "refused"              # not possible now: the chat's state, the window, the platform, a setting
    UNAVAILABLE = "unavailable"      # a busy or failing part of the service; a write may still have happened


class Refused(msgspec.Struct, frozen=True):
    reason: Reason
    message: str
    """A sentence a person or a model can act on."""
    status: int = 409
    code: str = "refused"
    state: str | None = None
    """The chat's state, when its state refused the action."""
    data: Any = None
    """What the caller may want beside the sentence (the platform's error of a refused send)."""


class Done(msgspec.Struct, frozen=True):
    """An action that happened (or a read): `data` JSON-able, `summary` a sentence when a bare value would not
    say enough to a model."""

    data: Any
    summary: str | None = None


Outcome = Done | Refused


T = TypeVar("T")


async def judged(work: Awaitable[T], refusal: type[Exception]) -> T | Refused:
    """`work`'s value, or the `Refused` of a rule that refused it: an area's refusal exception, which carries the
    answer's `status`, `code` and `message` (the roster's, the label set's, the bot's settings')."""
    try:
        return await work
    except refusal as refused:
        status, code, message = refused.status, refused.code, refused.message  # type: ignore[attr-defined]
        return Refused(reason_of_status(status), message, status, code)


def reason_of_status(status: int) -> Reason:
    """The reason of a refusal that carries an HTTP status (a chat's, a contact's, a broadcast's)."""
    return {400: Reason.INVALID, 403: Reason.PERMISSION, 404: Reason.NOT_FOUND,
            503: Reason.UNAVAILABLE}.get(status, Reason.REFUSED)
