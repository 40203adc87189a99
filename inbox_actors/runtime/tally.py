"""Counters kept as actors live, so reading them never visits the actors themselves.

`KindTally` is one kind's running counts: its cells and mailboxes update it as things happen (an activation, a
message queued or taken, a restart, an escalation), and `ActorSystem.summary()` and `kind_counters()` read it in
time that does not grow with the number of live actors. `Leaderboard` is the bounded candidate set the busiest
actors are read from.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

from .statistics import KindCounters

T = TypeVar("T", bound=Hashable)


class KindTally:
    """One kind's counts. `live`, `failed` and the mailbox figures are levels (now); the others only grow."""

    __slots__ = ("name", "board", "live", "failed", "activated", "passivated", "restarted", "failed_total",
                 "messages_handled", "mailbox_used", "_depths", "_deepest")

    def __init__(self, name: str, capacity: int, board: Leaderboard | None = None) -> None:
        self.name = name
        self.board = board if board is not None else Leaderboard(0)
        """Where the kind's cells offer themselves as candidates for the busiest (shared by every kind)."""
        self.live = 0
        """Cells in memory that have not failed: starting, running, restarting, or leaving (on_stop)."""
        self.failed = 0
        """Cells that escalated and still refuse work (within their cooldown)."""
        self.activated = 0
        self.passivated = 0
        self.restarted = 0
        self.failed_total = 0
        self.messages_handled = 0
        self.mailbox_used = 0
        # How many of the kind's mailboxes hold exactly d envelopes, for d in 1..capacity: the deepest mailbox
        # without visiting them. _deepest is an upper bound, lowered lazily when read.
        self._depths = [0] * (capacity + 1)
        self._deepest = 0

    # -- what a mailbox reports ---------------------------------------------------------------------------

    def grew(self, depth: int) -> None:
        """A mailbox of the kind went from depth - 1 to `depth` envelopes."""
        self.mailbox_used += 1
        depths = self._depths
        depths[depth - 1] -= 1
        depths[depth] += 1
        if depth > self._deepest:
            self._deepest = depth

    def shrank(self, depth: int) -> None:
        """A mailbox of the kind went from depth + 1 to `depth` envelopes."""
        self.mailbox_used -= 1
        depths = self._depths
        depths[depth + 1] -= 1
        depths[depth] += 1

    def emptied(self, depth: int) -> None:
        """A mailbox of the kind holding `depth` envelopes dropped them all."""
        if depth:
            self.mailbox_used -= depth
            self._depths[depth] -= 1
            self._depths[0] += 1

    @property
    def mailbox_max(self) -> int:
        """The deepest mailbox of the kind now (amortised constant time)."""
        depths, deepest = self._depths, self._deepest
        while deepest > 0 and depths[deepest] <= 0:
            deepest -= 1
        self._deepest = deepest
        return deepest

    def snapshot(self) -> KindCounters:
        return KindCounters(
            live=self.live, failed=self.failed, activated_total=self.activated, passivated_total=self.passivated,
            restarted_total=self.restarted, failed_total=self.failed_total,
            messages_handled_total=self.messages_handled, mailbox_used=self.mailbox_used,
            mailbox_max=self.mailbox_max)


class Leaderboard(Generic[T]):
    """The (at most) `capacity` items with the highest score as of their last `offer`: a min-heap with lazy
    deletion, so an offer costs a dict lookup and, when the item enters or its score changes, O(log capacity).

    It is a candidate set, refreshed incrementally, not a ranking of everything: an item is ranked by the score
    it was last offered with, so an actor appears once it is offered (a message queued or handled) with a score
    above the weakest member's, and one that left (`discard`) makes room for the next item offered. Read the
    current order with `top`, which re-scores the members only.
    """

    __slots__ = ("capacity", "_members", "_heap", "_seq")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._members: dict[T, list] = {}
        # Entries [score, sequence, item]; item None marks an entry superseded or discarded.
        self._heap: list[list] = []
        self._seq = 0

    def __len__(self) -> int:
        return len(self._members)

    def __contains__(self, item: object) -> bool:
        return item in self._members

    def offer(self, item: T, score: int) -> None:
        members = self._members
        entry = members.get(item)
        if entry is not None:
            if entry[0] != score:
                entry[2] = None
                self._push(item, score)
            return
        if len(members) < self.capacity:
            self._push(item, score)
            return
        if not members:
            return  # capacity 0: a board that keeps nothing
        heap = self._heap
        while heap[0][2] is None:
            heapq.heappop(heap)
        if score <= heap[0][0]:
            return
        weakest = heapq.heappop(heap)[2]
        del members[weakest]
        self._push(item, score)

    def discard(self, item: T) -> None:
        entry = self._members.pop(item, None)
        if entry is not None:
            entry[2] = None

    def top(self, n: int, score: Callable[[T], object], keep: Callable[[T], bool] = lambda _: True) -> list[T]:
        """Up to `n` members that `keep` accepts, highest `score` (read now) first."""
        return heapq.nlargest(n, (item for item in self._members if keep(item)), key=score)

    def members(self) -> Iterable[T]:
        return self._members.keys()

    def _push(self, item: T, score: int) -> None:
        self._seq += 1
        entry = [score, self._seq, item]
        heapq.heappush(self._heap, entry)
        self._members[item] = entry
        if len(self._heap) > 4 * self.capacity + 16:
            # Superseded entries outnumber the live ones: rebuild from the members.
            self._heap = [e for e in self._heap if e[2] is not None]
            heapq.heapify(self._heap)
