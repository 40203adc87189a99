"""Contact fields as the service stores them: validation and normalisation, no I/O.

Every function takes what a client sent and returns the stored value, or raises a `ContactFieldError`
subclass whose text is the sentence the API answers with (contacts speak the sentence convention).

- Text is trimmed. NUL and other control characters are refused (PostgreSQL cannot store NUL; the others
  are almost always a pasting accident); notes may hold line breaks and tabs.
- Email, company and notes may be cleared: null or an empty string stores null. Name and status may not.
- Tags are case-insensitive labels: "VIP" and "vip" are one tag, the spelling first stored wins. A tag may not
  hold a comma, because contact lists show a contact's tags as one comma-separated string.
- Custom attributes are a flat map of key -> string, number or boolean. Writes merge into what is stored;
  a null value removes its key (JSON merge-patch semantics).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

DEFAULT_STATUS = "New"

MAX_NAME = 100
MAX_EMAIL = 254
MAX_COMPANY = 200
MAX_STATUS = 50
MAX_NOTES = 5000
MAX_TAG = 50
MAX_TAGS = 50
MAX_ATTRIBUTE_KEY = 64
MAX_ATTRIBUTE_TEXT = 2000
MAX_ATTRIBUTES = 100
# Numbers outside what JSON readers hold exactly (IEEE doubles) would come back changed in some clients.
MAX_ATTRIBUTE_INTEGER = 2**53

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CONTROL_EXCEPT_LINES = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Deliberately loose (the mailbox provider is the judge), but it catches the usual mistakes: no @, spaces,
# no dot in the domain, two @.
_EMAIL = re.compile(r"^[^@\s]+@[^@\s.]+(\.[^@\s.]+)+$")
# The same rules as JSON Schema patterns for the published contract (text as sent, before trimming): an email
# or "" (which clears it); a tag, which may not hold a comma.
EMAIL_OR_EMPTY_PATTERN = r"^(?:[^@\s\x00-\x1f\x7f]+@[^@\s.\x00-\x1f\x7f]+(?:\.[^@\s.\x00-\x1f\x7f]+)+)?$"
TAG_PATTERN = r"^[^,\x00-\x1f\x7f]*[^,\s\x00-\x1f\x7f\x85][^,\x00-\x1f\x7f]*$"


class ContactFieldError(ValueError):
    """A value a contact cannot hold; str(err) is the sentence for the client."""


class InvalidName(ContactFieldError):
    pass


class InvalidEmail(ContactFieldError):
    pass


class InvalidCompany(ContactFieldError):
    pass


class InvalidStatus(ContactFieldError):
    pass


class InvalidNotes(ContactFieldError):
    pass


class InvalidTag(ContactFieldError):
    pass


class TooManyTags(ContactFieldError):
    pass


class InvalidAttribute(ContactFieldError):
    pass


class TooManyAttributes(ContactFieldError):
    pass


# -- single fields -------------------------------------------------------------------------------------------


def contact_name(raw: object) -> str:
    text = _text(raw, "Name", InvalidName, MAX_NAME)
    if not text:
        raise InvalidName("Name cannot be empty")
    return text


def email(raw: object) -> str | None:
    text = _optional_text(raw, "Email", InvalidEmail, MAX_EMAIL)
    if text is not None and not _EMAIL.match(text):
        raise InvalidEmail(f"Email {text!r} is not a valid email address")
    return text


def company(raw: object) -> str | None:
    return _optional_text(raw, "Company", InvalidCompany, MAX_COMPANY)


def status(raw: object) -> str:
    text = _text(raw, "Status", InvalidStatus, MAX_STATUS)
    if not text:
        raise InvalidStatus("Status cannot be empty")
    return text


def notes(raw: object) -> str | None:
    return _optional_text(raw, "Notes", InvalidNotes, MAX_NOTES, allow_lines=True)


# -- tags ----------------------------------------------------------------------------------------------------


def tag(raw: object) -> str:
    text = _text(raw, "Tag", InvalidTag, MAX_TAG)
    if not text:
        raise InvalidTag("Tags cannot be empty")
    if "," in text:
        raise InvalidTag(f"Tag {text!r} contains a comma; give each tag as its own string")
    return text


def tag_list(raw: Iterable[object]) -> tuple[str, ...]:
    """Validated tags, duplicates (ignoring case) dropped, order kept."""
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Iterable):
        raise InvalidTag("Tags must be an array of strings")
    tags: list[str] = []
    for item in raw:
        _append_new(tags, tag(item))
    if len(tags) > MAX_TAGS:
        raise TooManyTags(f"A contact holds at most {MAX_TAGS} tags")
    return tuple(tags)


def add_tags(current: Iterable[str], added: Iterable[object]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the tags after adding, the ones that were not there before)."""
    tags = list(current)
    newly = [t for t in tag_list(added) if _append_new(tags, t)]
    if len(tags) > MAX_TAGS:
        raise TooManyTags(f"A contact holds at most {MAX_TAGS} tags; it has {len(tags) - len(newly)}")
    return tuple(tags), tuple(newly)


