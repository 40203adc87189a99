"""The statuses of the simulator's accepted messages on their way to the service, batched as Meta sends them.

One task (the schedule, a heap of due times) wakes when the earliest status is due and moves everything due to its
business number's bounded queue; flushers post a number's queue as envelopes of up to `statuses_per_webhook`, oldest
first. Nothing waits when idle: a status is posted as soon as it is due; while a number's `webhooks_per_number`
envelopes are in flight (retries included), what comes due gathers for the next. A message's statuses come due in
plan order, and a status whose message is in an envelope not yet answered waits for it, so `sent` is never posted
after its `delivered`. A customer who reads when told to (`read`) adds a `read` to the end of a message's plan:
after its `delivered`, however far that has got.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import trio

from inbox_actors.platform.payloads import StatusUpdate
from inbox_actors.platform.simulator.rules import PlannedStatus, read_now
from inbox_actors.platform.simulator.state import (
    QueuedStatus,
    SentRecord,
    SimulatorStats,
    StatusQueues,
    StatusSchedule,
    Timeline,
)
from inbox_actors.platform.simulator.webhook_lane import WebhookLane
from inbox_actors.platform.webhook_envelope import build_envelope
from inbox_actors.runtime.clock import Clock

if TYPE_CHECKING:
    from inbox_actors.platform.simulator.model import SimulatorConfig

log = logging.getLogger("inbox_actors.platform.simulator.model")

# Posts one signed webhook body through a lane: the service's HTTP status, or 0 when it could not be reached.
PostWebhook = Callable[[bytes, WebhookLane | None], Awaitable[int]]


class StatusPoster:
    def __init__(self, config: SimulatorConfig, stats: SimulatorStats, clock: Clock, post: PostWebhook,
                 webhook_url: Callable[[], str | None]) -> None:
        self._config, self._stats, self._clock, self._post, self._webhook_url = config, stats, clock, post, webhook_url
        self._lane: WebhookLane | None = None
        self._timelines: trio.Nursery | None = None      # the schedule and the flushers, while posting
        self._schedule = StatusSchedule()
        self._queues = StatusQueues(config.max_queued_statuses)
        self._flushers: dict[str, int] = {}              # business number -> its flushers running
        self._in_flight: set[str] = set()                # messages with a status in an unsettled envelope
        self._running: dict[str, Timeline] = {}          # message id -> its statuses still on their way
        self._wake: trio.CancelScope | None = None       # the schedule's sleep, moved earlier by `_await_next`

    def start_posting(self, lane: WebhookLane, nursery: trio.Nursery) -> None:
        """Posts through `lane`, the schedule and flushers running in `nursery`, until `stop`."""
        self._lane, self._timelines = lane, nursery
        nursery.start_soon(self._run_schedule)

    def stop(self) -> None:
        """Forget every status still to come (the simulator stops serving: none will be posted)."""
        self._lane = self._timelines = self._wake = None
        self._schedule = StatusSchedule()
        self._queues = StatusQueues(self._config.max_queued_statuses)
        self._stats.status_timelines_running = 0
        self._running = {}

    def queued(self) -> int:
        return len(self._queues)

    def start(self, record: SentRecord, plan: tuple[PlannedStatus, ...]) -> None:
        """`record`'s statuses, each posted when due (none when not posting or too many messages await theirs)."""
        if self._timelines is None or self._stats.status_timelines_running >= self._config.max_status_timelines:
            self._stats.status_timelines_dropped += 1
            log.warning("no statuses for %s: %s", record.message_id,
                        "not serving" if self._timelines is None else "too many messages awaiting statuses")
            return
        self._stats.status_timelines_running += 1
        timeline = Timeline(record=record, plan=plan, accepted=trio.current_time())
        self._running[record.message_id] = timeline
        self._await_next(timeline)

    def read(self, record: SentRecord) -> bool:
        """The customer reads `record`'s message now: its `read` status posted after what is still to come of
        its statuses, or at once. False when there is nothing to read: it is read, failed or never got statuses,
        or its `read` (or `failed`) is on its way already."""
        timeline = self._running.get(record.message_id)
        if timeline is None:
            if record.status not in ("sent", "delivered"):
                return False
            self.start(record, (read_now(0.0),))
            return True
        if any(planned.status in ("read", "failed") for planned in timeline.plan):
            return False
        scheduled = timeline.step < len(timeline.plan)
        timeline.plan = (*timeline.plan, read_now(max(timeline.plan[-1].after,
                                                      trio.current_time() - timeline.accepted)))
        if not scheduled:
            self._await_next(timeline)
        return True

    def _await_next(self, timeline: Timeline) -> None:
        due = self._schedule.push(timeline)
        if self._wake is not None and due < self._wake.deadline:
            self._wake.deadline = due

    async def _run_schedule(self) -> None:
        """The one task that times statuses: sleeps until the earliest is due, then queues all that are due."""
        while True:
            with trio.CancelScope(deadline=self._schedule.next_due()) as self._wake:
                await trio.sleep_forever()
            self._wake = None
            now, numbers = trio.current_time(), set()
            while (timeline := self._schedule.pop_due(now)) is not None:
                numbers.add(self._status_due(timeline))
            for number in numbers:
                self._start_flushers(number)

    def _status_due(self, timeline: Timeline) -> str:
        """Queues the status now due for its number (answered); a full queue drops it."""
        planned = timeline.advance()
        record, at = timeline.record, self._clock.now()
        record.record_status(planned.status, at)
        if timeline.step < len(timeline.plan):
            self._await_next(timeline)     # due no earlier than now: queued after this one, even if due at once
        update = StatusUpdate(message_id=record.message_id, recipient_phone=record.to, status=planned.status,
                              at=at, error_code=planned.error_code, error_title=planned.error_title,
                              callback_data=record.callback_data)
        number = record.phone_number_id
        if self._queues.put(number, QueuedStatus(update=update, timeline=timeline)):
            timeline.unsettled += 1
        else:
            self._stats.status_queue_dropped += 1
            log.warning("dropped the %s of %s: %s statuses already wait for %s", planned.status, record.message_id,
                        self._config.max_queued_statuses, number)
            self._end_if_over(timeline)
        return number

    def _end_if_over(self, timeline: Timeline) -> None:
        """A message whose statuses have all been posted or dropped no longer counts as running."""
        if timeline.over and self._running.get(timeline.record.message_id) is timeline:
            self._stats.status_timelines_running -= 1
            del self._running[timeline.record.message_id]

    def _start_flushers(self, number: str) -> None:
        """Enough flushers for what waits (an envelope's worth each), up to `webhooks_per_number`."""
        running, cap = self._flushers.get(number, 0), self._config.statuses_per_webhook
        wanted = min(self._config.webhooks_per_number - running, -(-self._queues.waiting(number) // cap))
        if wanted > 0 and self._timelines is not None:
            self._flushers[number] = running + wanted
            for _ in range(wanted):
                self._timelines.start_soon(self._flush_statuses, number)

    async def _flush_statuses(self, number: str) -> None:
        """Posts the number's queued statuses, an envelope at a time, until none is left that it may take.

        Statuses of a message already in another envelope wait for that one to settle (its flusher takes them).
        """
        try:
            while batch := self._queues.take(number, self._config.statuses_per_webhook, self._in_flight):
                messages = {queued.update.message_id for queued in batch}
                self._in_flight |= messages
                body = build_envelope(number, self._config.display_phone_number,
                                      statuses=[queued.update for queued in batch])
                try:
                    posted = await self._post_with_retries(body, what=f"{len(batch)} statuses of {number}")
                finally:
                    self._in_flight -= messages
                if posted:
                    self._stats.statuses_posted += len(batch)
                else:
                    self._stats.webhooks_dropped += len(batch)
                for queued in batch:
                    queued.timeline.unsettled -= 1
                    self._end_if_over(queued.timeline)
        finally:
            self._flushers[number] -= 1
            if not self._flushers[number]:
                del self._flushers[number]

    async def _post_with_retries(self, body: bytes, *, what: str) -> bool:
        """Whether a status envelope got a 2xx, retrying after each of `webhook_retry_delays`."""
        for wait in (*self._config.webhook_retry_delays, None):
            if self._webhook_url() is None:
                break
            if 200 <= await self._post(body, self._lane) < 300:
                return True
            if wait is not None:
                await trio.sleep(wait)
        log.warning("dropped the webhook for %s: %s", what,
                    "no webhook URL" if self._webhook_url() is None else "no 2xx after every retry")
        return False
