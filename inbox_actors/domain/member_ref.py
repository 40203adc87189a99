"""The spec's MemberRef: a team member as answers name them (keys' creators, chats' assignees)."""

from __future__ import annotations

import msgspec


class MemberRef(msgspec.Struct, frozen=True):
    user_id: int
    name: str | None
