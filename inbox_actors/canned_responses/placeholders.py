"""A canned response's placeholders and the values they are filled with, as a reply box inserts the response.

`{{name}}` is the contact's name ("there" while the workspace does not know it, so "Hello {{name}}" reads "Hello
there"), `{{first_name}}` its first word, `{{agent}}` the name of the member inserting it. Any other `{{...}}`
stays as it was written. The agent inbox's script fills them in the browser from the values the page renders with
the composer (`values`), and the composer's form without the script fills them here (`fill`): one rule, two
places that apply it, the same values.
"""

from __future__ import annotations

import re

UNKNOWN_NAME = "there"
PLACEHOLDERS = ("name", "first_name", "agent")
_PLACEHOLDER = re.compile(r"\{\{\s*(name|first_name|agent)\s*\}\}")


def values(contact_name: str | None, member_name: str | None) -> dict[str, str]:
    """Each placeholder's value for this contact and this member."""
    name = " ".join((contact_name or "").split())
    return {"name": name or UNKNOWN_NAME, "first_name": name.split(" ")[0] if name else UNKNOWN_NAME,
            "agent": " ".join((member_name or "").split())}


def fill(text: str, filled: dict[str, str]) -> str:
    """The text with its placeholders replaced by their values."""
    return _PLACEHOLDER.sub(lambda found: filled.get(found.group(1), found.group(0)), text)
