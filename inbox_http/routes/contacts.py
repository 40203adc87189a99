"""Contact writes, `/api/contacts` (core API, scope `contacts`, sentence errors).

Each write is the contacts use case `change_contact` (`use_cases/contacts.py`: its permission, and a key limited to
assigned chats writes only the contacts of those chats) and goes to the contact's card actor
(`contacts/contact_card.py`), which commits it before the reply. The phone in the path is normalised, so `+91 98765
43210` and `919876543210` are one contact.

Every answer with a contact carries its `version` and `ETag: "<version>"`. A write may name the version it last saw
with `If-Match: "<version>"` (or `"version": n` in the body); if the contact has moved on the answer is 412
`{"error": "version_conflict", "message": ..., "current_version": n}` and nothing changes.

`POST /api/contacts` on a phone that already has a contact updates it (200) instead of creating (201): fields left
out keep their value, tags given are added, attributes merged. See the card actor for why.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import msgspec
from quart import Blueprint, request

from inbox_actors.contacts.contact_card import (
    UNSET,
    ContactRefusal,
    ContactView,
    CreateContact,
    EditContact,
)
from inbox_actors.domain import contact_fields as fields
from inbox_actors.domain.auth_ladder import ErrorStyle
from inbox_actors.domain.phones import PHONE_PATTERN, InvalidPhone, normalise_phone
from inbox_actors.domain.plans import ApiTier
from inbox_actors.use_cases import contacts
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import run
from inbox_http.contract import FILLED_LINE, NO_CONTROL, NO_CONTROL_EXCEPT_LINES, answers, in_path, rule, takes
from inbox_http.converters import BIGINT_MAX
from inbox_http.dependencies import dependencies
from inbox_http.encoding import json_response
from inbox_http.errors import SentenceError, stable_error
from inbox_http.guard import current_caller, guarded, responds
from inbox_http.json_body import NOT_UTF8, decode_json, is_utf8

blueprint = Blueprint("contacts", __name__, url_prefix="/api/contacts")

_POLICY = {"tier": ApiTier.CORE, "use_case": contacts.CHANGE, "errors": ErrorStyle.SENTENCE}
_Unset = msgspec.UnsetType

# -- bodies --------------------------------------------------------------------------------------------------
# Decoded as plain types; `rule` describes for the contract what the contact card's checks
# (inbox_actors.domain.contact_fields) then enforce, each answered with its own sentence.

_Name = Annotated[str, rule(max_length=fields.MAX_NAME, pattern=FILLED_LINE)]
_Status = Annotated[str, rule(max_length=fields.MAX_STATUS, pattern=FILLED_LINE)]
_Email = Annotated[str, rule(max_length=fields.MAX_EMAIL, pattern=fields.EMAIL_OR_EMPTY_PATTERN)]
_Company = Annotated[str, rule(max_length=fields.MAX_COMPANY, pattern=NO_CONTROL)]
_Notes = Annotated[str, rule(max_length=fields.MAX_NOTES, pattern=NO_CONTROL_EXCEPT_LINES)]
_Tag = Annotated[str, rule(max_length=fields.MAX_TAG, pattern=fields.TAG_PATTERN)]
_Tags = Annotated[list[_Tag], rule(max_items=fields.MAX_TAGS)]
_AttributeValue = Annotated[Any, rule(any_of=[
    {"type": "string", "maxLength": fields.MAX_ATTRIBUTE_TEXT, "pattern": "^[^\\x00]*$"},
    {"type": "number", "minimum": -fields.MAX_ATTRIBUTE_INTEGER, "maximum": fields.MAX_ATTRIBUTE_INTEGER},
    {"type": "boolean"}, {"type": "null", "description": "removes the attribute"}])]
_Attributes = Annotated[dict[str, _AttributeValue], rule(
    max_properties=fields.MAX_ATTRIBUTES,
    property_names={"maxLength": fields.MAX_ATTRIBUTE_KEY, "pattern": FILLED_LINE})]
_Changes = Annotated[_Attributes, rule(min_properties=1)]
# A version the client last saw (or If-Match); a contact that moved on is 412 version_conflict.
_Version = Annotated[int, rule(minimum=1, maximum=BIGINT_MAX)]


class CreateBody(msgspec.Struct, forbid_unknown_fields=True):
    phone: Annotated[str, rule(pattern=PHONE_PATTERN)]
    name: _Name
    email: _Email | None | _Unset = UNSET
    company: _Company | None | _Unset = UNSET
    status: _Status | _Unset = UNSET
    tags: _Tags = []
    notes: _Notes | None | _Unset = UNSET
    attributes: _Attributes | _Unset = UNSET
    version: _Version | None = None


class NameBody(msgspec.Struct, forbid_unknown_fields=True):
    name: _Name
    version: _Version | None = None


class StatusBody(msgspec.Struct, forbid_unknown_fields=True):
    status: _Status
    version: _Version | None = None


class EmailBody(msgspec.Struct, forbid_unknown_fields=True):
    email: _Email | None
    version: _Version | None = None


class CompanyBody(msgspec.Struct, forbid_unknown_fields=True):
    company: _Company | None
    version: _Version | None = None


class NotesBody(msgspec.Struct, forbid_unknown_fields=True):
    notes: _Notes | None
    version: _Version | None = None


class TagsBody(msgspec.Struct, forbid_unknown_fields=True):
    tags: _Tags
    version: _Version | None = None


class AttributesBody(msgspec.Struct, forbid_unknown_fields=True):
    attributes: _Changes
    version: _Version | None = None


class VersionBody(msgspec.Struct, forbid_unknown_fields=True):
    version: _Version | None = None


# A contact that does not exist is 404; one at another version than the one named, 412 version_conflict
# (stable code, so a client can tell it from other refusals).
_EDIT_ANSWERS = answers(404, stable=(412,))
_TAG_IN_PATH = in_path(tag={"type": "string", "maxLength": fields.MAX_TAG, "pattern": fields.TAG_PATTERN})
_KEY_IN_PATH = in_path(key={"type": "string", "maxLength": fields.MAX_ATTRIBUTE_KEY, "pattern": FILLED_LINE})


# -- routes --------------------------------------------------------------------------------------------------


@blueprint.post("")
@responds(ContactView, 201)
@guarded(**_POLICY)
@takes(CreateBody)
@answers(200, stable=(412,))
async def create_contact():
    """Create a contact (201), or update the one the phone already has with the fields given (200)."""
    body = await _body(CreateBody)
    phone = _phone(body.phone)
    return await _write(phone, CreateContact(
        name=body.name, email=body.email, company=body.company, status=body.status, tags=tuple(body.tags),
        notes=body.notes, attributes=body.attributes, expected_version=_expected_version(body.version),
        actor=_actor()))


@blueprint.put("/<phone:phone>/name")
@responds(ContactView)
@guarded(**_POLICY)
@takes(NameBody)
@_EDIT_ANSWERS
async def set_name(phone: str):
    """Set the contact's name: {"name": "..."}."""
    body = await _body(NameBody)
    return await _edit(phone, body.version, name=body.name)


