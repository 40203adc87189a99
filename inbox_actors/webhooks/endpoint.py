"""The webhook endpoint actor: one per workspace, delivering its outbox to its endpoint.

The outbox in PostgreSQL holds the backlog; the actor holds at most `window` events in memory at once. Its
pump (an ActorTasks task) takes the oldest pending events it does not already hold, skips those the settings
or the plan do not want, and hands the rest to lanes: one lane per chat (the `phone` of the event's data), so
the events of one chat are attempted one after another in the order they were committed, while different
chats' events go out concurrently, at most `concurrency` requests at a time. Every attempt is committed
(AttemptLog, in groups) before the next attempt of that event begins and before the event leaves memory.

The automation connectors' REST hooks ride on the same outbox: each event is copied, in its own transaction,
once per hook of the workspace that wants it (migration 014's trigger), and the copies are delivered here like the
events, each to its hook's target with its hook's secret, in lanes of their own; a hook that is gone, whose key is
no longer live or whose event the plan no longer allows, has its copies skipped.

What wakes it: `Wake`, told by the outbox listener when a transaction appended events for the workspace (a
NOTIFY from the outbox trigger), by a settings change, and its own (re)start. With nothing pending and nothing
in hand the pump ends and the actor may passivate. A crash loses only memory: what was not recorded as
delivered or failed is still pending, and the restarted actor takes it again (at least once: an attempt the
crash interrupted is made again).
"""

from __future__ import annotations

import logging
import weakref
from collections import deque
from dataclasses import dataclass

import msgspec
import trio

from inbox_actors.domain import events
from inbox_actors.domain.plans import Plan
from inbox_actors.runtime import (
    Actor,
    ActorError,
    ActorKind,
    ActorSystem,
    MailboxFull,
    ServedElsewhere,
    workspace_in_key,
)
from inbox_actors.runtime.clock import Clock
from inbox_actors.webhooks.address_guard import AddressGuard, InvalidEndpointUrl
from inbox_actors.webhooks.attempt_log import AttemptLog
from inbox_actors.webhooks.delivery import Destination, OutboxEvent, deliver
from inbox_actors.webhooks.transport import WebhookTransport
from persistence.database import Database, DatabaseUnavailable, Record
from persistence.queries import connectors as hook_queries
from persistence.queries import webhook_configs as config_queries
from persistence.queries import webhook_delivery as delivery_queries
from persistence.statement_fence import LeaseLost

log = logging.getLogger("inbox_actors.webhooks")

KIND = "webhook_endpoint"


class Wake(msgspec.Struct, frozen=True):
    """New events may be pending: look again. `settings_changed`: read the settings afresh first."""

    settings_changed: bool = False


@dataclass(frozen=True)
class EndpointDeps:
    db: Database
    clock: Clock
    transport: WebhookTransport
    guard: AddressGuard
    concurrency: int = 64
    """Requests in flight to one endpoint at most."""
    window: int = 2_000
    """Events held in memory at most (taken, not yet finished); the rest wait in the outbox."""
    recheck_seconds: float = 1.0
    """While events are in hand, look for new ones at least this often even without a Wake; also how long
    the settings read for a round are trusted (a save tells the actor at once, see `wake_endpoint`)."""


class _Target(msgspec.Struct, frozen=True):
    destination: Destination
    wanted: frozenset[str]


class _Targets(msgspec.Struct, frozen=True):
    """Where the workspace's events go: its endpoint (None: nowhere), and the automation connectors' hooks, each
    taking the copies made for it (`inbox_actors.connectors.hooks`)."""

    endpoint: _Target | None
    hooks: dict[int, Destination]

    def destination(self, hook_id: int | None) -> Destination | None:
        """Where an event goes: its hook's target for a hook's copy (`hook_id`), else the endpoint; None: nowhere."""
        if hook_id is not None:
            return self.hooks.get(hook_id)
        return self.endpoint.destination if self.endpoint is not None else None

    def wants(self, row: Record) -> bool:
        """A pending outbox row is to be delivered: it has a destination and, for the endpoint, is an event the
        settings chose."""
        if self.destination(row["hook_id"]) is None:
            return False
        return row["hook_id"] is not None or row["event"] in self.endpoint.wanted


