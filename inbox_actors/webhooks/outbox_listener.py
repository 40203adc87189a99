"""Wakes webhook endpoint actors when their workspace's outbox grows, in this process or any other.

The outbox trigger NOTIFYs `inbox_webhook_outbox` with the workspace id (once per transaction and workspace).
Notifications arrive on the database's own connection; they only mark the workspace here, and a Trio task
tells its endpoint actor. Whenever the listening connection is (re)made, every workspace with pending events
is woken: that covers the start of the service (a backlog left by a crash) and whatever was committed while
nobody listened.
"""

from __future__ import annotations

import logging

import trio

from inbox_actors.runtime import ActorError, ActorSystem, ActorSystemStopping
from inbox_actors.webhooks.endpoint import wake_endpoint
from persistence.database import Database, DatabaseUnavailable
from persistence.queries.webhook_delivery import workspaces_with_pending

log = logging.getLogger("inbox_actors.webhooks")

CHANNEL = "inbox_webhook_outbox"
_RECONNECT_FIRST_DELAY = 0.5
_RECONNECT_MAX_DELAY = 30.0


class OutboxListener:
    def __init__(self, db: Database, actors: ActorSystem) -> None:
        self._db = db
        self._actors = actors
        # Workspaces heard from and not yet woken; a set, so a storm of commits costs one wake each.
        self._heard: set[int] = set()
        self._something_heard = trio.Event()

    async def keep_listening(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Listen (reconnecting as needed) and wake endpoints, until cancelled."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._wake_heard)
            delay = _RECONNECT_FIRST_DELAY
            while True:
                lost = trio.Event()
                try:
                    await self._db.listen(CHANNEL, self._on_notify, on_lost=lost.set)
                    for workspace_id in await workspaces_with_pending(self._db):
                        self._hear(workspace_id)
                except DatabaseUnavailable as err:
                    log.warning("cannot listen for webhook events (%s); retrying in %gs", err, delay)
                else:
                    task_status.started()
                    task_status = trio.TASK_STATUS_IGNORED
                    delay = _RECONNECT_FIRST_DELAY
                    await lost.wait()
                    log.warning("lost the connection that listens for webhook events; reconnecting")
                await trio.sleep(delay)
                delay = min(2 * delay, _RECONNECT_MAX_DELAY)

    def _on_notify(self, payload: str) -> None:
        try:
            self._hear(int(payload))
        except ValueError:
            log.warning("unexpected %s payload %r", CHANNEL, payload)

    def _hear(self, workspace_id: int) -> None:
        self._heard.add(workspace_id)
        self._something_heard.set()

    async def _wake_heard(self) -> None:
        while True:
            await self._something_heard.wait()
            self._something_heard = trio.Event()
            heard, self._heard = self._heard, set()
            for workspace_id in heard:
                try:
                    wake_endpoint(self._actors, workspace_id)
                except ActorSystemStopping:
                    return
                except ActorError:
                    # A failed endpoint actor refuses for its cooldown; the next event or restart wakes it.
                    log.warning("cannot wake the webhook endpoint of workspace %s", workspace_id, exc_info=True)
