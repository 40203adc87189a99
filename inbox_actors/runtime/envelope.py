"""Envelope: a message in a mailbox plus, for an ask, the slot its single reply goes into."""

from __future__ import annotations

import trio

_QUEUED, _HANDLING, _ABANDONED = "queued", "handling", "abandoned"


class Envelope:
    """A message in a mailbox plus, for an ask, the slot its single reply goes into."""

    __slots__ = ("message", "sent_at", "_state", "_replied", "_value", "_error")

    def __init__(self, message: object, *, expects_reply: bool) -> None:
        self.message = message
        self.sent_at = trio.current_time()
        """When it was sent (trio's clock): operators read the age of a mailbox's oldest envelope."""
        self._state = _QUEUED
        self._replied: trio.Event | None = trio.Event() if expects_reply else None
        self._value: object = None
        self._error: BaseException | None = None

    @property
    def expects_reply(self) -> bool:
        return self._replied is not None

    def begin(self) -> bool:
        """Claim the message for handling; False if its asker already gave up, so it must be skipped."""
        if self._state == _ABANDONED:
            return False
        self._state = _HANDLING
        return True

    def abandon(self) -> None:
        # Once handling began the side effect is under way; only an untouched message can be withdrawn.
        if self._state == _QUEUED:
            self._state = _ABANDONED

    def resolve(self, value: object) -> None:
        if self._replied is not None and not self._replied.is_set():
            self._value = value
            self._replied.set()

    def fail(self, error: BaseException) -> None:
        if self._replied is not None and not self._replied.is_set():
            self._error = error
            self._replied.set()

    @property
    def settled(self) -> bool:
        return self._replied is not None and self._replied.is_set()

    async def wait_replied(self) -> None:
        assert self._replied is not None, "a tell has no reply to wait for"
        await self._replied.wait()

    def unwrap(self) -> object:
        if self._error is not None:
            raise self._error
        return self._value
