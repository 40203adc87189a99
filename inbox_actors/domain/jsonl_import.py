"""What every JSON-lines import (`inbox-actors import …`) shares: lines numbered as an editor numbers them, blank
ones passed over; a line decoded into its struct or the reason it is not one; a skipped line as its number and
why; the first reasons for the report; the workspace that does not exist. No I/O: each import reads and writes
its own rows."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

import msgspec

MAX_REASONS_SHOWN = 20

T = TypeVar("T")


class Skipped(msgspec.Struct, frozen=True):
    line: int
    reason: str


class UnknownWorkspace(LookupError):
    def __init__(self, workspace_id: int) -> None:
        super().__init__(f"no workspace {workspace_id}")


def numbered_lines(lines: Iterable[bytes]) -> list[tuple[int, bytes]]:
    """The lines that are not blank, each with its number in the file (from 1; blank lines keep their numbers)."""
    return [(number, raw) for number, raw in enumerate(lines, start=1) if raw.strip()]


def decode_line(raw: bytes, entry_type: type[T], what: str) -> T | str:
    """The line as `entry_type`, or why it is not one ("not <what>: <the decoder's reason>")."""
    try:
        return msgspec.json.decode(raw, type=entry_type)
    except (msgspec.ValidationError, msgspec.DecodeError) as err:
        return f"not {what}: {err}"


def first_skipped(skipped: Iterable[Skipped]) -> list[Skipped]:
    """The report's sample of skipped lines: the first MAX_REASONS_SHOWN, in the file's order."""
    return sorted(skipped, key=lambda s: s.line)[:MAX_REASONS_SHOWN]
