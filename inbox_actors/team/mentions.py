"""Mentions of team members in an internal note: how a note names a member, found in its text against the
workspace's active members when the note is written. No I/O: the note's use case reads the members and stores
what this finds (`persistence/queries/note_mentions.py`).

A note names a member in either of two ways:

- `@[Display Name](member:ID)`: the member with that id (the display name is only what the writer saw; the page
  shows the member's own name). The agent inbox's picker inserts this form when the plain one would not name
  that member alone.
- `@Name` or `@email`: the active member whose name or email it is, whatever its case, the longest that the text
  goes on with (`@Asha Rao` names Asha Rao rather than an Asha, when both are members). It must stand as a word:
  after the start of the text or a character that is not a letter, digit, `_` or `@` (so an address in the text,
  `asha@example.com`, names nobody), and followed by the end of the text or a character that is none of those
  either, nor a `.` or `-` that a letter or digit follows (`@Al.` names Al, `@Al.Smith` does not). A name that
  two active members share names neither of them.

Anything else stays plain text: an id that is no active member of the workspace, a name nobody has. A member
named twice in a note is mentioned once, with both places.
"""

from __future__ import annotations

import re

import msgspec

# The explicit form; its display name is at most a member name's 200 characters, without brackets or line breaks.
EXPLICIT = re.compile(r"@\[([^\[\]\r\n]{1,200})\]\(member:([1-9][0-9]{0,17})\)")
_SPLITS = ".-"


class Member(msgspec.Struct, frozen=True):
    """An active member a note may name."""

    member_id: int
    name: str
    email: str | None = None


class Found(msgspec.Struct, frozen=True):
    """A member a note names, and where: the [start, end) character offsets of each place, in order."""

    member_id: int
    spans: list[tuple[int, int]]


class Piece(msgspec.Struct, frozen=True):
    """A note's text in pieces, for showing it: plain text, or a mention of `member_id` (its `text` as written)."""

    text: str
    member_id: int | None = None


def _joins(character: str) -> bool:
    return character.isalnum() or character == "_" or character == "@"


def _ends_at(text: str, end: int) -> bool:
    """Whether a name that ends at `end` ends there as a word."""
    if end == len(text):
        return True
    after = text[end]
    if _joins(after):
        return False
    return not (after in _SPLITS and end + 1 < len(text) and _joins(text[end + 1]))


class Directory:
    """The workspace's active members as a note's text names them: by id, and by each name and email (lower
    case), longest first, each with the members it may name."""

    def __init__(self, members: list[Member]) -> None:
        self.by_id = {member.member_id: member for member in members}
        owners: dict[str, set[int]] = {}
        for member in members:
            for handle in (member.name, member.email):
                if handle and handle.strip():
                    owners.setdefault(handle.lower(), set()).add(member.member_id)
        self._owners = owners
        # By first character, each list longest first: a mention is the longest handle the text goes on with.
        self._starting: dict[str, list[str]] = {}
        for handle in sorted(owners, key=len, reverse=True):
            self._starting.setdefault(handle[0], []).append(handle)

    def _longest(self, text: str, start: int) -> str | None:
        if start >= len(text):
            return None
        for handle in self._starting.get(text[start].lower(), ()):
            end = start + len(handle)
            if text[start:end].lower() == handle and _ends_at(text, end):
                return handle
        return None

    def find(self, text: str) -> list[Found]:
        """The members `text` names, in the order first named, each with every place it names them."""
        places: dict[int, list[tuple[int, int]]] = {}
        at = text.find("@")
        while at != -1:
            follow = at + 1
            if at == 0 or not _joins(text[at - 1]):
                explicit = EXPLICIT.match(text, at)
                if explicit is not None:
                    follow = explicit.end()
                    if int(explicit[2]) in self.by_id:
                        places.setdefault(int(explicit[2]), []).append((at, follow))
                elif (handle := self._longest(text, at + 1)) is not None:
                    owners = self._owners[handle]
                    if len(owners) == 1:
                        follow = at + 1 + len(handle)
                        places.setdefault(next(iter(owners)), []).append((at, follow))
            at = text.find("@", follow)
        return [Found(member_id, spans) for member_id, spans in places.items()]

    def handle(self, member: Member) -> str:
        """What the picker inserts for `member` (a space follows it): `@Name` when that names them alone, whatever
        words come after it (no other handle is their name and more words), else the explicit form."""
        name = member.name.lower()
        plain = f"@{member.name}"
        alone = self._owners.get(name) == {member.member_id} and not any(
            len(other) > len(name) and other.startswith(name) and other[len(name)].isspace()
            for other in self._starting.get(name[0], ()))
        if alone and [(f.member_id, f.spans) for f in self.find(plain)] == [(member.member_id, [(0, len(plain))])]:
            return plain
        shown = " ".join(re.sub(r"[\[\]\r\n]", " ", member.name).split()) or "member"
        return f"@[{shown}](member:{member.member_id})"


def pieces(text: str, spans: list[tuple[int, int, int]]) -> list[Piece]:
    """`text` cut at the stored mentions (start, end, member id); spans out of the text or overlapping an earlier
    one are left as text."""
    out: list[Piece] = []
    at = 0
    for start, end, member_id in sorted(spans):
        if start < at or end > len(text) or start >= end:
            continue
        if start > at:
            out.append(Piece(text[at:start]))
        out.append(Piece(text[start:end], member_id))
        at = end
    if at < len(text):
        out.append(Piece(text[at:]))
    return out
