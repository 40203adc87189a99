"""How an answer names a team: its id and name."""

from __future__ import annotations

import msgspec


class TeamRef(msgspec.Struct, frozen=True):
    id: int
    name: str
