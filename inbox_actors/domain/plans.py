"""Plans and what they allow (the spec's plan table)."""

from __future__ import annotations

import enum


class Plan(str, enum.Enum):
    STARTER = "starter"
    GROWTH = "growth"
    SCALE = "scale"

    @property
    def api_tier(self) -> "ApiTier":
        return _TIER_OF_PLAN[self]


class ApiTier(str, enum.Enum):
    """What a key of a plan may call: nothing, the core API, or every call."""

    NONE = "none"
    CORE = "core"
    FULL = "full"

    def allows(self, route_tier: "ApiTier") -> bool:
        return _TIER_RANK[self] >= _TIER_RANK[route_tier]


_TIER_OF_PLAN = {Plan.STARTER: ApiTier.NONE, Plan.GROWTH: ApiTier.CORE, Plan.SCALE: ApiTier.FULL}
_TIER_RANK = {ApiTier.NONE: 0, ApiTier.CORE: 1, ApiTier.FULL: 2}
