"""A member's saved views of the agent inbox's list: a name and the view and filters it opens
(`inbox_views.ListFilter`), listed in the list's view menu, renamed, changed and deleted by the member alone.

Each is the caller's member's own: another member's (or one that is not there) is "no such saved view", 404. The
rules, each with its own code and sentence:

- a name is 1 to MAX_NAME characters on one line, not blank (`invalid_name`), unique among the member's saved views
  whatever its case (`name_taken`, 409);
- a member keeps at most MAX_SAVED_VIEWS (`too_many_saved_views`, 409);
- the filters follow the list's own field rules (`invalid_view`, `invalid_label`, ...); the queue is a view only for
  whom may open it.

Reading and writing them needs what reading chats does (`inbox` or `contacts`; a member who only reads, `:read`,
lists them and changes none). Two saves at once are judged one after the other (the member's lock in the
transaction: `persistence/queries/saved_views.py`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec

from inbox_actors.use_cases import inbox_views, permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.chat_reads import NoArguments
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import BIGINT_MAX, FILLED_LINE
from inbox_actors.use_cases.inbox_views import ListFilter
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused
from inbox_actors.use_cases.use_case import Kind, UseCase, decode_arguments, rule
from persistence.database import Record
from persistence.queries import saved_views as queries

MAX_NAME = 60
MAX_SAVED_VIEWS = 50
"""What a view menu can list at a glance."""

Name = Annotated[str, msgspec.Meta(
    min_length=1, max_length=MAX_NAME, pattern=FILLED_LINE, examples=["VIP waiting"],
    description="The saved view's name in the list's view menu (unique among the member's, whatever its case).",
    extra=rule("invalid_name", f"A saved view's name is 1 to {MAX_NAME} characters on one line."))]
# Any whole number: one no saved view has (0, beyond bigint) is answered as any missing one is, 404.
ViewId = Annotated[int, msgspec.Meta(description="The saved view's id.")]


def _inlined_schema(kind: type) -> dict[str, Any]:
    """A struct's JSON Schema with the schemas it refers to written in place (the contract's description of a
    field decoded later, by the struct's own rules)."""
    schema = msgspec.json.schema(kind)
    definitions = schema.get("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, list):
            return [inline(item) for item in node]
        if not isinstance(node, dict):
            return node
        found = inline(definitions[node["$ref"].rsplit("/", 1)[1]]) if "$ref" in node else {}
        merged = {**found, **{name: inline(value) for name, value in node.items()
                                      if name not in ("$ref", "$defs", "title")}}
        return {name: value for name, value in merged.items() if value != [] or name != "required"}

    inlined = inline(schema)
    inlined.pop("description", None)  # the struct's own, for the code's readers
    return inlined


# The filters as given, judged by the list's own field rules (`inbox_views.ListFilter`), each with its code; the
# contract describes them as the struct has them.
Filters = Annotated[dict[str, Any], msgspec.Meta(
    extra_json_schema=_inlined_schema(ListFilter),
    description="The view and filters it opens, as the inbox's address names them: view (mine, queue, "
                "unassigned, open, snoozed, resolved), label, assignee (me, none or a user id), state (AI_ONLY, "
                "HANDOFF_PENDING, HUMAN_ACTIVE), waiting (minutes, 1 to 43,200), unread (true).",
    examples=[{"view": "open", "label": "VIP", "unread": True}])]
NO_SUCH_VIEW = Refused(Reason.NOT_FOUND, "No such saved view of yours.", 404, "not_found")


class SavedView(msgspec.Struct, frozen=True):
    id: int
    name: str
    filters: ListFilter
    """The view and filters it opens; in the inbox's address as `?view=…&label=…` (docs/inbox-app.md)."""
    created_at: datetime
    updated_at: datetime


class SavedViewList(msgspec.Struct, frozen=True):
    data: list[SavedView]


class NewSavedView(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: Name
    filters: Filters = {}


class SavedViewChange(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A field left out keeps its value."""

    view_id: ViewId
    name: Name | msgspec.UnsetType = msgspec.UNSET
    filters: Filters | msgspec.UnsetType = msgspec.UNSET
    """Given: the saved view's filters as a whole."""


class OneSavedView(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    view_id: ViewId


def _saved(row: Record) -> SavedView:
    return SavedView(row["id"], row["name"], msgspec.json.decode(row["filters"], type=ListFilter),
                     row["created_at"], row["updated_at"])


async def saved_views(deps: UseCaseDeps, caller: Caller) -> list[SavedView]:
    """The caller's member's saved views, by name."""
    return [_saved(row) for row in await queries.list_views(deps.db, caller.workspace_id, caller.member_id)]


async def _list(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(SavedViewList(await saved_views(deps, caller)))


async def _filters(deps: UseCaseDeps, caller: Caller, given: dict[str, Any]) -> ListFilter | Refused:
    """The filters as the list takes them, or why they cannot be kept: a field's rule, a view the caller may not
    open. (A label is kept by its name: one the workspace does not have, or deletes later, matches no chat.)"""
    filters = decode_arguments(ListFilter, given)
    if isinstance(filters, Refused):
        return filters
    if filters.view is not None and filters.view not in inbox_views.views_for(caller):
        return Refused(Reason.PERMISSION, "The hand-off queue needs the inbox or team_management permission.", 403,
                       "permission_denied")
    return filters


def _name(raw: str) -> str:
    """On one line with single spaces (its shape is the argument's rule)."""
    return " ".join(raw.split())


def _taken(name: str) -> Refused:
    return Refused(Reason.REFUSED, f"You already have a saved view named “{name}” (names are the same whatever "
                   "their case); choose another name.", 409, "name_taken")


async def _save(deps: UseCaseDeps, caller: Caller, a: NewSavedView) -> Outcome:
    filters = await _filters(deps, caller, a.filters)
    if isinstance(filters, Refused):
        return filters
    name = _name(a.name)
    async with deps.db.transaction() as tx:
        await queries.lock_member(tx, caller.member_id)
        if await queries.count_views(tx, caller.member_id) >= MAX_SAVED_VIEWS:
            return Refused(Reason.REFUSED, f"You have {MAX_SAVED_VIEWS} saved views, as many as a member keeps; "
                           "delete one to save another.", 409, "too_many_saved_views")
        if await queries.name_taken(tx, caller.member_id, name, 0):
            return _taken(name)
        row = await queries.insert_view(tx, caller.workspace_id, caller.member_id, name,
                                        msgspec.json.encode(filters).decode())
    return Done(_saved(row))


async def _change(deps: UseCaseDeps, caller: Caller, a: SavedViewChange) -> Outcome:
    if not 1 <= a.view_id <= BIGINT_MAX:
        return NO_SUCH_VIEW
    filters = None if a.filters is msgspec.UNSET else await _filters(deps, caller, a.filters)
    if isinstance(filters, Refused):
        return filters
    async with deps.db.transaction() as tx:
        await queries.lock_member(tx, caller.member_id)
        row = await queries.find_view(tx, caller.workspace_id, caller.member_id, a.view_id)
        if row is None:
            return NO_SUCH_VIEW
        name = row["name"] if a.name is msgspec.UNSET else _name(a.name)
        if name.lower() != row["name"].lower() and await queries.name_taken(tx, caller.member_id, name, a.view_id):
            return _taken(name)
        kept = row["filters"] if filters is None else msgspec.json.encode(filters).decode()
        updated = await queries.update_view(tx, a.view_id, name, kept)
    return Done(_saved(updated))


async def _delete(deps: UseCaseDeps, caller: Caller, a: OneSavedView) -> Outcome:
    """The saved view as it was."""
    if not 1 <= a.view_id <= BIGINT_MAX:
        return NO_SUCH_VIEW
    async with deps.db.transaction() as tx:
        await queries.lock_member(tx, caller.member_id)
        row = await queries.find_view(tx, caller.workspace_id, caller.member_id, a.view_id)
        if row is None:
            return NO_SUCH_VIEW
        await queries.delete_view(tx, a.view_id)
    return Done(_saved(row))


# -- the declarations ----------------------------------------------------------------------------------------

LIST = UseCase("list_saved_views", NoArguments, permissions.CHAT_CONTENT, Kind.READ, _list)
SAVE = UseCase("save_view", NewSavedView, permissions.CHAT_CONTENT, Kind.WRITE, _save)
CHANGE = UseCase("change_saved_view", SavedViewChange, permissions.CHAT_CONTENT, Kind.WRITE, _change)
DELETE = UseCase("delete_saved_view", OneSavedView, permissions.CHAT_CONTENT, Kind.WRITE, _delete)
