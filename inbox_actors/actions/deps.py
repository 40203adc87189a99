"""What every action runs with: the database, the actors and the clock of the service it runs in."""

from __future__ import annotations

from dataclasses import dataclass

from inbox_actors.runtime.actor import Directory
from inbox_actors.runtime.clock import Clock
from persistence.database import Database


@dataclass(frozen=True)
class ActionDeps:
    db: Database
    actors: Directory
    clock: Clock
