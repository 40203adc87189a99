"""Wakes webhook endpoint actors when their workspace's outbox grows or its plan changes, in this process or any
other.

The outbox trigger NOTIFYs `inbox_webhook_outbox` with the workspace id (once per transaction and workspace);
a change to the workspace (its plan) is announced on `inbox_access_changed`, and makes the endpoint read its
settings afresh, so a plan drop applies from the next event on.
Notifications arrive on the database's own connection; they only mark the workspace here, and a Trio task
tells its endpoint actor. Whenever the listening connection is (re)made, every workspace with pending events
is woken: that covers the start of the service (a backlog left by a crash) and whatever was committed while
nobody listened.

With several nodes, the node holding a workspace delivers its events (its listener hears the same notifications).
A node that died leaves its workspaces' events pending with nobody to wake them, so every few seconds the
listener also wakes the workspaces with pending events whose lease no node holds: taking the lease, it delivers
them. A node that takes a dead node's workspace as soon as it sees the node dead (cluster/crash_watch.py), or takes
one for a request, is told (`taken`, from the lease keeper's `on_taken`) and wakes its endpoint if events are
pending, which the look for unleased workspaces would no longer find.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import trio

from inbox_actors.access.credentials import ACCESS_CHANGED_CHANNEL
from inbox_actors.cluster.leases import LEASE_SECONDS
from inbox_actors.runtime import ActorError, ActorSystem, ActorSystemStopping
from inbox_actors.runtime.outage_log import OutageLog
from inbox_actors.webhooks.endpoint import wake_endpoint
from persistence.database import Database, DatabaseUnavailable
from persistence.queries.webhook_delivery import pending_among, workspaces_with_pending

log = logging.getLogger("inbox_actors.webhooks")

CHANNEL = "inbox_webhook_outbox"
_RECONNECT_FIRST_DELAY = 0.5
# Low: once the database is back, the events committed meanwhile are delivered within this of its return.
_RECONNECT_MAX_DELAY = 2.0
# Half a lease: a dead node's events are picked up within about 12 s of its last renewal.
ORPHANS_EVERY_SECONDS = LEASE_SECONDS / 2


class OutboxListener:
    def __init__(self, db: Database, actors: ActorSystem, on_outbox: Callable[[int], None] | None = None) -> None:
        self._db = db
        self._actors = actors
        # Also told of each workspace whose outbox grew: the live pages' doorbell (live/wakeups.py).
        self._on_outbox_grew = on_outbox
        # Workspaces heard from and not yet woken (True: their settings or plan changed); a dict, so a storm of
        # commits costs one wake each.
        self._heard: dict[int, bool] = {}
        self._something_heard = trio.Event()
        # Workspaces this node has just taken, to look at for pending events.
        self._taken: set[int] = set()
        self._something_taken = trio.Event()

    async def keep_listening(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Listen (reconnecting as needed) and wake endpoints, until cancelled."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._wake_heard)
            nursery.start_soon(self._wake_orphans)
            nursery.start_soon(self._wake_taken)
            delay = _RECONNECT_FIRST_DELAY
            # Whatever listening meets, it tries again: a database error must never end the node.
            outage = OutageLog(log, "listening for webhook events", (DatabaseUnavailable,))
            while True:
                lost = trio.Event()
                try:
                    await self._db.listen({CHANNEL: self._on_outbox, ACCESS_CHANGED_CHANNEL: self._on_access},
                                          on_lost=lost.set, name="webhook outbox")
                    for workspace_id in await workspaces_with_pending(self._db):
                        self._hear(workspace_id, settings_changed=True)
                except Exception as err:
                    outage.failed(err)
                else:
                    outage.succeeded()
                    task_status.started()
                    task_status = trio.TASK_STATUS_IGNORED
                    delay = _RECONNECT_FIRST_DELAY
                    await lost.wait()
                    log.warning("lost the connection that listens for webhook events; reconnecting")
                await trio.sleep(delay)
                delay = min(2 * delay, _RECONNECT_MAX_DELAY)

    async def _wake_orphans(self) -> None:
        outage = OutageLog(log, "looking for webhook events no node delivers", (DatabaseUnavailable,))
        while True:
            await trio.sleep(ORPHANS_EVERY_SECONDS)
            orphans: list[int] = []
            # Shielded (and bounded): a read cut off by the listener's cancellation would leave its connection
            # mid-query for whoever closes the pool.
            with trio.CancelScope(shield=True, deadline=trio.current_time() + ORPHANS_EVERY_SECONDS):
                try:
                    orphans = await workspaces_with_pending(self._db, unleased_only=True)
                except Exception as err:
                    outage.failed(err)
                else:
                    outage.succeeded()
            for workspace_id in orphans:
                self._hear(workspace_id, settings_changed=True)

    def taken(self, workspace_id: int) -> None:
        """This node has just taken the workspace's lease: its pending events, if any, are delivered from here."""
        self._taken.add(workspace_id)
        self._something_taken.set()

    async def _wake_taken(self) -> None:
        outage = OutageLog(log, "looking for webhook events of workspaces just taken", (DatabaseUnavailable,))
        while True:
            await self._something_taken.wait()
            self._something_taken = trio.Event()
            taken, self._taken = sorted(self._taken), set()
            pending: list[int] | None = None
            with trio.CancelScope(shield=True, deadline=trio.current_time() + ORPHANS_EVERY_SECONDS):
                try:
                    pending = await pending_among(self._db, taken)
                except Exception as err:
                    outage.failed(err)
                else:
                    outage.succeeded()
            if pending is None:
                # Failed or cut off by the deadline: the workspaces are this node's, so no look for unleased ones
                # finds them; asked again after a pause.
                self._taken.update(taken)
                await trio.sleep(_RECONNECT_FIRST_DELAY)
                self._something_taken.set()
                continue
            for workspace_id in pending:
                self._hear(workspace_id, settings_changed=True)

    def _on_outbox(self, payload: str) -> None:
        workspace_id = self._hear_payload(CHANNEL, payload, settings_changed=False)
        if workspace_id is not None and self._on_outbox_grew is not None:
            self._on_outbox_grew(workspace_id)

    def _on_access(self, payload: str) -> None:
        self._hear_payload(ACCESS_CHANGED_CHANNEL, payload, settings_changed=True)

    def _hear_payload(self, channel: str, payload: str, *, settings_changed: bool) -> int | None:
        try:
            workspace_id = int(payload)
        except ValueError:
            log.warning("unexpected %s payload %r", channel, payload)
            return None
        self._hear(workspace_id, settings_changed=settings_changed)
        return workspace_id

    def _hear(self, workspace_id: int, *, settings_changed: bool) -> None:
        self._heard[workspace_id] = self._heard.get(workspace_id, False) or settings_changed
        self._something_heard.set()

    async def _wake_heard(self) -> None:
        while True:
            await self._something_heard.wait()
            self._something_heard = trio.Event()
            heard, self._heard = self._heard, {}
            for workspace_id, settings_changed in heard.items():
                try:
                    wake_endpoint(self._actors, workspace_id, settings_changed=settings_changed)
                except ActorSystemStopping:
                    return
                except ActorError:
                    # A failed endpoint actor refuses for its cooldown; the next event or restart wakes it.
                    log.warning("cannot wake the webhook endpoint of workspace %s", workspace_id, exc_info=True)
