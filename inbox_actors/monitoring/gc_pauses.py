"""Garbage collection as a serving process sees it: each collection's pause timed by generation, and the objects
of start-up frozen out of every later collection.

A full collection walks every object the process holds and stops everything meanwhile; on a service with tens of
thousands of live chats that is the slowest thing a request can meet (the soak's 400-800 ms answers, all kinds at
once, were such pauses). Two things keep it small:
- `freeze_start_up()`: once the service is built and before it serves, the objects of start-up (modules, classes,
  the routes, the migrations' and templates' data) go to the permanent generation (`gc.freeze()`), which no
  collection walks again;
- `GcPauses` times every collection (`gc.callbacks`) into `inbox_gc_pause_seconds{generation}` on /metrics, so a
  pause shows as what it is rather than as slow requests of every kind.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from inbox_actors.monitoring.metrics import ServiceMetrics


def freeze_start_up() -> int:
    """Collect what start-up left as garbage, then freeze every object still alive; how many were frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


class GcPauses:
    """While installed, every collection's time goes to `metrics` (`with GcPauses(metrics): ...`)."""

    def __init__(self, metrics: ServiceMetrics) -> None:
        self._metrics = metrics
        self._started = 0.0

    def __enter__(self) -> "GcPauses":
        gc.callbacks.append(self._observe)
        return self

    def __exit__(self, *exc_info: object) -> None:
        gc.callbacks.remove(self._observe)

    def _observe(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self._metrics.gc_paused(info["generation"], time.perf_counter() - self._started)
