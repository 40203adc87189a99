"""The team roster: who is on the team, what each may do, how loaded each is, and the changes an admin makes.

Members are added (active at once; signing in is the web app's business), changed (name, email, role, permissions,
assigned-only), suspended, reactivated and removed. A change reaches the member's keys and sessions at once: the
members table's trigger tells every process's credential cache. The rules, each a named refusal:
- nobody grants what they do not hold: permissions must be within the caller's own (an admin holds all), and only
  an admin makes, unmakes, suspends or removes an admin (403 permission_not_held, 403 admin_required);
- a workspace keeps at least one active admin (409 last_admin); the admins are locked while this is judged, so two
  concurrent changes cannot both pass it;
- removal is final (409 member_removed on any later change); it signs the member out and hands their open chats
  back to the hand-off queue (released, reason "member removed"). A suspension keeps their chats with them.
Every change is recorded in the team audit log in its own transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Literal

import msgspec

from inbox_actors.conversations import conversation
from inbox_actors.domain import scopes as scope_rules
from inbox_actors.domain import team_audit
from inbox_actors.paging import cursors, parameters
from inbox_actors.runtime import ActorError, Directory
from inbox_actors.team import presence
from persistence.database import Database, Record, UnitOfWork
from persistence.queries import roster as roster_queries
from persistence.queries import sessions as session_queries
from persistence.queries import team_audit as audit_queries
from persistence.queries import workspaces as workspace_queries

STATUS_FILTERS = {"active": ["active"], "suspended": ["suspended"], "removed": ["removed"],
                  "current": ["active", "suspended"], "all": ["active", "suspended", "removed"]}
DEFAULT_LIMIT = 100
CURSOR_KIND = "roster"
REMOVED_REASON = "member removed"
_EMAIL = r"^[^@\s]{1,64}@[^@\s]{1,255}$"
_GRANTABLE = sorted(scope_rules.VALID_SCOPES)

Args = Mapping[str, str | None]
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=r"\S")]
Email = Annotated[str, msgspec.Meta(max_length=320, pattern=_EMAIL)]
Role = Literal["admin", "agent"]
Grantable = Literal[tuple(_GRANTABLE)]  # type: ignore[valid-type]  # every scope, checked by the decoder
Permissions = Annotated[list[Grantable], msgspec.Meta(min_length=1, max_length=len(_GRANTABLE))]


class AddMember(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: Name
    role: Role
    email: Email | None = None
    # Default: the role's (an admin holds all; an agent inbox, contacts, templates, whatsapp_api, analytics:read).
    permissions: Permissions | None = None
    assigned_only: bool = False


class ChangeMember(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    name: Name | msgspec.UnsetType = msgspec.UNSET
    email: Email | None | msgspec.UnsetType = msgspec.UNSET
    role: Role | msgspec.UnsetType = msgspec.UNSET
    permissions: Permissions | msgspec.UnsetType = msgspec.UNSET
    assigned_only: bool | msgspec.UnsetType = msgspec.UNSET


class MemberLoad(msgspec.Struct, frozen=True):
    open_chats: int                        # chats claimed and not resolved
    waiting_chats: int                     # of those, whose customer waits for a person
    longest_wait_seconds: int | None


class Member(msgspec.Struct, frozen=True):
    user_id: int
    name: str
    email: str | None
    role: str
    status: str
    permissions: list[str]
    assigned_only: bool
    created_at: datetime
    updated_at: datetime
    load: MemberLoad
    availability: presence.Availability    # online, busy or offline now, and why (docs/team.md#availability)


class RosterPage(msgspec.Struct, frozen=True):
    data: list[Member]
    next_cursor: str | None


class Removed(Member, frozen=True):
    released_chats: int                    # open chats handed back to the hand-off queue


class RosterRefusal(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


NOT_FOUND = RosterRefusal(404, "not_found", "No such member in this workspace.")
ADMIN_REQUIRED = RosterRefusal(403, "admin_required", "Only an admin may make, change, suspend or remove an admin.")
LAST_ADMIN = RosterRefusal(409, "last_admin", "This is the workspace's last active admin; make another admin first.")
MEMBER_REMOVED = RosterRefusal(409, "member_removed", "This member was removed; removal is final.")
EMAIL_TAKEN = RosterRefusal(409, "email_taken", "Another member of this workspace has this email address.")


async def roster(db: Database, workspace_id: int, args: Args, now: datetime) -> RosterPage:
    statuses = STATUS_FILTERS[parameters.choice(args.get("status"), "status", STATUS_FILTERS, default="current")]
    limit = parameters.limit(args.get("limit"), DEFAULT_LIMIT)
    position = cursors.decode(args, CURSOR_KIND, int)
    rows = await roster_queries.members(db, workspace_id, statuses, position[0] if position else None, limit + 1)
    page, more = rows[:limit], len(rows) > limit
    available = await presence.of_members(db, workspace_id, [row["id"] for row in page])
    return RosterPage([member_view(row, now, available[row["id"]]) for row in page],
                      cursors.encode(CURSOR_KIND, args, page[-1]["id"]) if more else None)


async def one(db: Database, workspace_id: int, member_id: int, now: datetime) -> Member:
    row = await roster_queries.member(db, workspace_id, member_id)
    if row is None:
        raise NOT_FOUND
    return await _viewed(db, workspace_id, row, now)


async def add(db: Database, workspace_id: int, caller_id: int, via: str, body: AddMember, now: datetime) -> Member:
    async with db.transaction() as tx:
        caller = await _caller(tx, workspace_id, caller_id)
        if body.role == "admin" and caller["role"] != "admin":
            raise ADMIN_REQUIRED
        permissions = _granted(caller, body.role, body.permissions)
        if body.email is not None and await workspace_queries.email_taken(tx, workspace_id, body.email):
            raise EMAIL_TAKEN
        added = await workspace_queries.insert_member(tx, workspace_id=workspace_id, name=body.name.strip(),
                                                      email=body.email, role=body.role, permissions=permissions,
                                                      assigned_only=body.assigned_only)
        row = await roster_queries.member(tx, workspace_id, added["id"])
        await _audit(tx, workspace_id, caller_id, via, team_audit.MEMBER_ADDED, row["id"], now,
                     {"role": body.role, "permissions": permissions, "assigned_only": body.assigned_only})
    return await _viewed(db, workspace_id, row, now)


async def change(db: Database, workspace_id: int, caller_id: int, via: str, member_id: int, body: ChangeMember,
                 now: datetime) -> Member:
    async with db.transaction() as tx:
        caller, target, admins = await _judged(tx, workspace_id, caller_id, member_id)
        changes: dict[str, object] = {name: getattr(body, name) for name in body.__struct_fields__
                                      if getattr(body, name) is not msgspec.UNSET}
        role = changes.get("role", target["role"])
        if "admin" in (role, target["role"]) and ("role" in changes or "permissions" in changes) \
                and caller["role"] != "admin":
            raise ADMIN_REQUIRED
        if target["role"] == "admin" and role != "admin" and admins == [member_id]:
            raise LAST_ADMIN
        if "role" in changes or "permissions" in changes:
            changes["permissions"] = _granted(caller, role, changes.get("permissions"))  # type: ignore[arg-type]
        if "name" in changes:
            changes["name"] = str(changes["name"]).strip()
        email = changes.get("email")
        if isinstance(email, str) and (target["email"] or "").lower() != email.lower() \
                and await workspace_queries.email_taken(tx, workspace_id, email):
            raise EMAIL_TAKEN
        if changes:
            await roster_queries.update_member(tx, member_id, changes, now)
            await _audit(tx, workspace_id, caller_id, via, team_audit.MEMBER_CHANGED, member_id, now, changes)
        row = await roster_queries.member(tx, workspace_id, member_id)
    return await _viewed(db, workspace_id, row, now)


async def set_status(db: Database, workspace_id: int, caller_id: int, via: str, member_id: int, status: str,
                     now: datetime) -> Member:
    """Suspend ("suspended") or reactivate ("active") a member."""
    async with db.transaction() as tx:
        _, target, _ = await _judged(tx, workspace_id, caller_id, member_id, standing=True,
                                     leaving=status != "active")
        if target["status"] != status:
            await roster_queries.update_member(tx, member_id, {"status": status}, now)
            action = team_audit.MEMBER_SUSPENDED if status == "suspended" else team_audit.MEMBER_REACTIVATED
            await _audit(tx, workspace_id, caller_id, via, action, member_id, now)
        row = await roster_queries.member(tx, workspace_id, member_id)
    return await _viewed(db, workspace_id, row, now)


async def remove(db: Database, actors: Directory, workspace_id: int, caller_id: int, author: str, member_id: int,
                 now: datetime) -> Removed:
    """Remove the member for good, sign them out, and hand their open chats back to the hand-off queue."""
    async with db.transaction() as tx:
        await _judged(tx, workspace_id, caller_id, member_id, standing=True, leaving=True)
        await roster_queries.update_member(tx, member_id, {"status": "removed"}, now)
        await session_queries.revoke_member_sessions(tx, member_id, now)
        await _audit(tx, workspace_id, caller_id, author, team_audit.MEMBER_REMOVED, member_id, now)
    released = 0
    for phone in await roster_queries.claimed_open_chats(db, workspace_id, member_id):
        try:
            answer = await conversation.ask_conversation(actors, workspace_id, phone, conversation.Release(
                by_member=caller_id, author=author, reason=REMOVED_REASON))
        except ActorError:
            continue  # the chat stays assigned to the removed member; a later release or transfer moves it
        released += isinstance(answer, conversation.Changed)
    row = await roster_queries.member(db, workspace_id, member_id)
    return Removed(**msgspec.structs.asdict(await _viewed(db, workspace_id, row, now)), released_chats=released)


async def _viewed(db: Database, workspace_id: int, row: Record, now: datetime) -> Member:
    return member_view(row, now, (await presence.of_members(db, workspace_id, [row["id"]]))[row["id"]])


def member_view(row: Record, now: datetime, availability: presence.Availability) -> Member:
    oldest = row["oldest_wait_since"]
    return Member(
        user_id=row["id"], name=row["name"], email=row["email"], role=row["role"], status=row["status"],
        permissions=list(row["permissions"]), assigned_only=row["assigned_only"], created_at=row["created_at"],
        updated_at=row["updated_at"],
        load=MemberLoad(row["open_chats"], row["waiting_chats"],
                        max(0, int((now - oldest).total_seconds())) if oldest is not None else None),
        availability=availability,
    )


async def _audit(tx: UnitOfWork, workspace_id: int, caller_id: int, via: str, action: str, member_id: int,
                 now: datetime, details: dict | None = None) -> None:
    await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=caller_id, via=via, action=action,
                               subject=team_audit.member_subject(member_id), details=details)


async def _caller(tx: UnitOfWork, workspace_id: int, caller_id: int) -> Record:
    caller = await roster_queries.member(tx, workspace_id, caller_id)
    if caller is None:  # the guard let an active member's credential through; this is a programming error
        raise LookupError(f"caller {caller_id} is not a member of workspace {workspace_id}")
    return caller


async def _judged(tx: UnitOfWork, workspace_id: int, caller_id: int, member_id: int, *, standing: bool = False,
                  leaving: bool = False) -> tuple[Record, Record, list[int]]:
    """(caller, target, active admins) once the rules every change shares hold: the target exists and is not
    removed; a change of an admin's `standing` (suspend, reactivate, remove) is an admin's to make; and when the
    target is `leaving` (suspended or removed), the last active admin stays."""
    admins = await roster_queries.lock_admins(tx, workspace_id)
    caller = await _caller(tx, workspace_id, caller_id)
    target = await roster_queries.member(tx, workspace_id, member_id, for_update=True)
    if target is None:
        raise NOT_FOUND
    if target["status"] == "removed":
        raise MEMBER_REMOVED
    if standing and target["role"] == "admin" and caller["role"] != "admin":
        raise ADMIN_REQUIRED
    if leaving and admins == [member_id]:
        raise LAST_ADMIN
    return caller, target, admins


def _granted(caller: Record, role: str, permissions: list[str] | None) -> list[str]:
    """The permissions a member of `role` gets: the role's default, or those asked for, each held by the caller."""
    if role == "admin":
        return [scope_rules.ALL]
    if permissions is None:
        return list(scope_rules.AGENT_PERMISSIONS)
    try:
        asked = scope_rules.parse_scopes(permissions)
    except scope_rules.InvalidScopes as err:
        raise RosterRefusal(400, "invalid_permissions", f"Invalid permissions: {err}.") from None
    missing = [p for p in asked if not scope_rules.covers(caller["permissions"], (p.removesuffix(":read"),),
                                                          "GET" if p.endswith(":read") else "POST")]
    if missing:
        raise RosterRefusal(403, "permission_not_held",
                            f"You cannot grant permissions you do not hold yourself: {', '.join(missing)}.")
    return list(asked)