class WebhookEndpoint(Actor):
    def __init__(self, key: str, deps: EndpointDeps) -> None:
        super().__init__(key)
        self.workspace_id = int(key)
        self.deps = deps
        self._attempts = AttemptLog(deps.db)
        self._limiter = trio.Semaphore(deps.concurrency)
        self._lanes: dict[str, deque[OutboxEvent]] = {}
        self._in_hand: set[int] = set()
        self._wake = trio.Event()
        self._pumping = False
        # More was pending than the last take had room for: finishing events should make room and take more.
        self._backlog = False
        self._target: _Targets | None = None
        self._target_read_at = -float("inf")
        # Counts announced settings changes, so a read that one overtook is not trusted until the next recheck.
        self._settings_changes = 0

    async def on_start(self) -> None:
        self._start_pump()

    async def receive(self, message: object) -> object:
        if isinstance(message, Wake):
            if message.settings_changed:
                self._settings_changes += 1
                self._target_read_at = -float("inf")
            self._wake.set()
            if not self._pumping:
                self._start_pump()
            return None
        return await super().receive(message)

    def _start_pump(self) -> None:
        self._pumping = True
        self.tasks.start_soon(self._pump, name=f"webhook pump {self.key}")

    async def _pump(self) -> None:
        while True:
            self._wake = trio.Event()
            try:
                taken = await self._take_events()
            except DatabaseUnavailable as err:
                # A blip: the events wait in the outbox; look again shortly rather than crash in a loop.
                log.warning("workspace %s: cannot read the outbox (%s); retrying", self.key, err)
                await trio.sleep(self.deps.recheck_seconds)
                continue
            if not taken and not self._in_hand and not self._wake.is_set():
                # No checkpoint between the checks and here: a Wake from now on starts a new pump.
                self._pumping = False
                return
            if self._target is None:
                # Nothing goes out: a workspace without an endpoint skips its events in bulk, once a period,
                # rather than once per commit; the pump ends after a period in which nothing came.
                await trio.sleep(self.deps.recheck_seconds)
                continue
            with trio.move_on_after(self.deps.recheck_seconds):
                await self._wake.wait()

    async def _take_events(self) -> int:
        """Take what is pending into lanes (or skip it); how many events were taken (or skipped)."""
        targets, fresh = await self._current_targets()
        if targets is None and not fresh:
            # Read again before skipping everything: a hook may have been subscribed a moment ago.
            targets, fresh = await self._current_targets(force=True)
        if targets is None:
            skipped = await delivery_queries.skip_all_pending(self.deps.db, self.workspace_id)
            if skipped:
                log.debug("workspace %s: %d events skipped (no deliverable endpoint)", self.key, skipped)
            return skipped
        room = self.deps.window - len(self._in_hand)
        if room <= 0:
            return 0
        rows = await delivery_queries.pending_events(self.deps.db, self.workspace_id, exclude=self._in_hand,
                                                     limit=room)
        self._backlog = len(rows) == room
        if not fresh and any(row["hook_id"] is not None and row["hook_id"] not in targets.hooks for row in rows):
            # Copies for a hook not known yet (subscribed since the last read): read again rather than skip them.
            targets, _ = await self._current_targets(force=True)
        wanted = [row for row in rows if targets is not None and targets.wants(row)]
        taken = {row["id"] for row in wanted}
        await delivery_queries.skip_events(self.deps.db, [row["id"] for row in rows if row["id"] not in taken])
        for row in wanted:
            # Every chat and contact event names its phone; an event of no chat has a lane of its own; a hook's
            # copies go in lanes of their own, so a slow hook holds back only itself.
            lane = row["phone"] or f"#{row['id']}"
            self._hand_to_lane(_outbox_event(row), lane if row["hook_id"] is None else f"hook {row['hook_id']} {lane}")
        return len(rows)

    async def _current_targets(self, *, force: bool = False) -> tuple[_Targets | None, bool]:
        """The targets and whether they were read just now."""
        now = trio.current_time()
        if force or now - self._target_read_at >= self.deps.recheck_seconds:
            changes = self._settings_changes
            self._target = await self._load_targets()
            # A change announced while reading may not be in what was read: read again at the next look.
            self._target_read_at = now if changes == self._settings_changes else -float("inf")
            return self._target, True
        return self._target, False

    async def _load_targets(self) -> _Targets | None:
        endpoint = await self._load_endpoint()
        hooks = await self._load_hooks()
        if endpoint is None and not hooks:
            return None
        return _Targets(endpoint=endpoint, hooks=hooks)

    async def _load_endpoint(self) -> _Target | None:
        row = await config_queries.delivery_target(self.deps.db, self.workspace_id)
        if row is None or not row["enabled"]:
            return None
        # A plan drop stops what the new plan leaves out, whatever the settings still name.
        wanted = frozenset(row["events"]) & frozenset(events.events_in_plan(Plan(row["plan"])))
        if not wanted:
            return None
        try:
            endpoint = self.deps.guard.check_url(row["endpoint_url"])
        except InvalidEndpointUrl as err:
            # Saved under other rules (the allowed networks changed): nothing can go out until it is fixed.
            log.warning("workspace %s: webhook endpoint refused (%s); its events are skipped", self.key, err)
            return None
        return _Target(Destination(endpoint=endpoint, secret=row["signing_secret"]), wanted)

    async def _load_hooks(self) -> dict[int, Destination]:
        """The automation connectors' live hooks whose event the plan allows (their key live, its creator
        active); a hook whose target the address rules now refuse gets nothing."""
        hooks: dict[int, Destination] = {}
        for row in await hook_queries.live_hooks(self.deps.db, self.workspace_id, self.deps.clock.now()):
            if row["event"] not in events.events_in_plan(Plan(row["plan"])):
                continue
            try:
                hooks[row["id"]] = Destination(endpoint=self.deps.guard.check_url(row["target_url"]),
                                               secret=row["signing_secret"])
            except InvalidEndpointUrl as err:
                log.warning("workspace %s: connector hook %s refused (%s); its events are skipped", self.key,
                            row["id"], err)
        return hooks

    def _hand_to_lane(self, event: OutboxEvent, lane_key: str) -> None:
        self._in_hand.add(event.id)
        lane = self._lanes.get(lane_key)
        if lane is not None:
            lane.append(event)
            return
        self._lanes[lane_key] = deque([event])
        self.tasks.start_soon(self._run_lane, lane_key, name=f"webhook lane {self.key}")

    async def _run_lane(self, lane_key: str) -> None:
        lane = self._lanes[lane_key]
        try:
            while lane:
                event = lane[0]
                destination = self._target.destination(event.hook_id) if self._target is not None else None
                if destination is None:
                    break  # delivery was switched off (or the hook removed) since it was taken; skipped next round
                await deliver(event, destination, transport=self.deps.transport, clock=self.deps.clock,
                              record=self._attempts.record, limiter=self._limiter)
                lane.popleft()
                self._in_hand.discard(event.id)
                if self._backlog and len(self._in_hand) <= self.deps.window // 2:
                    self._wake.set()  # room for a good share of the backlog
        except LeaseLost as err:
            # The workspace is no longer this node's (an attempt abandoned before it went out, or its record
            # refused): the lane's events stay pending for the node holding it now, and this actor is being
            # stopped. Not a crash: nothing failed that a restart here could mend.
            log.info("workspace %s: webhook lane %s stopped: %s", self.key, lane_key, err)
            return
        finally:
            for left in lane:
                self._in_hand.discard(left.id)
            del self._lanes[lane_key]
        if not self._in_hand:
            self._wake.set()  # the pump may end, or take what came meanwhile


