"""ActorRef: the client handle. It names an actor; it does not hold one.

A ref reaches its actor through a `Router` (the ActorSystem is one), the typed seam between handles and the
registry: refs never touch the system's internals, and this module does not import the system's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import trio

from .actor import ActorKind
from .envelope import Envelope
from .errors import AskTimeout
from .statistics import ActorStatistics

NOT_INLINE = object()
"""Router.ask_inline's answer when the ask must go through the mailbox."""


class Router(Protocol):
    """What a ref needs of the registry: the kind's configuration, and delivery into the actor's mailbox."""

    def kind(self, name: str) -> ActorKind:
        """The registered kind; KeyError if there is none."""

    async def deliver(self, kind: ActorKind, key: str, envelope: Envelope, *, await_activation: bool) -> None:
        """Put `envelope` in the mailbox of (kind, key), activating the actor if needed; waits for space."""

    def deliver_nowait(self, kind: ActorKind, key: str, envelope: Envelope) -> None:
        """The same without waiting: MailboxFull (a trio.WouldBlock) if there is no room."""

    def statistics(self, kind: str, key: str) -> ActorStatistics | None:
        """The actor's statistics; None when it is neither live nor failed."""

    def ask_inline(self, kind: ActorKind, key: str, message: object) -> object:
        """For a kind with inline_asks: the reply of the parked actor, handled now in the caller's task; or
        NOT_INLINE when the actor is not parked (not live, busy, refusing), and the ask goes through the mailbox."""


@dataclass(frozen=True, slots=True)
class ActorRef:
    """(router, kind, key). Every send looks the actor up afresh, so a ref stays valid across passivation,
    restarts and re-activation."""

    router: Router = field(repr=False)
    kind: str
    key: str

    async def ask(self, message: object, *, timeout: float | None = None) -> object:
        """Send and wait for the reply. The deadline (default: the kind's ask_timeout) covers waiting for
        mailbox space and for the reply; past it, AskTimeout.

        The deadline holds whatever the actor is doing. A message whose asker gave up (deadline or
        cancellation) before the actor began handling it is skipped, so its effect never appears later; one
        already being handled completes and its reply is dropped: the caller, told AskTimeout, learns the
        outcome by reading (or from an idempotency record), as after any lost answer.
        """
        kind = self.router.kind(self.kind)
        if kind.inline_asks:
            await trio.lowlevel.checkpoint_if_cancelled()
            reply = self.router.ask_inline(kind, self.key, message)
            if reply is not NOT_INLINE:
                await trio.lowlevel.cancel_shielded_checkpoint()
                return reply
        limit = kind.ask_timeout if timeout is None else timeout
        envelope = Envelope(message, expects_reply=True)
        with trio.move_on_after(limit):
            try:
                await self.router.deliver(kind, self.key, envelope, await_activation=False)
                await envelope.wait_replied()
            except trio.Cancelled:
                envelope.abandon()
                raise
        # A reply that arrived as the deadline fired is still the truth about what happened.
        if envelope.settled:
            return envelope.unwrap()
        raise AskTimeout(self.kind, self.key, f"no reply within {limit:g}s")

    async def tell(self, message: object) -> None:
        """Send without a reply, waiting for mailbox space. If this send activates the actor, wait for its
        on_start too, so a failed activation raises ActivationFailed here."""
        kind = self.router.kind(self.kind)
        await self.router.deliver(kind, self.key, Envelope(message, expects_reply=False), await_activation=True)

    def tell_nowait(self, message: object) -> None:
        """Send without a reply and without blocking; MailboxFull (a trio.WouldBlock) if there is no room."""
        kind = self.router.kind(self.kind)
        self.router.deliver_nowait(kind, self.key, Envelope(message, expects_reply=False))

    def statistics(self) -> ActorStatistics | None:
        """The actor's statistics now; None when it is neither live nor failed. Reading changes nothing."""
        return self.router.statistics(self.kind, self.key)
