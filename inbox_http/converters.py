"""URL converters for the routes' path parameters."""

from __future__ import annotations

from werkzeug.routing import BaseConverter

BIGINT_MAX = 2**63 - 1
# No row has it: ids start at 1.
_NO_SUCH_ID = 0


class IdConverter(BaseConverter):
    """`<id:name>`: a row id. Digits beyond PostgreSQL's bigint become an id no row has, so the route answers
    its usual 404 rather than a routing quirk or a database error."""

    regex = r"\d{1,40}"
    weight = 50
    # What the contract promises: ids are positive bigints (other digits are answered 404 like a missing id).
    json_schema = {"type": "integer", "minimum": 1, "maximum": BIGINT_MAX}

    def to_python(self, value: str) -> int:
        number = int(value)
        return number if number <= BIGINT_MAX else _NO_SUCH_ID

    def to_url(self, value: int) -> str:
        return str(value)


class PhoneConverter(BaseConverter):
    """`<phone:name>`: a contact's phone in a path, as typed (the route normalises it). Never one of the contact
    routes' own names, so `/api/contacts/export` is only the export: a wrong method there is told the export's
    methods, not those of a contact called "export"."""

    regex = r"(?!(?:paginated|export|bulk-delete)$)[^/]+"
    weight = 100
