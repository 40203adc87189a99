"""Building one parameterised SELECT from optional filters, without string-pasting any value."""

from __future__ import annotations


class Statement:
    """Collects `$n` parameters and WHERE conditions in order."""

    def __init__(self) -> None:
        self.args: list[object] = []
        self.conditions: list[str] = []

    def arg(self, value: object) -> str:
        self.args.append(value)
        return f"${len(self.args)}"

    def where(self, condition: str) -> None:
        self.conditions.append(condition)

    def clause(self) -> str:
        return " AND ".join(self.conditions) if self.conditions else "true"


def contains_pattern(text: str) -> str:
    """A LIKE pattern matching `text` anywhere, its own % _ and \\ taken literally."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def phone_digits(text: str) -> str | None:
    """The digits of a search that looks like (part of) a phone number: digits, spaces, + and dashes."""
    stripped = text.replace(" ", "").replace("-", "").lstrip("+")
    return stripped if stripped.isascii() and stripped.isdigit() else None
