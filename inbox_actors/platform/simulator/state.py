"""What the simulator remembers, every piece of it bounded.

Customers (their last message per business number, their read-receipt and reading settings), per-number throughput
windows and per-number sent history live in least-recently-used maps of fixed capacity, and each number's
history keeps only its newest messages: a simulator left running under load holds a fixed amount of memory.
Forgetting a customer's last message closes their 24-hour window, as if they had not written.

Statuses on their way out are held in two places: the `StatusSchedule` (one entry per message, its next status
and when it is due; the simulator caps how many messages it holds) and the `StatusQueues` (statuses that are
due, waiting for their business number's next webhook; at most `per_number` each).
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import OrderedDict, deque
from collections.abc import Container, Hashable
from datetime import datetime
from typing import Generic, TypeVar

import msgspec

from inbox_actors.domain.rate_window import SlidingWindow
from inbox_actors.platform.payloads import InteractiveList, SendRequest, StatusUpdate
from inbox_actors.platform.simulator.media import StoredMedia
from inbox_actors.platform.simulator.rules import PlannedStatus

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

THROUGHPUT_WINDOW_SECONDS = 1.0


class LruMap(Generic[K, V]):
    """A dict of at most `capacity` entries; adding one more forgets the least recently used."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)

    def items(self) -> list[tuple[K, V]]:
        """Every entry, least recently used first (reading them uses none)."""
        return list(self._items.items())


class Customers:
    """The simulated customers: when each last wrote to each business number, their read receipts, and whether
    they read each message as it arrives."""

    def __init__(self, capacity: int) -> None:
        self._last_inbound: LruMap[tuple[str, str], datetime] = LruMap(capacity)
        self._read_receipts: LruMap[str, bool] = LruMap(capacity)
        self._auto_read: LruMap[str, bool] = LruMap(capacity)

    def wrote(self, phone_number_id: str, phone: str, at: datetime) -> None:
        self._last_inbound.put((phone_number_id, phone), at)

    def last_inbound(self, phone_number_id: str, phone: str) -> datetime | None:
        return self._last_inbound.get((phone_number_id, phone))

    def set_read_receipts(self, phone: str, enabled: bool) -> None:
        self._read_receipts.put(phone, enabled)

    def read_receipts(self, phone: str) -> bool | None:
        """The customer's own setting, or None when they never changed the default."""
        return self._read_receipts.get(phone)

    def set_auto_read(self, phone: str, enabled: bool) -> None:
        self._auto_read.put(phone, enabled)

    def auto_read(self, phone: str) -> bool:
        """Whether the customer reads each message as it arrives (by default), or only when told to."""
        setting = self._auto_read.get(phone)
        return True if setting is None else setting


class Throughput:
    """Sends per business number in any one second (exact sliding window, as the key limits use), counted when
    each arrived. Sends handled a little out of arrival order only ever make it stricter: an earlier arrival
    counted after a later one leaves the window with it."""

    def __init__(self, per_second: int, capacity: int) -> None:
        self.per_second = per_second
        self._windows: LruMap[str, SlidingWindow] = LruMap(capacity)

    def admit(self, phone_number_id: str, now: float) -> bool:
        window = self._windows.get(phone_number_id)
        if window is None:
            window = SlidingWindow(self.per_second, THROUGHPUT_WINDOW_SECONDS)
            self._windows.put(phone_number_id, window)
        return window.admit(now).allowed


class StatusEvent(msgspec.Struct, frozen=True):
    status: str
    at: datetime


class SentRecord(msgspec.Struct):
    """One accepted send as the simulator keeps it; `status` follows the statuses it has posted."""

    message_id: str
    phone_number_id: str
    to: str
    type: str
    accepted_at: datetime
    text: str | None = None                  # text body, media caption, or an interactive list's body
    media_url: str | None = None             # media sent by link
    filename: str | None = None
    # Media sent by an uploaded id: the id, and the file the customer got (its type, size and SHA-256).
    media_id: str | None = None
    mime_type: str | None = None
    file_size: int | None = None
    sha256: str | None = None
    template_name: str | None = None
    template_language: str | None = None
    template_parameters: tuple[str, ...] = ()
    callback_data: str | None = None         # the send's biz_opaque_callback_data, echoed on its statuses
    interactive: InteractiveList | None = None   # the list the customer may choose a row of
    status: str = "accepted"
    statuses: list[StatusEvent] = msgspec.field(default_factory=list)

    @classmethod
    def of(cls, message_id: str, phone_number_id: str, recipient: str, request: SendRequest,
           accepted_at: datetime, media: StoredMedia | None = None) -> SentRecord:
        text = request.interactive.body if request.interactive is not None else request.text
        return cls(message_id=message_id, phone_number_id=phone_number_id, to=recipient, type=request.type,
                   accepted_at=accepted_at, text=text, media_url=request.media_url,
                   filename=request.filename, media_id=request.media_id,
                   mime_type=media.mime_type if media else None, file_size=len(media.content) if media else None,
                   sha256=media.sha256 if media else None, template_name=request.template_name,
                   template_language=request.template_language, template_parameters=request.template_parameters,
                   callback_data=request.callback_data, interactive=request.interactive)

    def record_status(self, status: str, at: datetime) -> None:
        self.status = status
        self.statuses.append(StatusEvent(status=status, at=at))


