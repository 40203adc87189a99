"""The fence on what leaves the database: before a node makes an effect outside PostgreSQL for a workspace (a
platform send, a webhook delivery, a connector hook's delivery), it checks that it still holds the workspace's lease
by its own deadline, and abandons the effect otherwise.

The statement fence (persistence/statement_fence.py) keeps a node that lost its lease from writing; it cannot keep
it from calling the platform, which a paused node woken after another node took over would otherwise do with the
sends it had committed as pending. The node's own deadline ends `MARGIN_SECONDS` before PostgreSQL lets another node
take the lease (inbox_actors/cluster/leases.py), so an effect checked here goes out before any other node may make
it, unless the node freezes for that long between this check and its socket write: the callers check as late as
they can, right before the request's bytes are written (outbound_http/connections.py, `before_write`). The window
that remains is measured in docs/architecture.md.

An abandoned effect leaves what it was for as PostgreSQL has it, for the node that holds the workspace now: a send
stays pending (the platform's status never comes, so the in-doubt sweep settles it), an outbox event stays pending
(the new owner's endpoint delivers it). A node alone, which no other node can take a workspace from, always holds.
"""

from __future__ import annotations

from persistence.statement_fence import LeaseLost, current_fence


class EffectAbandoned(LeaseLost):
    """An effect outside PostgreSQL not made: the node no longer holds the workspace by its own deadline. Nothing
    left the node."""


def check_effect() -> None:
    """Raise EffectAbandoned unless the task's workspace (its statement fence) is still this node's. A task under
    no fence (a node's own actor) or on a node alone passes."""
    fence = current_fence()
    if fence is None or not fence.in_database:
        return
    if not fence.holds():
        raise EffectAbandoned(f"this node no longer holds workspace {fence.workspace_id} at epoch {fence.epoch}: "
                              "the effect was abandoned")
