"""Answers a node keeps for a short while instead of asking PostgreSQL each time: which node holds a workspace
(cluster/placement.py), which workspace a session or a token belongs to (inbox_http/cluster/routing.py)."""

from __future__ import annotations

from typing import Generic, TypeVar

import trio

K = TypeVar("K")
V = TypeVar("V")


class ExpiringCache(Generic[K, V]):
    """Each answer for `seconds` (trio's clock), at most `capacity` of them: when full, the expired ones go, and if
    none has, all of them (a burst of new keys costs look-ups again, never memory)."""

    def __init__(self, seconds: float, capacity: int) -> None:
        self.seconds, self.capacity = seconds, capacity
        self._answers: dict[K, tuple[V, float]] = {}

    def recall(self, key: K) -> tuple[V] | None:
        """The answer, in a 1-tuple (it may be None), while it is fresh; None otherwise."""
        known = self._answers.get(key)
        if known is None or trio.current_time() >= known[1]:
            return None
        return (known[0],)

    def keep(self, key: K, answer: V) -> None:
        now = trio.current_time()
        if len(self._answers) >= self.capacity:
            self._answers = {k: a for k, a in self._answers.items() if a[1] > now}
            if len(self._answers) >= self.capacity:
                self._answers.clear()
        self._answers[key] = (answer, now + self.seconds)

    def forget(self, key: K) -> None:
        self._answers.pop(key, None)
