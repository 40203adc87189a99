"""A workspace's API keys: create, edit, rotate and revoke. The workspace's key ring actor owns its keys (the
20-key cap and a rotation's grace are races it settles) and decides each change; this module turns its refusals
into the `Refused` every front door answers. Who may manage keys is the admin rule of the auth ladder
(`domain/auth_ladder.py`), checked before a change reaches here."""

from __future__ import annotations

from msgspec import UNSET, UnsetType

from inbox_actors.access import key_ring
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Refused, reason_of_status


async def create(deps: UseCaseDeps, caller: Caller, *, name: str, scopes: tuple[str, ...],
                 expires_in_days: int | None, rate_limit_per_minute: int | None) -> key_ring.IssuedKey | Refused:
    """A new key acting as the caller's member; its plaintext is in this answer only."""
    return await _change(deps, caller, key_ring.CreateKey(
        created_by=caller.member_id, name=name, scopes=scopes, expires_in_days=expires_in_days,
        rate_limit_per_minute=rate_limit_per_minute, via=caller.author))


async def edit(deps: UseCaseDeps, caller: Caller, key_id: int, *, name: str | UnsetType = UNSET,
               expires_in_days: int | None | UnsetType = UNSET,
               rate_limit_per_minute: int | None | UnsetType = UNSET,
               limits_exempt: bool | UnsetType = UNSET) -> key_ring.KeyView | Refused:
    """Change a key's name, expiry (days from now; None: never), limit (None: the default) or its exemption from
    the default limits; UNSET: unchanged."""
    return await _change(deps, caller, key_ring.EditKey(
        key_id=key_id, name=name, expires_in_days=expires_in_days, rate_limit_per_minute=rate_limit_per_minute,
        limits_exempt=limits_exempt, by_member=caller.member_id, via=caller.author))


async def rotate(deps: UseCaseDeps, caller: Caller, key_id: int, grace_hours: int) -> key_ring.Rotation | Refused:
    return await _change(deps, caller, key_ring.RotateKey(key_id=key_id, grace_hours=grace_hours,
                                                          by_member=caller.member_id, via=caller.author))


async def revoke(deps: UseCaseDeps, caller: Caller, key_id: int) -> key_ring.KeyView | Refused:
    return await _change(deps, caller, key_ring.RevokeKey(key_id=key_id, by_member=caller.member_id,
                                                          via=caller.author))


async def _change(deps: UseCaseDeps, caller: Caller, request: object):
    reply = await key_ring.change_keys(deps.actors, caller.workspace_id, request)
    if isinstance(reply, key_ring.KeyRefusal):
        return Refused(reason_of_status(reply.status), reply.message, reply.status, reply.error)
    return reply
