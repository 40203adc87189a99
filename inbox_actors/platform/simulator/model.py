"""The simulated WhatsApp Cloud API: what it does with sends and customers' messages, and the webhooks it posts.

`app` is its HTTP face and `server` puts the two on a socket; neither is imported here. It answers
`POST /{phone_number_id}/messages` as the platform does (Meta's success and error bodies, the rules in
`rules`), then posts the statuses of each accepted message to `webhook_url` after the configured delays,
signed with the app secret, each carrying the send's `biz_opaque_callback_data` as Meta echoes it. Simulated
customers write through `POST /simulator/customers/{phone}/messages` (see `app` for the control routes), which
opens their 24-hour window. Time for the window comes from a
`Clock`, so tests can move it; the status delays are trio time.

Statuses go out batched, as Meta sends them: one task (the schedule, a heap of due times) wakes when the
earliest status is due and moves everything due to its business number's bounded queue; flushers post a
number's queue as envelopes of up to `statuses_per_webhook`, oldest first. Nothing waits when idle: a status is
posted as soon as it is due; while a number's `webhooks_per_number` envelopes are in flight (retries included),
what comes due gathers for the next. A message's statuses come due in plan order, and a status whose message
is in an envelope not yet answered waits for it, so `sent` is never posted after its `delivered`. Webhook posts
go through two lanes, statuses and customer messages, each with its own connections and at most its
concurrency in flight (a `trio.CapacityLimiter` the size of httpx's pool): httpx never keeps a waiting list,
`webhook_timeout` times the service and not the queue, and statuses cannot starve customers.

`webhook_url` is an attribute of the running simulator, settable at any time: the service's URL is known only
after the service has bound its port, which may be after the simulator has bound its own.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Self

import msgspec
import trio

from inbox_actors.platform.cloud_api import InvalidSendRequest, decode_send_request
from inbox_actors.platform.payloads import InboundMessage, StatusUpdate
from inbox_actors.platform.simulator.customers import (
    CUSTOMER_MESSAGE_TYPES,
    CustomerMessage,
    CustomerMessageResult,
    InvalidCustomerMessage,
)
from inbox_actors.platform.simulator.media import InvalidMedia, MediaLocation, MediaShelf, StoredMedia
from inbox_actors.platform.simulator.rules import (
    Refusal,
    StatusDelays,
    default_read_receipts,
    invalid_parameter,
    invalid_token,
    planned_statuses,
    refusal_for,
    throughput_exceeded,
    unknown_path,
    wa_id,
)
from inbox_actors.platform.simulator.state import (
    Customers,
    QueuedStatus,
    SentLog,
    SentRecord,
    SimulatorStats,
    StatusQueues,
    StatusSchedule,
    Throughput,
    Timeline,
)
from inbox_actors.platform.simulator.webhook_lane import WebhookLane
from inbox_actors.platform.template_catalog import InMemoryTemplateCatalog, TemplateCatalog
from inbox_actors.platform.webhook_envelope import build_envelope
from inbox_actors.runtime.clock import Clock, WallClock

log = logging.getLogger("inbox_actors.platform.simulator.model")

DEFAULT_DELAYS = StatusDelays()


class SimulatorConfig(msgspec.Struct, frozen=True):
    app_secret: str                          # signs webhooks (X-Hub-Signature-256)
    access_token: str                        # the bearer every send must carry
    webhook_url: str | None = None           # the service's /webhooks/whatsapp (settable later on Simulator)
    delays: StatusDelays = DEFAULT_DELAYS
    throughput_per_second: int = 80          # per business number, any one second (130429 beyond)
    # Waits between attempts at a status envelope that got no 2xx; after the last, its statuses are dropped.
    webhook_retry_delays: tuple[float, ...] = (0.5, 2.0, 8.0)
    webhook_timeout: float = 5.0             # each attempt, once it has a connection (waiting for one is untimed)
    webhook_concurrency: int = 8             # status envelopes in flight at once (and connections for them)
    webhooks_per_number: int = 4             # of those, for one business number at most
    customer_webhook_concurrency: int = 32   # customer messages in flight at once (their own connections)
    statuses_per_webhook: int = 100          # statuses in one envelope at most
    display_phone_number: str = "15550000000"   # metadata.display_phone_number in every envelope
    history_per_number: int = 1000           # accepted sends kept per business number
    max_numbers: int = 1000                  # business numbers remembered (history, throughput windows)
    max_customers: int = 100_000             # customers remembered (last message, read receipts)
    max_status_timelines: int = 10_000       # accepted messages awaiting statuses at once; more get none
    max_queued_statuses: int = 10_000        # due statuses waiting per business number; more are dropped


class SendAcceptedBySimulator(msgspec.Struct, frozen=True):
    message_id: str
    recipient_input: str
    wa_id: str


def new_message_id() -> str:
    return "wamid." + secrets.token_urlsafe(24)


class Simulator:
    """The simulated platform's state and behaviour; `server.serve_simulator` puts it on a socket."""

    def __init__(self, config: SimulatorConfig, *, catalog: TemplateCatalog | None = None,
                 clock: Clock | None = None) -> None:
        self.config = config
        self.webhook_url = config.webhook_url
        self.catalog: TemplateCatalog = catalog if catalog is not None else InMemoryTemplateCatalog()
        self.clock: Clock = clock or WallClock()
        self.url: str | None = None          # the base URL, set by `serve_simulator` once listening
        self.stats = SimulatorStats()
        self.customers = Customers(config.max_customers)
        self.throughput = Throughput(config.throughput_per_second, config.max_numbers)
        self.sent_log = SentLog(config.history_per_number, config.max_numbers)
        self.media = MediaShelf()
        self._status_lane: WebhookLane | None = None
        self._customer_lane: WebhookLane | None = None
        self._timelines: trio.Nursery | None = None      # the schedule and the flushers, while running
        self._schedule = StatusSchedule()
        self._queues = StatusQueues(config.max_queued_statuses)
        self._flushers: dict[str, int] = {}              # business number -> its flushers running
        self._in_flight: set[str] = set()                # messages with a status in an unsettled envelope
        self._wake: trio.CancelScope | None = None       # the schedule's sleep, moved earlier by `_await_next`

    # -- running --------------------------------------------------------------------------------------------

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Self]:
        """The background work of a serving simulator: its webhook lanes, the status schedule and flushers.

        `serve_simulator` (in `server`) holds it around the HTTP server. Statuses still waiting when it ends are
        not posted; outside it, accepted sends get no statuses and customer messages are not posted.
        """
        timeout = self.config.webhook_timeout
        async with WebhookLane(self.config.webhook_concurrency, timeout) as status_lane, \
                WebhookLane(self.config.customer_webhook_concurrency, timeout) as customer_lane, \
                trio.open_nursery() as timelines:
            self._status_lane, self._customer_lane, self._timelines = status_lane, customer_lane, timelines
            timelines.start_soon(self._run_schedule)
            try:
                yield self
            finally:
                # The server has returned (or is cancelled): statuses still to come are not waited for.
                self._stop_statuses()
                timelines.cancel_scope.cancel()

    # -- sends ------------------------------------------------------------------------------------------------

    async def send(self, phone_number_id: str, authorization: str | None, raw_body: bytes, *,
                   arrived_at: float | None = None) -> SendAcceptedBySimulator | Refusal:
        """`POST /{phone_number_id}/messages`, checked in order: token, body, throughput, then the rules. The
        throughput counts the send at `arrived_at` (trio time; now when not given)."""
        outcome = await self._decide_send(phone_number_id, authorization, raw_body, arrived_at)
        if isinstance(outcome, Refusal):
            self.stats.refused(outcome.error.code)
        else:
            self.stats.sends_accepted += 1
        return outcome

    async def _decide_send(self, phone_number_id: str, authorization: str | None, raw_body: bytes,
                           arrived_at: float | None) -> SendAcceptedBySimulator | Refusal:
        if not self._authorized(authorization):
            return invalid_token()
        try:
            request = decode_send_request(raw_body)
        except InvalidSendRequest as err:
            return invalid_parameter(str(err))
        recipient = wa_id(request.to)
        if recipient is None:
            return invalid_parameter(f"to: {request.to!r} is not a phone number")
        if not self.throughput.admit(phone_number_id, arrived_at if arrived_at is not None else trio.current_time()):
            return throughput_exceeded(self.config.throughput_per_second)
        template, name_known = None, False
        if request.type == "template":
            template = await self.catalog.find(phone_number_id, request.template_name or "",
                                               request.template_language or "")
            name_known = template is not None or await self.catalog.has_name(phone_number_id,
                                                                             request.template_name or "")
        now = self.clock.now()
        refusal = refusal_for(request, recipient, now=now, template=template, template_name_known=name_known,
                              last_inbound=self.customers.last_inbound(phone_number_id, recipient))
        if refusal is not None:
            return refusal
        record = SentRecord.of(new_message_id(), phone_number_id, recipient, request, now)
        self.sent_log.add(record)
        self._schedule_statuses(record)
        return SendAcceptedBySimulator(message_id=record.message_id, recipient_input=request.to, wa_id=recipient)

    def read_receipts(self, phone: str) -> bool:
        setting = self.customers.read_receipts(phone)
        return default_read_receipts(phone) if setting is None else setting

    def _schedule_statuses(self, record: SentRecord) -> None:
        plan = planned_statuses(record.to, read_receipts=self.read_receipts(record.to), delays=self.config.delays)
        if self._timelines is None or self.stats.status_timelines_running >= self.config.max_status_timelines:
            self.stats.status_timelines_dropped += 1
            log.warning("no statuses for %s: %s", record.message_id,
                        "not serving" if self._timelines is None else "too many messages awaiting statuses")
            return
        self.stats.status_timelines_running += 1
        self._await_next(Timeline(record=record, plan=plan, accepted=trio.current_time()))

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
        record, at = timeline.record, self.clock.now()
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
            self.stats.status_queue_dropped += 1
            log.warning("dropped the %s of %s: %s statuses already wait for %s", planned.status, record.message_id,
                        self.config.max_queued_statuses, number)
            self._end_if_over(timeline)
        return number

    def _end_if_over(self, timeline: Timeline) -> None:
        """A message whose statuses have all been posted or dropped no longer counts as running."""
        if timeline.over:
            self.stats.status_timelines_running -= 1

    def _start_flushers(self, number: str) -> None:
        """Enough flushers for what waits (an envelope's worth each), up to `webhooks_per_number`."""
        running, cap = self._flushers.get(number, 0), self.config.statuses_per_webhook
        wanted = min(self.config.webhooks_per_number - running, -(-self._queues.waiting(number) // cap))
        if wanted > 0 and self._timelines is not None:
            self._flushers[number] = running + wanted
            for _ in range(wanted):
                self._timelines.start_soon(self._flush_statuses, number)

    async def _flush_statuses(self, number: str) -> None:
        """Posts the number's queued statuses, an envelope at a time, until none is left that it may take.

        Statuses of a message already in another envelope wait for that one to settle (its flusher takes them).
        """
        try:
            while batch := self._queues.take(number, self.config.statuses_per_webhook, self._in_flight):
                messages = {queued.update.message_id for queued in batch}
                self._in_flight |= messages
                body = build_envelope(number, self.config.display_phone_number,
                                      statuses=[queued.update for queued in batch])
                try:
                    posted = await self._post_with_retries(body, what=f"{len(batch)} statuses of {number}")
                finally:
                    self._in_flight -= messages
                if posted:
                    self.stats.statuses_posted += len(batch)
                else:
                    self.stats.webhooks_dropped += len(batch)
                for queued in batch:
                    queued.timeline.unsettled -= 1
                    self._end_if_over(queued.timeline)
        finally:
            self._flushers[number] -= 1
            if not self._flushers[number]:
                del self._flushers[number]

    def _stop_statuses(self) -> None:
        """Forget every status still to come (the simulator stops serving: none will be posted)."""
        self._status_lane = self._customer_lane = self._timelines = self._wake = None
        self._schedule = StatusSchedule()
        self._queues = StatusQueues(self.config.max_queued_statuses)
        self.stats.status_timelines_running = 0

    async def _post_with_retries(self, body: bytes, *, what: str) -> bool:
        """Whether a status envelope got a 2xx, retrying after each of `webhook_retry_delays`."""
        for wait in (*self.config.webhook_retry_delays, None):
            if self.webhook_url is None:
                break
            if 200 <= await self._post_webhook(body, self._status_lane) < 300:
                return True
            if wait is not None:
                await trio.sleep(wait)
        log.warning("dropped the webhook for %s: %s", what,
                    "no webhook URL" if self.webhook_url is None else "no 2xx after every retry")
        return False

    async def _post_webhook(self, body: bytes, lane: WebhookLane | None) -> int:
        """One signed POST to the webhook URL; the HTTP status, or 0 when the service could not be reached."""
        url = self.webhook_url
        status = 0 if lane is None or url is None else await lane.post(url, body, self.config.app_secret)
        if 200 <= status < 300:
            self.stats.webhooks_posted += 1
        else:
            self.stats.webhooks_failed += 1
        return status

    # -- customers --------------------------------------------------------------------------------------------

    async def customer_writes(self, phone: str, message: CustomerMessage) -> CustomerMessageResult:
        """A simulated customer sends a message: signed envelope posted once, window opened.

        Raises InvalidCustomerMessage. The window opens whether or not the service took the webhook (the
        customer did write); the result says what the service answered, so no retry is made here.
        """
        customer = wa_id(phone)
        if customer is None:
            raise InvalidCustomerMessage(f"{phone!r} is not a phone number")
        if not message.phone_number_id:
            raise InvalidCustomerMessage("phone_number_id is required")
        if message.type not in CUSTOMER_MESSAGE_TYPES:
            raise InvalidCustomerMessage(f"type must be one of {', '.join(CUSTOMER_MESSAGE_TYPES)}")
        if message.type == "text" and not message.text:
            raise InvalidCustomerMessage("text is required for a text message")
        now = self.clock.now()
        media_id = mime_type = None
        if message.type != "text":
            try:
                media_id, media = self.media.keep(message.type, message.mime_type, message.content_base64)
            except InvalidMedia as err:
                raise InvalidCustomerMessage(str(err)) from None
            mime_type = media.mime_type
        inbound = InboundMessage(
            message_id=new_message_id(), from_phone=customer, at=now, type=message.type, text=message.text,
            media_id=media_id, mime_type=mime_type, filename=message.filename, profile_name=message.name,
        )
        self.customers.wrote(message.phone_number_id, customer, now)
        self.stats.customer_messages += 1
        body = build_envelope(message.phone_number_id, self.config.display_phone_number, messages=[inbound])
        status = await self._post_webhook(body, self._customer_lane)
        delivered = 200 <= status < 300
        if delivered:
            self.stats.customer_messages_delivered += 1
        return CustomerMessageResult(message_id=inbound.message_id, delivered_to_service=delivered,
                                     service_status=status, media_id=media_id)

    # -- media ------------------------------------------------------------------------------------------------

    def media_location(self, media_id: str, authorization: str | None) -> MediaLocation | Refusal:
        """`GET /{media-id}`: where the file is (on this simulator), its type and size. A path that names no media
        is an unknown path, as any other is."""
        location = self.media.location(media_id, self.url or "")
        if location is None or self.url is None:
            return unknown_path(f"/{media_id}")
        if not self._authorized(authorization):
            return invalid_token()
        return location

    def media_file(self, media_id: str, authorization: str | None) -> StoredMedia | Refusal:
        """The file at a media location; it needs the access token, as the platform's does."""
        if not self._authorized(authorization):
            return invalid_token()
        media = self.media.get(media_id)
        if media is None:
            return unknown_path(f"/simulator/media/{media_id}")
        self.stats.media_downloads += 1
        return media

    def _authorized(self, authorization: str | None) -> bool:
        return authorization is not None and secrets.compare_digest(
            authorization.encode(), f"Bearer {self.config.access_token}".encode())

    def set_read_receipts(self, phone: str, enabled: bool) -> str:
        """The customer's read-receipt setting; answers the normalised phone. Raises InvalidCustomerMessage."""
        customer = wa_id(phone)
        if customer is None:
            raise InvalidCustomerMessage(f"{phone!r} is not a phone number")
        self.customers.set_read_receipts(customer, enabled)
        return customer

    def sent_messages(self, phone_number_id: str, to: str | None = None) -> list[SentRecord]:
        return self.sent_log.sent(phone_number_id, (wa_id(to) or to) if to else None)

    def statistics(self) -> SimulatorStats:
        self.stats.statuses_queued = len(self._queues)
        return self.stats

