"""The team's use cases: the roster (add, change, suspend, reactivate, remove a member, invite one to set a
password) and the SLA policy.

Both are per-workspace settings written in one transaction each (`team/roster.py`, `team/sla.py`), where the
rules live: only an admin makes an admin, a workspace keeps one active admin, a member's permissions stay within
the caller's, business hours the deadline rule can use. This module gives every front door one call per use case
that answers the change or a `Refused` with the rule's status, code and sentence.
"""

from __future__ import annotations

from inbox_actors.access import invites
from inbox_actors.actions.caller import Caller
from inbox_actors.actions.deps import ActionDeps
from inbox_actors.actions.outcomes import Reason, Refused, judged
from inbox_actors.team import roster, sla


async def add_member(deps: ActionDeps, caller: Caller, body: roster.AddMember) -> roster.Member | Refused:
    return await judged(roster.add(deps.db, caller.workspace_id, caller.member_id, caller.author, body,
                                   deps.clock.now()), roster.RosterRefusal)


async def change_member(deps: ActionDeps, caller: Caller, member_id: int,
                        body: roster.ChangeMember) -> roster.Member | Refused:
    return await judged(roster.change(deps.db, caller.workspace_id, caller.member_id, caller.author, member_id,
                                      body, deps.clock.now()), roster.RosterRefusal)


async def suspend_member(deps: ActionDeps, caller: Caller, member_id: int) -> roster.Member | Refused:
    """Their keys and sessions are refused (account_suspended) until reactivated."""
    return await judged(roster.set_status(deps.db, caller.workspace_id, caller.member_id, caller.author,
                                          member_id, "suspended", deps.clock.now()), roster.RosterRefusal)


async def reactivate_member(deps: ActionDeps, caller: Caller, member_id: int) -> roster.Member | Refused:
    return await judged(roster.set_status(deps.db, caller.workspace_id, caller.member_id, caller.author,
                                          member_id, "active", deps.clock.now()), roster.RosterRefusal)


async def remove_member(deps: ActionDeps, caller: Caller, member_id: int) -> roster.Removed | Refused:
    """For good: signed out, keys refused (membership_revoked), open chats back to the hand-off queue."""
    return await judged(roster.remove(deps.db, deps.actors, caller.workspace_id, caller.member_id, caller.author,
                                      member_id, deps.clock.now()), roster.RosterRefusal)


async def invite_member(deps: ActionDeps, caller: Caller, member_id: int) -> invites.Invite | Refused:
    """A new one-time link for a member of the caller's workspace to set their password (their earlier links stop
    working); the link is shown once, to the caller."""
    found = await member(deps, caller, member_id)
    if isinstance(found, Refused):
        return found
    try:
        return await invites.invite_member(deps.db, member_id=member_id, now=deps.clock.now(), created_by=caller.author)
    except invites.InviteError as err:
        return Refused(Reason.REFUSED, f"No invite made: {err}.", 409, "invite_refused")


async def member(deps: ActionDeps, caller: Caller, member_id: int) -> roster.Member | Refused:
    return await judged(roster.one(deps.db, caller.workspace_id, member_id, deps.clock.now()), roster.RosterRefusal)


async def save_sla(deps: ActionDeps, caller: Caller, body: sla.SaveSla) -> sla.SlaPolicy | Refused:
    """Replace the SLA policy; waits that start from now on follow it, chats already waiting keep their deadline."""
    try:
        return await sla.save_policy(deps.db, caller.workspace_id, caller.member_id, caller.author, body,
                                     deps.clock.now())
    except sla.InvalidSlaPolicy as err:
        return Refused(Reason.INVALID, str(err), 400, "invalid_business_hours")

