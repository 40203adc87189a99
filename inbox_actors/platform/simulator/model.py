"""The simulated WhatsApp Cloud API: what it does with sends and customers' messages, and the webhooks it posts.

`app` is its HTTP face and `server` puts the two on a socket; neither is imported here. It answers
`POST /{phone_number_id}/messages` as the platform does (Meta's success and error bodies, the rules in
`rules`), then posts the statuses of each accepted message to `webhook_url` after the configured delays,
signed with the app secret, each carrying the send's `biz_opaque_callback_data` as Meta echoes it. Simulated
customers write through `POST /simulator/customers/{phone}/messages` (see `app` for the control routes), or choose a
row of an interactive list they were sent (`customer_chooses`), either of which opens their 24-hour window, and read
what they were sent as it arrives or when told to (`customer_reads`). Its media endpoints (uploads, where a file is,
the file) are `media_desk`'s. Time for the window comes from a `Clock`, so tests can move it; the status delays are
trio time.

Statuses go out batched, as Meta sends them (`status_posting`). Webhook posts go through two lanes, statuses and
customer messages, each with its own connections and at most its concurrency in flight (a `trio.CapacityLimiter`
the size of httpx's pool): httpx never keeps a waiting list, `webhook_timeout` times the service and not the queue,
and statuses cannot starve customers.

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

from inbox_actors.platform import media_types
from inbox_actors.platform.cloud_api import InvalidSendRequest, decode_send_request
from inbox_actors.platform.payloads import INTERACTIVE, InboundMessage, InteractiveList, ListRow
from inbox_actors.platform.simulator.customers import (
    CUSTOMER_MESSAGE_TYPES,
    CustomerChoice,
    CustomerMessage,
    CustomerMessageResult,
    InvalidCustomerMessage,
)
from inbox_actors.platform.simulator.media import InvalidMedia, MediaShelf
from inbox_actors.platform.simulator.media_desk import MediaDesk
from inbox_actors.platform.simulator.rules import (
    Refusal,
    StatusDelays,
    default_read_receipts,
    invalid_parameter,
    invalid_token,
    planned_statuses,
    refusal_for,
    throughput_exceeded,
    unknown_media_id,
    wa_id,
)
from inbox_actors.platform.simulator.state import Customers, SentLog, SentRecord, SimulatorStats, Throughput
from inbox_actors.platform.simulator.status_posting import StatusPoster
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


class CustomerRead(msgspec.Struct, frozen=True):
    """What `POST /simulator/customers/{phone}/read` did: the read statuses on their way (none with read receipts
    off: the customer read, and the business is not told)."""

    phone: str
    read_statuses: int
    read_receipts: bool


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
        self.media_desk = MediaDesk(self.media, self.stats, self._authorized, lambda: self.url)
        self._customer_lane: WebhookLane | None = None
        self._statuses = StatusPoster(config, self.stats, self.clock, self._post_webhook, lambda: self.webhook_url)

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
            self._customer_lane = customer_lane
            self._statuses.start_posting(status_lane, timelines)
            try:
                yield self
            finally:
                # The server has returned (or is cancelled): statuses still to come are not waited for.
                self._customer_lane = None
                self._statuses.stop()
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
        media = None if request.media_id is None else self.media.get(request.media_id)
        if request.media_id is not None and media is None:
            return unknown_media_id(request.type)
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
        record = SentRecord.of(new_message_id(), phone_number_id, recipient, request, now, media)
        self.sent_log.add(record)
        # Media its message kind cannot carry (a PDF as an image) fails after acceptance, as Meta's does.
        self._schedule_statuses(record, media_fails=media is not None and not media_types.fits(request.type,
                                                                                               media.mime_type))
        return SendAcceptedBySimulator(message_id=record.message_id, recipient_input=request.to, wa_id=recipient)

    def read_receipts(self, phone: str) -> bool:
        setting = self.customers.read_receipts(phone)
        return default_read_receipts(phone) if setting is None else setting

    def _schedule_statuses(self, record: SentRecord, *, media_fails: bool = False) -> None:
        reads = self.read_receipts(record.to) and self.customers.auto_read(record.to)
        self._statuses.start(record, planned_statuses(record.to, read_receipts=reads, delays=self.config.delays,
                                                      media_fails=media_fails))

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
        customer = _customer(phone)
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
        return await self._customer_posts(message.phone_number_id, inbound)

    async def customer_chooses(self, phone: str, choice: CustomerChoice) -> CustomerMessageResult:
        """A simulated customer picks a row of an interactive list that business number sent them (the message
        named, or the newest): posted as Meta posts a list reply, replying to that message, and otherwise a message
        the customer wrote (window opened, counted, posted once). Raises InvalidCustomerMessage."""
        customer = _customer(phone)
        if not choice.phone_number_id:
            raise InvalidCustomerMessage("phone_number_id is required")
        record, listed = self._list_sent(choice.phone_number_id, customer, choice.message_id)
        row = _row_chosen(listed, choice.choice)
        inbound = InboundMessage(message_id=new_message_id(), from_phone=customer, at=self.clock.now(),
                                 type=INTERACTIVE, text=row.title, reply_id=row.id, context_id=record.message_id)
        return await self._customer_posts(choice.phone_number_id, inbound)

    def _list_sent(self, phone_number_id: str, customer: str,
                   message_id: str | None) -> tuple[SentRecord, InteractiveList]:
        """The interactive message `phone_number_id` sent `customer`, and its list: the one `message_id` names, or
        the newest. Raises InvalidCustomerMessage."""
        sent = self.sent_log.sent(phone_number_id, customer)
        if message_id is None:
            lists = [(record, record.interactive) for record in sent if record.interactive is not None]
            if not lists:
                raise InvalidCustomerMessage(f"{phone_number_id} has sent {customer} no interactive message")
            return lists[-1]
        named = next((record for record in sent if record.message_id == message_id), None)
        if named is None:
            raise InvalidCustomerMessage(f"{phone_number_id} has sent {customer} no message {message_id}")
        if named.interactive is None:
            raise InvalidCustomerMessage(f"message {message_id} is a {named.type} message, not an interactive one")
        return named, named.interactive

    async def _customer_posts(self, phone_number_id: str, inbound: InboundMessage) -> CustomerMessageResult:
        """Posts what the customer did once, as Meta's webhook; the window opens whether or not the service took
        it (the customer did write)."""
        self.customers.wrote(phone_number_id, inbound.from_phone, inbound.at)
        self.stats.customer_messages += 1
        body = build_envelope(phone_number_id, self.config.display_phone_number, messages=[inbound])
        status = await self._post_webhook(body, self._customer_lane)
        delivered = 200 <= status < 300
        if delivered:
            self.stats.customer_messages_delivered += 1
        return CustomerMessageResult(message_id=inbound.message_id, delivered_to_service=delivered,
                                     service_status=status, media_id=inbound.media_id)

    def _authorized(self, authorization: str | None) -> bool:
        return authorization is not None and secrets.compare_digest(
            authorization.encode(), f"Bearer {self.config.access_token}".encode())

    def set_customer(self, phone: str, *, read_receipts: bool | None = None,
                     auto_read: bool | None = None) -> str:
        """The customer's settings that are given; answers the normalised phone. Raises InvalidCustomerMessage."""
        customer = _customer(phone)
        if read_receipts is not None:
            self.customers.set_read_receipts(customer, read_receipts)
        if auto_read is not None:
            self.customers.set_auto_read(customer, auto_read)
        return customer

    def customer_reads(self, phone: str, phone_number_id: str | None = None) -> CustomerRead:
        """The customer opens the chat (with one business number, or with each): every message sent to them that is
        not read or failed yet is read, its `read` status posted after the statuses still before it, signed and
        batched as any. Raises InvalidCustomerMessage."""
        customer = _customer(phone)
        receipts = self.read_receipts(customer)
        # With read receipts off the customer reads, and the business is not told.
        read_statuses = sum(self._statuses.read(record) for record in self.sent_log.to_customer(
            customer, phone_number_id)) if receipts else 0
        self.stats.read_statuses_requested += read_statuses
        return CustomerRead(phone=customer, read_statuses=read_statuses, read_receipts=receipts)

    def sent_messages(self, phone_number_id: str, to: str | None = None) -> list[SentRecord]:
        return self.sent_log.sent(phone_number_id, (wa_id(to) or to) if to else None)

    def statistics(self) -> SimulatorStats:
        self.stats.statuses_queued = self._statuses.queued()
        return self.stats


def _row_chosen(listed: InteractiveList, choice: str) -> ListRow:
    """The row `choice` names: by its id, else by its title whatever the case. Raises InvalidCustomerMessage."""
    title = choice.casefold()
    chosen = next((row for row in listed.rows if row.id == choice), None) or next(
        (row for row in listed.rows if row.title.casefold() == title), None)
    if chosen is None:
        ids = ", ".join(row.id for row in listed.rows)
        raise InvalidCustomerMessage(f"{choice!r} is not a row of that list: choose one of its ids ({ids}) or titles")
    return chosen


def _customer(phone: str) -> str:
    customer = wa_id(phone)
    if customer is None:
        raise InvalidCustomerMessage(f"{phone!r} is not a phone number")
    return customer
