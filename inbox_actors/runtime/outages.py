"""Telling a shared dependency's outage from an actor's fault.

The runtime knows no database. The system is told at configuration which exceptions mean "a dependency every actor
shares is out" (the service names its database's), and a crash so caused is no fault of the actor's kind: it
counts toward neither the actor's restart intensity nor its kind's circuit (supervision.py). Whatever else the
actor raises counts as before, so a genuine crash loop still escalates.
"""

from __future__ import annotations


class Outages:
    """The exception types that mean a shared dependency is out (none: every crash is the actor's)."""

    __slots__ = ("types",)

    def __init__(self, types: tuple[type[BaseException], ...] = ()) -> None:
        self.types = types

    def caused(self, exc: BaseException) -> bool:
        return bool(self.types) and caused_by(exc, self.types)


def caused_by(exc: BaseException, types: tuple[type[BaseException], ...]) -> bool:
    """Whether `exc` is one of `types`, was raised from one (`raise ... from`, as the runtime's own errors chain the
    crash behind them), or is a group (a nursery's) all of whose exceptions are. An exception merely raised while
    handling one (`__context__`) is not: a bug in an `except` block is still a bug."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, types):
            return True
        if isinstance(current, BaseExceptionGroup):
            return all(caused_by(member, types) for member in current.exceptions)
        seen.add(id(current))
        current = current.__cause__
    return False
