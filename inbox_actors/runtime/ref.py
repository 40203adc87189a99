"""ActorRef: the client handle. It names an actor; it does not hold one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import trio

from .cell import Envelope
from .errors import AskTimeout

if TYPE_CHECKING:
    from .system import ActorSystem


@dataclass(frozen=True, slots=True)
class ActorRef:
    """(system, kind, key). Every send looks the actor up afresh, so a ref stays valid across passivation,
    restarts and re-activation."""

    system: ActorSystem = field(repr=False)
    kind: str
    key: str

    async def ask(self, message: object, *, timeout: float | None = None) -> object:
        """Send and wait for the reply. The deadline (default: the kind's ask_timeout) covers waiting for
        mailbox space and for the reply; past it, AskTimeout.

        A message whose asker gave up (deadline or cancellation) before the actor began handling it is
        skipped, so a caller told "timeout" never sees its effect appear later. One already being handled
        completes and its reply is dropped, unless the kind has finish_started: then the ask waits on for it.
        """
        kind = self.system._kind(self.kind)
        limit = kind.ask_timeout if timeout is None else timeout
        envelope = Envelope(message, expects_reply=True)
        with trio.move_on_after(limit):
            try:
                await self.system._deliver(kind, self.key, envelope, await_activation=False)
                await envelope.wait_replied()
            except trio.Cancelled:
                envelope.abandon()
                raise
        if not envelope.settled and kind.finish_started and envelope.handling:
            # The work is under way and its outcome must reach the caller (a key's plaintext, say): wait.
            await envelope.wait_replied()
        # A reply that arrived as the deadline fired is still the truth about what happened.
        if envelope.settled:
            return envelope.unwrap()
        raise AskTimeout(self.kind, self.key, f"no reply within {limit:g}s")

    async def tell(self, message: object) -> None:
        """Send without a reply, waiting for mailbox space. If this send activates the actor, wait for its
        on_start too, so a failed activation raises ActivationFailed here."""
        kind = self.system._kind(self.kind)
        await self.system._deliver(kind, self.key, Envelope(message, expects_reply=False), await_activation=True)

    def tell_nowait(self, message: object) -> None:
        """Send without a reply and without blocking; MailboxFull if there is no room."""
        kind = self.system._kind(self.kind)
        self.system._deliver_nowait(kind, self.key, Envelope(message, expects_reply=False))