@blueprint.put("/<phone:phone>/status")
@responds(ContactView)
@guarded(**_POLICY)
@takes(StatusBody)
@_EDIT_ANSWERS
async def set_status(phone: str):
    """Set the contact's status (free text, up to 50 characters; new contacts are "New"): {"status": "..."}."""
    body = await _body(StatusBody)
    return await _edit(phone, body.version, status=body.status)


@blueprint.put("/<phone:phone>/email")
@responds(ContactView)
@guarded(**_POLICY)
@takes(EmailBody)
@_EDIT_ANSWERS
async def set_email(phone: str):
    """Set the contact's email, or clear it with null: {"email": "..."}."""
    body = await _body(EmailBody)
    return await _edit(phone, body.version, email=body.email)


@blueprint.put("/<phone:phone>/company")
@responds(ContactView)
@guarded(**_POLICY)
@takes(CompanyBody)
@_EDIT_ANSWERS
async def set_company(phone: str):
    """Set the contact's company, or clear it with null: {"company": "..."}."""
    body = await _body(CompanyBody)
    return await _edit(phone, body.version, company=body.company)


@blueprint.put("/<phone:phone>/notes")
@responds(ContactView)
@guarded(**_POLICY)
@takes(NotesBody)
@_EDIT_ANSWERS
async def set_notes(phone: str):
    """Set the contact's notes, or clear them with null: {"notes": "..."}."""
    body = await _body(NotesBody)
    return await _edit(phone, body.version, notes=body.notes)


