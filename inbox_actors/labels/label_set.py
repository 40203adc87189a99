"""A workspace's labels: the set its team labels chats with, each a name (unique whatever its case) and a colour.

A per-workspace setting written in one transaction each, like the roster: creating, renaming, recolouring and
deleting a label are recorded in the team audit log; renaming or deleting one renames it on, or removes it from,
every chat that has it, in the same transaction. Labelling a chat is the chat's own action (its conversation
actor, `conversations/chat_handling.py`), which takes only a label of the set.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from inbox_actors.domain import team_audit
from inbox_actors.domain.text import has_control_characters
from persistence.database import Database, Record
from persistence.queries import labels as queries
from persistence.queries import team_audit as audit_queries

MAX_NAME = 50
MAX_LABELS = 500
COLOUR_PATTERN = r"^#[0-9a-fA-F]{6}$"
DEFAULT_COLOUR = "#6b7280"

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME, pattern=r"^[^\x00-\x1f\x7f]*$",
                                   description="The label's name (unique in the workspace whatever its case).")]
Colour = Annotated[str, msgspec.Meta(pattern=COLOUR_PATTERN, description="#rrggbb", examples=["#2563eb"])]


class LabelView(msgspec.Struct, frozen=True):
    id: int
    name: str
    colour: str
    created_at: datetime
    updated_at: datetime


class LabelList(msgspec.Struct, frozen=True):
    data: list[LabelView]


class CreateLabel(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: Name
    colour: Colour = DEFAULT_COLOUR


class ChangeLabel(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: Name | msgspec.UnsetType = msgspec.UNSET
    colour: Colour | msgspec.UnsetType = msgspec.UNSET


class LabelDeleted(msgspec.Struct, frozen=True):
    id: int
    name: str
    removed_from_chats: int


class LabelRefusal(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def label_view(row: Record) -> LabelView:
    return LabelView(row["id"], row["name"], row["colour"], row["created_at"], row["updated_at"])


async def labels(db: Database, workspace_id: int) -> LabelList:
    return LabelList([label_view(row) for row in await queries.list_labels(db, workspace_id)])


async def create(db: Database, workspace_id: int, member_id: int | None, via: str, body: CreateLabel,
                 now: datetime) -> LabelView:
    name = _name(body.name)
    async with db.transaction() as tx:
        if await queries.count_labels(tx, workspace_id) >= MAX_LABELS:
            raise LabelRefusal(409, "too_many_labels", f"A workspace has at most {MAX_LABELS} labels.")
        row = await queries.insert_label(tx, workspace_id, name, body.colour.lower())
        if row is None:
            raise _exists(name)
        await _audit(tx, workspace_id, member_id, via, team_audit.LABEL_CREATED, row, now,
                     {"name": name, "colour": row["colour"]})
    return label_view(row)


async def change(db: Database, workspace_id: int, member_id: int | None, via: str, label_id: int,
                 body: ChangeLabel, now: datetime) -> LabelView:
    """Rename or recolour; a new name replaces the old one on every chat that has it."""
    async with db.transaction() as tx:
        row = await queries.find_label(tx, workspace_id, label_id, for_update=True)
        if row is None:
            raise _NOT_FOUND
        name = row["name"] if body.name is msgspec.UNSET else _name(body.name)
        colour = row["colour"] if body.colour is msgspec.UNSET else body.colour.lower()
        if name.lower() != row["name"].lower():
            if await queries.find_label_named(tx, workspace_id, name) is not None:
                raise _exists(name)
        renamed = 0
        if name != row["name"]:
            renamed = await queries.rename_on_chats(tx, workspace_id, row["name"], name)
        updated = await queries.update_label(tx, label_id, name, colour)
        await _audit(tx, workspace_id, member_id, via, team_audit.LABEL_CHANGED, updated, now,
                     {"from": row["name"], "name": name, "colour": colour, "chats_renamed": renamed})
    return label_view(updated)


async def delete(db: Database, workspace_id: int, member_id: int | None, via: str, label_id: int,
                 now: datetime) -> LabelDeleted:
    """Delete the label and take it off every chat that has it."""
    async with db.transaction() as tx:
        row = await queries.find_label(tx, workspace_id, label_id, for_update=True)
        if row is None:
            raise _NOT_FOUND
        removed = await queries.remove_from_chats(tx, workspace_id, row["name"])
        await queries.delete_label(tx, label_id)
        await _audit(tx, workspace_id, member_id, via, team_audit.LABEL_DELETED, row, now,
                     {"name": row["name"], "chats": removed})
    return LabelDeleted(row["id"], row["name"], removed)


def _name(raw: str) -> str:
    name = " ".join(raw.split())
    if not name or has_control_characters(name):
        raise LabelRefusal(400, "invalid_name", f"A label's name is 1 to {MAX_NAME} characters of text.")
    return name


def _exists(name: str) -> LabelRefusal:
    return LabelRefusal(409, "label_exists", f"The workspace already has a label named {name!r}.")


_NOT_FOUND = LabelRefusal(404, "not_found", "No such label in this workspace.")


async def _audit(tx, workspace_id: int, member_id: int | None, via: str, action: str, row: Record, now: datetime,
                 details: dict) -> None:
    await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=member_id, via=via, action=action,
                               subject=f"label:{row['id']}", details=details)
