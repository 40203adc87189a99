"""Errors a caller of the actor runtime can see, each named by its cause.

Every error carries the (kind, key) of the actor it concerns, so an HTTP handler or a log line can say which
conversation, bucket or endpoint refused the work without parsing the message.
"""

from __future__ import annotations

import trio


class ActorError(Exception):
    """Base of every runtime error about one addressed actor."""

    reason = "actor error"

    def __init__(self, kind: str, key: str, detail: str | None = None) -> None:
        self.kind = kind
        self.key = key
        self.detail = detail
        text = f"{kind}/{key}: {self.reason}"
        super().__init__(f"{text} ({detail})" if detail else text)


class ActorCrashed(ActorError):
    """The actor raised while this ask was in flight or queued; it is being restarted."""

    reason = "actor crashed"


class ActorFailed(ActorError):
    """The actor crashed too often (restart intensity exceeded) and is refusing work during its cooldown."""

    reason = "actor failed: restart intensity exceeded"


class AskTimeout(ActorError):
    """No reply within the ask deadline, which covers waiting for mailbox space and for the reply."""

    reason = "ask timed out"


class ActorSystemStopping(ActorError):
    """The system is shutting down: it accepts no new work and cancels what outlives the grace period."""

    reason = "actor system is stopping"


class MailboxFull(ActorError, trio.WouldBlock):
    """tell_nowait found the bounded mailbox full; the message was not sent. A trio.WouldBlock, as every
    Trio `*_nowait` call raises when it would have to wait."""

    reason = "mailbox full"


class KindUnavailable(ActorError):
    """Several actors of this kind failed within the restart window (a dependency they share is down): the
    kind refuses new work at once, with this error, until its cooldown ends, instead of letting every caller
    wait for an actor that will fail too."""

    reason = "kind unavailable: its actors are failing"


class WaitingOutOutage(ActorError):
    """The actor crashed of an outage of a dependency every actor shares (outages.py; the crash is chained) and
    waits for it to end: an ask is refused at once rather than left waiting, under its deadline, for a return
    nobody can promise."""

    reason = "waiting out an outage"


class ActivationFailed(ActorError):
    """The actor's first on_start raised, so it never became ready; the cause is chained."""

    reason = "activation failed"


class ServedElsewhere(ActorError):
    """The actor's workspace is held by another node (`owner`, its node id; "" when it could not be told), or, for a
    send that may not wait, by no node yet: the work belongs there."""

    reason = "its workspace is served by another node"

    def __init__(self, kind: str, key: str, workspace_id: int, owner: str | None) -> None:
        self.workspace_id, self.owner = workspace_id, owner
        super().__init__(kind, key, f"workspace {workspace_id} held by {owner}" if owner else
                         f"workspace {workspace_id} not held here")