@blueprint.put("/<phone:phone>/tags")
@responds(ContactView)
@guarded(**_POLICY)
@takes(TagsBody)
@_EDIT_ANSWERS
async def set_tags(phone: str):
    """Replace the contact's tags with a list of strings: {"tags": [...]}."""
    body = await _body(TagsBody)
    return await _edit(phone, body.version, tags=tuple(body.tags))


@blueprint.post("/<phone:phone>/tags")
@responds(ContactView)
@guarded(**_POLICY)
@takes(TagsBody)
@_EDIT_ANSWERS
async def add_tags(phone: str):
    """Add tags, keeping the others: {"tags": [...]}."""
    body = await _body(TagsBody)
    return await _edit(phone, body.version, add_tags=tuple(body.tags))


@blueprint.delete("/<phone:phone>/tags/<path:tag>")
@responds(ContactView)
@guarded(**_POLICY)
@takes(VersionBody, optional=True)
@_EDIT_ANSWERS
@_TAG_IN_PATH
async def remove_tag(phone: str, tag: str):
    """Remove one tag (ignoring case); removing a tag the contact lacks changes nothing."""
    body = await _body(VersionBody, empty_ok=True)
    return await _edit(phone, body.version, remove_tag=tag)


@blueprint.put("/<phone:phone>/attributes")
@responds(ContactView)
@guarded(**_POLICY)
@takes(AttributesBody)
@_EDIT_ANSWERS
async def merge_attributes(phone: str):
    """Merge custom attributes: {"attributes": {"key": value}}; a null value removes its key."""
    body = await _body(AttributesBody)
    return await _edit(phone, body.version, attributes=body.attributes)


@blueprint.delete("/<phone:phone>/attributes/<path:key>")
@responds(ContactView)
@guarded(**_POLICY)
@takes(VersionBody, optional=True)
@_EDIT_ANSWERS
@_KEY_IN_PATH
async def remove_attribute(phone: str, key: str):
    """Remove one custom attribute; removing one the contact lacks changes nothing."""
    body = await _body(VersionBody, empty_ok=True)
    return await _edit(phone, body.version, remove_attribute=key)


@blueprint.post("/<phone:phone>/opt-out")
@responds(ContactView)
@guarded(**_POLICY)
@takes(VersionBody, optional=True)
@_EDIT_ANSWERS
async def opt_out(phone: str):
    """Record that the contact withdrew consent (opted_out, opted_out_at); repeating it keeps the first time."""
    body = await _body(VersionBody, empty_ok=True)
    return await _edit(phone, body.version, opted_out=True)


@blueprint.post("/<phone:phone>/opt-in")
@responds(ContactView)
@guarded(**_POLICY)
@takes(VersionBody, optional=True)
@_EDIT_ANSWERS
async def opt_in(phone: str):
    """Record that the contact gave consent again (clears opted_out and opted_out_at)."""
    body = await _body(VersionBody, empty_ok=True)
    return await _edit(phone, body.version, opted_out=False)


# -- helpers -------------------------------------------------------------------------------------------------


async def _edit(raw_phone: str, body_version: int | None, **changes: Any):
    phone = _phone(raw_phone)
    return await _write(phone, EditContact(**changes, expected_version=_expected_version(body_version),
                                           actor=_actor()))


