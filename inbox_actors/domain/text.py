"""Text the service stores: what PostgreSQL and the people reading it can take.

PostgreSQL cannot store NUL in text, and other control characters in a message or a name are either a bug
of the sender or an attempt to confuse whoever reads the log; line breaks and tabs are ordinary in messages.
Input from API clients with such characters is refused; text from the platform (a customer's own words) is
kept, with NUL replaced, because refusing it would make the platform retry a message forever.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
REPLACEMENT = "\ufffd"


def has_control_characters(text: str) -> bool:
    """True when `text` holds a control character other than a line break or a tab."""
    return _CONTROL.search(text) is not None


def storable(text: str | None) -> str | None:
    """`text` with NUL replaced (the platform's text, kept as the customer wrote it otherwise)."""
    return None if text is None else text.replace("\x00", REPLACEMENT)
