"""Latency figures as the scripts print them: one definition of a percentile (nearest rank, in milliseconds), so
that the p99 of one script's report means what it means in another's."""

from __future__ import annotations

import math
from typing import Any


def percentiles(seconds: list[float]) -> dict[str, Any]:
    """Nearest-rank p50/p90/p99, max and mean, in milliseconds."""
    if not seconds:
        return {"count": 0, "p50": None, "p90": None, "p99": None, "max": None, "mean": None}
    ordered = sorted(seconds)

    def rank(fraction: float) -> float:
        return round(ordered[max(0, math.ceil(len(ordered) * fraction) - 1)] * 1e3, 2)

    return {"count": len(ordered), "p50": rank(0.50), "p90": rank(0.90), "p99": rank(0.99),
            "max": round(ordered[-1] * 1e3, 2), "mean": round(sum(ordered) / len(ordered) * 1e3, 2)}
