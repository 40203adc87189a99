"""Who takes a waiting chat: the rule of automatic assignment, on what one round read
(docs/team.md#automatic-assignment).

A chat routed to a team goes to one of that team's members, a chat with no team to any member who works chats; only
to a member who is online and holds fewer open chats than the workspace's capacity. Round robin gives it to the one
given a chat automatically longest ago (never before: first, oldest member first); least busy to the one holding the
fewest open chats, and among those the same order as round robin. A round gives chats one by one and counts each gift
before the next choice, so nobody is taken past the capacity by the round itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Literal

Mode = Literal["off", "round_robin", "least_busy"]
MODES: tuple[Mode, ...] = ("off", "round_robin", "least_busy")
DEFAULT_CAPACITY = 10
MIN_CAPACITY, MAX_CAPACITY = 1, 1000
_NEVER = datetime.min.replace(tzinfo=timezone.utc)


@dataclass
class Taker:
    """A member who could take chats, as one round saw them."""

    member_id: int
    open_chats: int
    last_given_at: datetime | None
    teams: frozenset[int] = field(default_factory=frozenset)
    given_this_round: int = 0
    """The order of the round's last gift to them (0: none yet): gifts of this round come after every earlier one."""


class Round:
    """One round's choices over the members online now."""

    def __init__(self, mode: Mode, capacity: int, takers: list[Taker]) -> None:
        self.mode, self.capacity, self.takers = mode, capacity, takers
        self._gifts = 0

    def choose(self, team_id: int | None) -> Taker | None:
        """Who takes a chat of `team_id` (None: no team), or nobody free."""
        free = [t for t in self.takers if t.open_chats < self.capacity and (team_id is None or team_id in t.teams)]
        if not free:
            return None
        if self.mode == "least_busy":
            return min(free, key=lambda t: (t.open_chats, *_turn(t)))
        return min(free, key=_turn)

    def given(self, taker: Taker) -> None:
        """`taker` took the chat chosen for them."""
        self._gifts += 1
        taker.open_chats += 1
        taker.given_this_round = self._gifts

    def taken_back(self, taker: Taker) -> None:
        """The chat counted to `taker` was not given (it was taken meanwhile, or could not be asked)."""
        taker.open_chats -= 1


def _turn(taker: Taker) -> tuple[int, datetime, int]:
    return taker.given_this_round, taker.last_given_at or _NEVER, taker.member_id
