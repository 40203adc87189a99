"""Phone numbers as the spec spells them: country code and digits only.

A leading + and spaces are accepted and ignored, so two spellings of one number are one contact; a 10-digit
number without a country code is Indian and gets the prefix 91. Anything else that is not a digit is refused
rather than guessed at (a dash or a bracket usually means a number pasted from somewhere unexpected).
"""

from __future__ import annotations

INDIAN_PREFIX = "91"
# E.164 allows at most 15 digits; fewer than 8 with a country code is no reachable mobile number.
MIN_DIGITS = 8
MAX_DIGITS = 15
# What `normalise_phone` accepts, as a JSON Schema pattern: spaces anywhere after an optional leading +
# (whitespace around it trimmed), 8 to 15 digits. A 10-digit number is among them (it gets 91).
PHONE_PATTERN = rf"^\s*\+? *(?:[0-9] *){{{MIN_DIGITS},{MAX_DIGITS}}}\s*$"


class InvalidPhone(ValueError):
    """The text is not a phone number the service accepts."""


def normalise_phone(raw: str) -> str:
    """`raw` as stored and compared: digits with country code. Raises InvalidPhone."""
    if not isinstance(raw, str):
        raise InvalidPhone("phone must be a string")
    text = raw.strip().replace(" ", "")
    if text.startswith("+"):
        text = text[1:]
    if not text.isascii() or not text.isdigit():
        raise InvalidPhone("phone may hold only digits, a leading + and spaces")
    if len(text) == 10:
        text = INDIAN_PREFIX + text
    if not MIN_DIGITS <= len(text) <= MAX_DIGITS:
        raise InvalidPhone(f"phone must have {MIN_DIGITS} to {MAX_DIGITS} digits with its country code")
    return text


def phone_or_none(raw: str) -> str | None:
    """The normalised phone, or None when `raw` is not one (for lookups where "no such number" is the answer)."""
    try:
        return normalise_phone(raw)
    except InvalidPhone:
        return None


def platform_phone(raw: str) -> str | None:
    """A number as the platform gives it (a WhatsApp id: country code and digits, always complete), or None.

    The 10-digit rule is for people typing numbers into the API; applied to the platform's ids it would file a
    Danish or Singaporean customer (country code and 8 digits) under an Indian number."""
    if not isinstance(raw, str):
        return None
    text = raw.strip().removeprefix("+")
    if not text.isascii() or not text.isdigit() or not MIN_DIGITS <= len(text) <= MAX_DIGITS:
        return None
    return text