def replace_tags(current: Iterable[str], wanted: Iterable[object]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the new set, the ones that were not there before). A tag kept keeps its stored spelling."""
    before = {t.casefold(): t for t in current}
    tags = tuple(before.get(t.casefold(), t) for t in tag_list(wanted))
    return tags, tuple(t for t in tags if t.casefold() not in before)


def remove_tag(current: Iterable[str], raw: object) -> tuple[str, ...]:
    """The tags without `raw` (ignoring case); unchanged when it is not there."""
    gone = tag(raw).casefold()
    return tuple(t for t in current if t.casefold() != gone)


def _append_new(tags: list[str], candidate: str) -> bool:
    if any(t.casefold() == candidate.casefold() for t in tags):
        return False
    tags.append(candidate)
    return True


# -- custom attributes ---------------------------------------------------------------------------------------


def attribute_key(raw: object) -> str:
    text = _text(raw, "Attribute name", InvalidAttribute, MAX_ATTRIBUTE_KEY)
    if not text:
        raise InvalidAttribute("Attribute names cannot be empty")
    return text


def attribute_value(key: str, raw: object) -> str | int | float | bool | None:
    """A stored value; None (a removal) passes through."""
    if raw is None or isinstance(raw, bool):
        return raw
    if isinstance(raw, int):
        if abs(raw) > MAX_ATTRIBUTE_INTEGER:
            raise InvalidAttribute(f"Attribute {key!r} is a number too large to store exactly")
        return raw
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise InvalidAttribute(f"Attribute {key!r} must be a finite number")
        if abs(raw) > MAX_ATTRIBUTE_INTEGER:
            # jsonb would give it back as a huge integer, not the number that was sent
            raise InvalidAttribute(f"Attribute {key!r} is a number too large to store exactly")
        return raw
    if isinstance(raw, str):
        if len(raw) > MAX_ATTRIBUTE_TEXT:
            raise InvalidAttribute(f"Attribute {key!r} must be at most {MAX_ATTRIBUTE_TEXT} characters")
        if "\x00" in raw:
            raise InvalidAttribute(f"Attribute {key!r} may not contain NUL characters")
        return raw
    raise InvalidAttribute(f"Attribute {key!r} must be a string, a number, a boolean or null")


def attribute_changes(raw: object) -> dict[str, Any]:
    """Validated changes: key -> new value, or None to remove the key."""
    if not isinstance(raw, Mapping):
        raise InvalidAttribute("Attributes must be an object")
    if not raw:
        raise InvalidAttribute("Attributes must name at least one attribute")
    changes: dict[str, Any] = {}
    for key, value in raw.items():
        name = attribute_key(key)
        if name in changes:
            raise InvalidAttribute(f"Attribute {name!r} is given twice")
        changes[name] = attribute_value(name, value)
    return changes


def merge_attributes(current: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """`current` with `changes` applied (a None value removes its key)."""
    merged = dict(current)
    for key, value in changes.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    if len(merged) > MAX_ATTRIBUTES:
        raise TooManyAttributes(f"A contact holds at most {MAX_ATTRIBUTES} custom attributes")
    return merged


# -- helpers -------------------------------------------------------------------------------------------------


def _text(raw: object, label: str, error: type[ContactFieldError], limit: int, *, allow_lines: bool = False
          ) -> str:
    if not isinstance(raw, str):
        raise error(f"{label} must be a string")
    text = raw.strip()
    pattern = _CONTROL_EXCEPT_LINES if allow_lines else _CONTROL
    if pattern.search(text):
        raise error(f"{label} may not contain control characters")
    if len(text) > limit:
        raise error(f"{label} must be at most {limit} characters")
    return text


def _optional_text(raw: object, label: str, error: type[ContactFieldError], limit: int, *,
                   allow_lines: bool = False) -> str | None:
    if raw is None:
        return None
    return _text(raw, label, error, limit, allow_lines=allow_lines) or None