def _outbox_event(row: Record) -> OutboxEvent:
    return OutboxEvent(id=row["id"], event=row["event"], correlation_id=row["correlation_id"], actor=row["actor"],
                       data_json=row["data"], attempts=row["attempts"], last_attempt_at=row["last_attempt_at"],
                       hook_id=row["hook_id"])


# -- kind and client API -------------------------------------------------------------------------------------


def webhook_endpoint_kind(deps: EndpointDeps, *, idle_timeout: float = 300.0) -> ActorKind:
    return ActorKind(name=KIND, factory=lambda key: WebhookEndpoint(key, deps), mailbox_capacity=16,
                     idle_timeout=idle_timeout, workspace_of=workspace_in_key)


def wake_endpoint(actors: ActorSystem, workspace_id: int, *, settings_changed: bool = False) -> None:
    """Tell the workspace's endpoint to look at its outbox; a full mailbox already holds Wakes (a settings
    change then waits at most `recheck_seconds`)."""
    try:
        actors.ref(KIND, str(workspace_id)).tell_nowait(Wake(settings_changed=settings_changed))
    except MailboxFull:
        pass
    except ServedElsewhere:
        # No actor of the workspace on this node (several nodes): the node holding it heard the same notification,
        # and a workspace no node holds is taken here, which waits on PostgreSQL, so in a task; one per workspace.
        placing = _placing.setdefault(actors, set())
        if workspace_id not in placing:
            placing.add(workspace_id)
            actors.start_soon(_wake_once_placed, actors, workspace_id, name=f"place webhook endpoint {workspace_id}")


# Per actor system, the workspaces whose endpoint a task is placing.
_placing: weakref.WeakKeyDictionary[ActorSystem, set[int]] = weakref.WeakKeyDictionary()


async def _wake_once_placed(actors: ActorSystem, workspace_id: int) -> None:
    try:
        await actors.ref(KIND, str(workspace_id)).tell(Wake(settings_changed=True))
    except ActorError as err:
        log.debug("webhook endpoint of workspace %d stays where it is: %s", workspace_id, err)
    except DatabaseUnavailable as err:
        log.warning("webhook endpoint of workspace %d not placed: %s", workspace_id, err)
    finally:
        _placing[actors].discard(workspace_id)