async def _write(phone: str, message: CreateContact | EditContact):
    asked = {"create": message} if isinstance(message, CreateContact) else {"edit": message}
    outcome = await run(dependencies().use_case_deps, current_caller(), contacts.CHANGE, {"phone": phone, **asked})
    if isinstance(outcome, Refused):
        raise SentenceError(outcome.status, outcome.message)
    reply = outcome.data
    if isinstance(reply, ContactRefusal):
        if reply.code is None:
            raise SentenceError(reply.status, reply.sentence)
        extra = {} if reply.current_version is None else {"current_version": reply.current_version}
        return stable_error(reply.status, reply.code, reply.sentence, headers=_etag(reply.current_version), **extra)
    return json_response(reply.contact, 201 if reply.created else 200, _etag(reply.contact.version))


def _etag(version: int | None) -> dict[str, str] | None:
    return None if version is None else {"ETag": f'"{version}"'}


def _actor() -> str:
    """Who the webhook events name: the key, by id (names are not unique), as every event the API causes."""
    return current_caller().author


def _phone(raw: str) -> str:
    if not raw.strip():
        raise SentenceError(400, "Phone number is required")
    try:
        return normalise_phone(raw)
    except InvalidPhone as err:
        raise SentenceError(400, f"Invalid phone number: {err}") from None


_IF_MATCH = re.compile(r'^(?:W/)?"(\d{1,9})"$|^(\d{1,9})$')


def _expected_version(body_version: int | None) -> int | None:
    """The version the client says it edits: If-Match ("*" means any) or the body's `version`."""
    if body_version is not None and not 1 <= body_version <= BIGINT_MAX:
        raise SentenceError(400, "version must be a positive whole number")
    header = request.headers.get("If-Match")
    if header is None or header.strip() == "*":
        return body_version
    match = _IF_MATCH.match(header.strip())
    if match is None:
        raise SentenceError(400, 'If-Match must be one version in quotes, as the ETag gives it, like "3"')
    version = int(match.group(1) or match.group(2))
    if body_version is not None and body_version != version:
        raise SentenceError(400, f"If-Match names version {version} but the body names version {body_version}")
    return version


# Sentences for a missing field, as the spec words "Phone number is required".
_LABELS = {"phone": "Phone number is", "name": "Name is", "status": "Status is", "email": "Email is",
           "company": "Company is", "notes": "Notes are", "tags": "Tags are", "attributes": "Attributes are"}
_MISSING = re.compile(r"Object missing required field `([^`]+)`")
_UNKNOWN = re.compile(r"Object contains unknown field `([^`]*)`")
_WRONG_TYPE = re.compile(r"Expected `([^`]+)`, got `([^`]+)`(?: - at `\$(.*)`)?$")
_TYPE_WORDS = {"str": "a string", "int": "a whole number", "array": "an array", "object": "an object",
               "null": "null", "bool": "true or false", "float": "a number"}


async def _body(kind: type, *, empty_ok: bool = False):
    raw = await request.get_data()
    if not raw.strip():
        if empty_ok:
            return kind()
        raise SentenceError(400, "A JSON body is required")
    if not is_utf8(raw):
        raise SentenceError(400, NOT_UTF8)
    try:
        return decode_json(raw, kind)
    except msgspec.ValidationError as err:
        raise SentenceError(400, _body_sentence(kind, str(err))) from None
    except msgspec.DecodeError:
        raise SentenceError(400, "The request body is not valid JSON") from None


def _body_sentence(kind: type, error: str) -> str:
    """msgspec's validation message as a sentence a client can act on."""
    if match := _MISSING.match(error):
        return f"{_LABELS.get(match[1], match[1] + ' is')} required"
    if match := _UNKNOWN.match(error):
        accepted = ", ".join(kind.__struct_fields__)
        return f"Unknown field {match[1]!r}; this call accepts {accepted}"
    if match := _WRONG_TYPE.match(error):
        if not match[3]:
            return "The request body must be a JSON object"
        expected = " or ".join(_TYPE_WORDS.get(t, t) for t in match[1].split(" | "))
        return f"{_field_path(match[3])} must be {expected}"
    return f"Invalid request body: {error}"


def _field_path(path: str) -> str:
    """`.tags[0]` -> `tags[0]`; `.attributes["x"]` stays readable."""
    return path.lstrip(".") or "body"