class SentLog:
    """The newest `per_number` accepted sends of each of the `numbers` most recently used business numbers."""

    def __init__(self, per_number: int, numbers: int) -> None:
        self.per_number = per_number
        self._by_number: LruMap[str, deque[SentRecord]] = LruMap(numbers)

    def add(self, record: SentRecord) -> None:
        log = self._by_number.get(record.phone_number_id)
        if log is None:
            log = deque(maxlen=self.per_number)
            self._by_number.put(record.phone_number_id, log)
        log.append(record)

    def sent(self, phone_number_id: str, to: str | None = None) -> list[SentRecord]:
        """Oldest first; only those to `to` when given."""
        log = self._by_number.get(phone_number_id) or ()
        return [record for record in log if to is None or record.to == to]

    def to_customer(self, to: str, phone_number_id: str | None = None) -> list[SentRecord]:
        """What was sent to `to`, from one business number or from any, each number's oldest first."""
        if phone_number_id is not None:
            return self.sent(phone_number_id, to)
        return [record for _, log in self._by_number.items() for record in log if record.to == to]


class Timeline(msgspec.Struct):
    """An accepted message's statuses on their way: `plan[step:]` still to come, each due `after` seconds past
    `accepted` (trio time), and `unsettled` of those come due still queued or in an envelope not yet answered."""

    record: SentRecord
    plan: tuple[PlannedStatus, ...]
    accepted: float
    step: int = 0
    unsettled: int = 0

    def next_due(self) -> float:
        return self.accepted + self.plan[self.step].after

    def advance(self) -> PlannedStatus:
        """The status now due."""
        planned = self.plan[self.step]
        self.step += 1
        return planned

    @property
    def over(self) -> bool:
        """Every status has come due and been posted or dropped."""
        return self.step == len(self.plan) and not self.unsettled


class StatusSchedule:
    """Messages waiting for their next status, earliest due first (a heap; ties in order of arrival).

    A message is in it at most once: its next status is scheduled only when the one before has come due, so a
    message's statuses come due in plan order whatever the delays.
    """

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Timeline]] = []
        self._arrivals = itertools.count()

    def push(self, timeline: Timeline) -> float:
        """Schedules `timeline`'s next status; answers when it is due."""
        due = timeline.next_due()
        heapq.heappush(self._heap, (due, next(self._arrivals), timeline))
        return due

    def next_due(self) -> float:
        """When the earliest status is due; infinity when nothing is scheduled."""
        return self._heap[0][0] if self._heap else math.inf

    def pop_due(self, now: float) -> Timeline | None:
        """The earliest message whose next status is due at `now`, or None."""
        if self._heap and self._heap[0][0] <= now:
            return heapq.heappop(self._heap)[2]
        return None

    def __len__(self) -> int:
        return len(self._heap)


class QueuedStatus(msgspec.Struct, frozen=True):
    update: StatusUpdate
    timeline: Timeline                       # the message's, told when this status is posted or dropped


class StatusQueues:
    """Due statuses per business number, oldest first, at most `per_number` each; a number with none is forgotten."""

    def __init__(self, per_number: int) -> None:
        if per_number < 1:
            raise ValueError("per_number must be at least 1")
        self.per_number = per_number
        self._by_number: dict[str, deque[QueuedStatus]] = {}
        self._count = 0

    def put(self, phone_number_id: str, status: QueuedStatus) -> bool:
        """Queues `status`; False (and nothing queued) when the number's queue is full."""
        queue = self._by_number.setdefault(phone_number_id, deque())
        if len(queue) >= self.per_number:
            return False
        queue.append(status)
        self._count += 1
        return True

    def take(self, phone_number_id: str, limit: int, held: Container[str] = ()) -> list[QueuedStatus]:
        """Removes and answers the number's oldest statuses, at most `limit`, passing over those of the messages
        in `held` (they keep their places, so each message's statuses still leave in order)."""
        queue = self._by_number.get(phone_number_id)
        if not queue:
            return []
        taken: list[QueuedStatus] = []
        passed: list[QueuedStatus] = []
        while queue and len(taken) < limit:
            status = queue.popleft()
            (passed if status.update.message_id in held else taken).append(status)
        queue.extendleft(reversed(passed))
        if not queue:
            del self._by_number[phone_number_id]
        self._count -= len(taken)
        return taken

    def waiting(self, phone_number_id: str) -> int:
        queue = self._by_number.get(phone_number_id)
        return len(queue) if queue else 0

    def __len__(self) -> int:
        return self._count


class SimulatorStats(msgspec.Struct):
    """Counters, read at `GET /simulator/stats`."""

    sends_accepted: int = 0
    sends_refused: dict[str, int] = msgspec.field(default_factory=dict)   # by error code
    customer_messages: int = 0
    customer_messages_delivered: int = 0     # the service answered 2xx
    webhooks_posted: int = 0                 # POSTs answered 2xx (customer messages and status envelopes)
    webhooks_failed: int = 0                 # attempts that got no 2xx (each retry counts)
    webhooks_dropped: int = 0                # statuses given up after the last retry, or with no webhook URL
    statuses_posted: int = 0                 # statuses in envelopes answered 2xx
    statuses_queued: int = 0                 # statuses due and waiting for their number's next envelope (now)
    status_queue_dropped: int = 0            # statuses due while their number's queue was full: never posted
    status_timelines_running: int = 0        # accepted messages whose statuses are not all posted or dropped
    status_timelines_dropped: int = 0        # accepted while too many were running: no statuses will come
    media_downloads: int = 0                 # media files the service downloaded
    media_uploads: int = 0                   # files the service uploaded (POST /{phone_number_id}/media)
    uploads_refused: dict[str, int] = msgspec.field(default_factory=dict)  # by error code
    read_statuses_requested: int = 0         # read statuses of customers told to read (POST .../read)

    def refused(self, code: int) -> None:
        key = str(code)
        self.sends_refused[key] = self.sends_refused.get(key, 0) + 1
