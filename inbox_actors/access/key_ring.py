"""The key ring: one actor per workspace, the single writer of that workspace's API keys.

Serialising a workspace's key changes through one actor makes "at most 20 active keys" and rotation atomic
without table locks. Every change is committed before the reply, and the process's credential cache forgets
the workspace's keys before the reply too, so a revoked key is refused from the very next request (other
processes hear of it through PostgreSQL's NOTIFY).

Expected refusals (bad values, unknown key, wrong state, limits) are replies (`KeyRefusal`), not crashes.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import msgspec

from inbox_actors.access.credentials import CredentialCache
from inbox_actors.domain import key_rules, team_audit
from inbox_actors.domain.api_keys import generate_key, hash_key
from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.domain.plans import Plan
from inbox_actors.domain.scopes import is_read_only
from inbox_actors.runtime import Actor, ActorKind, ActorSystem, workspace_in_key
from inbox_actors.runtime.clock import Clock
from persistence.database import Database, Record, UnitOfWork
from persistence.queries import api_keys as key_queries
from persistence.queries import team_audit as audit_queries
from persistence.queries import workspaces as workspace_queries

KIND = "key_ring"

# -- messages ------------------------------------------------------------------------------------------------


# Each change names who made it, for the team audit log: the acting member (None: the operator's command line)
# and how ("api_key:<id>", "member:<id>" for a dashboard session, "operator").


class CreateKey(msgspec.Struct, frozen=True):
    created_by: int
    name: str
    scopes: tuple[str, ...]
    expires_in_days: int | None = None
    rate_limit_per_minute: int | None = None
    via: str = team_audit.OPERATOR


class EditKey(msgspec.Struct, frozen=True):
    """Fields left UNSET keep their value; None clears an expiry or a custom limit."""

    key_id: int
    name: str | msgspec.UnsetType = msgspec.UNSET
    expires_in_days: int | None | msgspec.UnsetType = msgspec.UNSET
    rate_limit_per_minute: int | None | msgspec.UnsetType = msgspec.UNSET
    limits_exempt: bool | msgspec.UnsetType = msgspec.UNSET
    by_member: int | None = None
    via: str = team_audit.OPERATOR


class RotateKey(msgspec.Struct, frozen=True):
    key_id: int
    grace_hours: int = key_rules.DEFAULT_GRACE_HOURS
    by_member: int | None = None
    via: str = team_audit.OPERATOR


class RevokeKey(msgspec.Struct, frozen=True):
    key_id: int
    by_member: int | None = None
    via: str = team_audit.OPERATOR


# -- replies -------------------------------------------------------------------------------------------------


class KeyView(msgspec.Struct, frozen=True):
    """A key as listings show it: never its plaintext or hash."""

    id: int
    name: str
    scopes: list[str]
    read_only: bool
    status: str
    rate_limit_per_minute: int | None
    limits_exempt: bool
    """Exempt from the default per-key limit and the per-IP ceiling (a long-standing integration); a limit set on
    the key still applies. Only an admin changes it, and the team audit log records each change."""
    expires_at: datetime | None
    created_at: datetime
    created_by: MemberRef
    last_used_at: datetime | None
    revoked_at: datetime | None
    replaced_by: int | None
    grace_until: datetime | None


class IssuedKey(KeyView, frozen=True):
    key: str  # the plaintext, in this one reply only


class Rotation(msgspec.Struct, frozen=True):
    key: IssuedKey
    previous: KeyView


class KeyRefusal(msgspec.Struct, frozen=True):
    status: int
    error: str
    message: str


def key_view(row: Record, now: datetime) -> KeyView:
    return KeyView(
        id=row["id"], name=row["name"], scopes=list(row["scopes"]), read_only=row["read_only"],
        status=key_rules.key_status(revoked_at=row["revoked_at"], expires_at=row["expires_at"],
                                    replaced_by=row["replaced_by"], grace_until=row["grace_until"], now=now),
        rate_limit_per_minute=row["rate_limit_per_minute"], limits_exempt=row["limits_exempt"],
        expires_at=row["expires_at"],
        created_at=row["created_at"], created_by=MemberRef(user_id=row["created_by"], name=row["created_by_name"]),
        last_used_at=row["last_used_at"], revoked_at=row["revoked_at"], replaced_by=row["replaced_by"],
        grace_until=row["grace_until"],
    )


# -- the actor -----------------------------------------------------------------------------------------------


class KeyRing(Actor):
    def __init__(self, key: str, db: Database, clock: Clock, credentials: CredentialCache) -> None:
        super().__init__(key)
        self.workspace_id = int(key)
        self._db, self._clock, self._credentials = db, clock, credentials

    async def receive(self, message: object) -> object:
        try:
            match message:
                case CreateKey():
                    return await self._create(message)
                case EditKey():
                    return await self._edit(message)
                case RotateKey():
                    return await self._rotate(message)
                case RevokeKey():
                    return await self._revoke(message)
        except key_rules.KeyRuleError as err:
            return KeyRefusal(400, err.code, str(err))
        raise TypeError(f"key ring cannot handle {type(message).__name__}")

    async def _create(self, request: CreateKey) -> IssuedKey | KeyRefusal:
        name = key_rules.key_name(request.name)
        scopes = key_rules.key_scopes(request.scopes)
        key_rules.expiry_days(request.expires_in_days)
        key_rules.rate_limit(request.rate_limit_per_minute)
        now = self._clock.now()
        async with self._db.transaction() as tx:
            refusal = await self._check_plan(tx) or await self._check_room(tx, now)
            if refusal is not None:
                return refusal
            issued = await self._insert(tx, now, created_by=request.created_by, name=name, scopes=list(scopes),
                                        expires_at=_expiry(now, request.expires_in_days),
                                        rate_limit=request.rate_limit_per_minute)
            await self._audit(tx, now, request.created_by, request.via, team_audit.KEY_CREATED, issued.id,
                              {"name": name, "scopes": list(scopes)})
        self._credentials.forget_workspace(self.workspace_id)
        return issued

    async def _edit(self, request: EditKey) -> KeyView | KeyRefusal:
        now = self._clock.now()
        async with self._db.transaction() as tx:
            row = await key_queries.find_key(tx, self.workspace_id, request.key_id, for_update=True)
            refusal = _must_be_active(row, request.key_id, now)
            if refusal is not None:
                return refusal
            name = row["name"] if request.name is msgspec.UNSET else key_rules.key_name(request.name)
            expires_at = row["expires_at"]
            if request.expires_in_days is not msgspec.UNSET:
                expires_at = _expiry(now, key_rules.expiry_days(request.expires_in_days))
            limit = row["rate_limit_per_minute"]
            if request.rate_limit_per_minute is not msgspec.UNSET:
                limit = key_rules.rate_limit(request.rate_limit_per_minute)
            exempt = row["limits_exempt"] if request.limits_exempt is msgspec.UNSET else request.limits_exempt
            await key_queries.update_key(tx, request.key_id, name=name, expires_at=expires_at,
                                         rate_limit_per_minute=limit, limits_exempt=exempt)
            await self._audit(tx, now, request.by_member, request.via, team_audit.KEY_EDITED, request.key_id,
                              {"name": name, "expires_at": expires_at.isoformat() if expires_at else None,
                               "rate_limit_per_minute": limit, "limits_exempt": exempt})
            updated = await key_queries.find_key(tx, self.workspace_id, request.key_id)
        self._credentials.forget_workspace(self.workspace_id)
        return key_view(updated, now)

    async def _rotate(self, request: RotateKey) -> Rotation | KeyRefusal:
        grace = key_rules.grace_hours(request.grace_hours)
        now = self._clock.now()
        async with self._db.transaction() as tx:
            old = await key_queries.find_key(tx, self.workspace_id, request.key_id, for_update=True)
            # A rotation creates a key, so the plan must allow keys; the old one still counts as it leaves.
            refusal = _must_be_active(old, request.key_id, now) or await self._check_plan(tx)
            if refusal is not None:
                return refusal
            # The replacement keeps the name, scopes, limit and expiry; the old key stops after the grace period.
            issued = await self._insert(tx, now, created_by=old["created_by"], name=old["name"],
                                        scopes=list(old["scopes"]), expires_at=old["expires_at"],
                                        rate_limit=old["rate_limit_per_minute"])
            await key_queries.mark_rotated(tx, old["id"], replaced_by=issued.id,
                                           grace_until=now + timedelta(hours=grace))
            await self._audit(tx, now, request.by_member, request.via, team_audit.KEY_ROTATED, old["id"],
                              {"replaced_by": issued.id, "grace_hours": grace})
            previous = await key_queries.find_key(tx, self.workspace_id, old["id"])
        self._credentials.forget_workspace(self.workspace_id)
        return Rotation(key=issued, previous=key_view(previous, now))

    async def _revoke(self, request: RevokeKey) -> KeyView | KeyRefusal:
        now = self._clock.now()
        async with self._db.transaction() as tx:
            row = await key_queries.find_key(tx, self.workspace_id, request.key_id, for_update=True)
            if row is None:
                return _not_found(request.key_id)
            if row["revoked_at"] is None:  # revoking twice changes nothing: revocation is final
                await key_queries.revoke_key(tx, row["id"], now)
                await self._audit(tx, now, request.by_member, request.via, team_audit.KEY_REVOKED, row["id"])
                row = await key_queries.find_key(tx, self.workspace_id, row["id"])
        self._credentials.forget_workspace(self.workspace_id)
        return key_view(row, now)

    async def _audit(self, tx: UnitOfWork, now: datetime, member_id: int | None, via: str, action: str, key_id: int,
                     details: dict | None = None) -> None:
        await audit_queries.record(tx, workspace_id=self.workspace_id, at=now, member_id=member_id, via=via,
                                   action=action, subject=team_audit.key_subject(key_id), details=details)

    async def _check_plan(self, tx) -> KeyRefusal | None:
        # Locks the workspace row: a second process creating keys for it waits, so the limit of 20 holds.
        workspace = await workspace_queries.find_workspace(tx, self.workspace_id, for_update=True)
        if Plan(workspace["plan"]) is Plan.STARTER:
            return KeyRefusal(403, "api_not_in_plan",
                              "The Starter plan has no API access, so its keys cannot be created.")
        return None

    async def _check_room(self, tx, now: datetime) -> KeyRefusal | None:
        if await key_queries.count_active_keys(tx, self.workspace_id, now) >= key_rules.MAX_ACTIVE_KEYS:
            return KeyRefusal(409, "key_limit_reached",
                              f"A workspace holds at most {key_rules.MAX_ACTIVE_KEYS} active keys; revoke one first.")
        return None

    async def _insert(self, tx, now: datetime, *, created_by: int, name: str, scopes: list[str],
                      expires_at: datetime | None, rate_limit: int | None) -> IssuedKey:
        return await issue_key(tx, now, workspace_id=self.workspace_id, created_by=created_by, name=name,
                               scopes=scopes, expires_at=expires_at, rate_limit=rate_limit)


async def issue_key(tx: UnitOfWork, now: datetime, *, workspace_id: int, created_by: int, name: str,
                    scopes: list[str], expires_at: datetime | None, rate_limit: int | None) -> IssuedKey:
    """Make a key's plaintext, store its hash, and return the view with the plaintext (the only time it is
    seen). The caller has validated the values and holds the transaction."""
    plaintext = generate_key()
    inserted = await key_queries.insert_key(
        tx, workspace_id=workspace_id, created_by=created_by, name=name, key_hash=hash_key(plaintext),
        scopes=scopes, read_only=is_read_only(scopes), rate_limit_per_minute=rate_limit, expires_at=expires_at,
    )
    row = await key_queries.find_key(tx, workspace_id, inserted["id"])
    return IssuedKey(**msgspec.structs.asdict(key_view(row, now)), key=plaintext)


def _expiry(now: datetime, days: int | None) -> datetime | None:
    return None if days is None else now + timedelta(days=days)


def _not_found(key_id: int) -> KeyRefusal:
    return KeyRefusal(404, "not_found", f"No key {key_id} in this workspace.")


def _must_be_active(row: Record | None, key_id: int, now: datetime) -> KeyRefusal | None:
    if row is None:
        return _not_found(key_id)
    status = key_view(row, now).status
    if status != "active":
        return KeyRefusal(409, "key_not_active", f"Key {key_id} is {status}; only an active key can change.")
    return None


# -- kind and client API -------------------------------------------------------------------------------------


def key_ring_kind(db: Database, clock: Clock, credentials: CredentialCache, *, idle_timeout: float = 300.0
                  ) -> ActorKind:
    # An ask ends at its deadline (10 s) even while a key is being made; the key then exists without anyone
    # holding its plaintext, shows in the key list, and is revoked like any lost key.
    return ActorKind(name=KIND, factory=lambda key: KeyRing(key, db, clock, credentials),
                     mailbox_capacity=32, idle_timeout=idle_timeout, workspace_of=workspace_in_key)


async def change_keys(actors: ActorSystem, workspace_id: int,
                      request: CreateKey | EditKey | RotateKey | RevokeKey) -> object:
    """Send a key change to the workspace's key ring; returns its reply (a view, or a KeyRefusal)."""
    return await actors.ref(KIND, str(workspace_id)).ask(request)
