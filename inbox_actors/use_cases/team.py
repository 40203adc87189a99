"""The team's use cases: the roster (add, change, suspend, reactivate, remove a member, invite one to set a
password), the SLA policy, and the team's reads (the roster, one member, the policy, the audit log, performance,
the hand-off queue).

The writes are per-workspace settings written in one transaction each (`team/roster.py`, `team/sla.py`), where
the rules live: only an admin makes an admin, a workspace keeps one active admin, a member's permissions stay
within the caller's, business hours the deadline rule can use. Their bodies' structs live there too, so that the
field rules are stated once: a use case takes the struct itself, or the struct and the member it is about.

The paged reads take their query parameters as sent (`paging/parameter_catalog.py` lists them); the read parses
them and a parameter it cannot take is refused with its own code (`invalid_limit`, `invalid_cursor`...).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import msgspec

from inbox_actors.access import invites
from inbox_actors.team import audit_log, handoff_queue, performance, roster, sla
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import BIGINT_MAX
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused, judged
from inbox_actors.use_cases.use_case import Kind, UseCase, done

# 0 too: the id a URL's digits beyond any row become (`IdConverter`), answered "no such member" like any other
# id no member has.
MemberNumber = Annotated[int, msgspec.Meta(ge=0, le=BIGINT_MAX, description="The member's user id.")]


class OneMember(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    member_id: MemberNumber


class MemberChange(roster.ChangeMember, frozen=True, kw_only=True):
    """The roster's change (its fields and rules) to the member `member_id`."""

    member_id: MemberNumber


class NoArguments(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    pass


class TeamQuery(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A paged read's query parameters as sent."""

    query: dict[str, str] = {}


# -- the roster ----------------------------------------------------------------------------------------------


async def _add_member(deps: UseCaseDeps, caller: Caller, a: roster.AddMember) -> Outcome:
    return done(await judged(roster.add(deps.db, caller.workspace_id, caller.member_id, caller.author, a,
                                        deps.clock.now()), roster.RosterRefusal))


async def _change_member(deps: UseCaseDeps, caller: Caller, a: MemberChange) -> Outcome:
    # The roster records the fields a change gives: the member it is about is not one of them.
    change = roster.ChangeMember(**{name: getattr(a, name) for name in roster.ChangeMember.__struct_fields__})
    return done(await judged(roster.change(deps.db, caller.workspace_id, caller.member_id, caller.author,
                                           a.member_id, change, deps.clock.now()), roster.RosterRefusal))


async def _suspend_member(deps: UseCaseDeps, caller: Caller, a: OneMember) -> Outcome:
    """Their keys and sessions are refused (account_suspended) until reactivated."""
    return done(await judged(roster.set_status(deps.db, caller.workspace_id, caller.member_id, caller.author,
                                               a.member_id, "suspended", deps.clock.now()), roster.RosterRefusal))


async def _reactivate_member(deps: UseCaseDeps, caller: Caller, a: OneMember) -> Outcome:
    return done(await judged(roster.set_status(deps.db, caller.workspace_id, caller.member_id, caller.author,
                                               a.member_id, "active", deps.clock.now()), roster.RosterRefusal))


async def _remove_member(deps: UseCaseDeps, caller: Caller, a: OneMember) -> Outcome:
    """For good: signed out, keys refused (membership_revoked), open chats back to the hand-off queue."""
    return done(await judged(roster.remove(deps.db, deps.actors, caller.workspace_id, caller.member_id,
                                           caller.author, a.member_id, deps.clock.now()), roster.RosterRefusal))


async def _invite_member(deps: UseCaseDeps, caller: Caller, a: OneMember) -> Outcome:
    """A new one-time link for a member of the caller's workspace to set their password (their earlier links stop
    working); the link is shown once, to the caller."""
    found = await _member(deps, caller, a)
    if isinstance(found, Refused):
        return found
    try:
        return Done(await invites.invite_member(deps.db, member_id=a.member_id, now=deps.clock.now(),
                                                created_by=caller.author))
    except invites.InviteError as err:
        return Refused(Reason.REFUSED, f"No invite made: {err}.", 409, "invite_refused")


async def _member(deps: UseCaseDeps, caller: Caller, a: OneMember) -> Outcome:
    return done(await judged(roster.one(deps.db, caller.workspace_id, a.member_id, deps.clock.now()),
                             roster.RosterRefusal))


# -- the SLA policy ------------------------------------------------------------------------------------------


async def _save_sla(deps: UseCaseDeps, caller: Caller, a: sla.SaveSla) -> Outcome:
    """Replace the SLA policy; waits that start from now on follow it, chats already waiting keep their deadline."""
    try:
        return Done(await sla.save_policy(deps.db, caller.workspace_id, caller.member_id, caller.author, a,
                                          deps.clock.now()))
    except sla.InvalidSlaPolicy as err:
        return Refused(Reason.INVALID, str(err), 400, "invalid_business_hours")


async def _sla_policy(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(await sla.read_policy(deps.db, caller.workspace_id))


# -- the paged reads -----------------------------------------------------------------------------------------

Read = Callable[[UseCaseDeps, Caller, dict[str, str]], Awaitable[Any]]


def _paged(read: Read) -> Callable[[UseCaseDeps, Caller, TeamQuery], Awaitable[Outcome]]:
    """A paged read's handler: its page (a parameter it cannot take is refused by the runner)."""

    async def handler(deps: UseCaseDeps, caller: Caller, a: TeamQuery) -> Outcome:
        return Done(await read(deps, caller, a.query))

    return handler


def _members(deps: UseCaseDeps, caller: Caller, query: dict[str, str]):
    return roster.roster(deps.db, caller.workspace_id, query, deps.clock.now())


def _audit_log(deps: UseCaseDeps, caller: Caller, query: dict[str, str]):
    return audit_log.audit_log(deps.db, caller.workspace_id, query, deps.clock.now())


def _performance(deps: UseCaseDeps, caller: Caller, query: dict[str, str]):
    return performance.team_performance(deps.db, caller.workspace_id, query, deps.clock.now())


def _handoff_queue(deps: UseCaseDeps, caller: Caller, query: dict[str, str]):
    """A caller limited to assigned chats sees only the queued chats its member may see: those of the team queues
    open to them."""
    return handoff_queue.handoff_queue(deps.db, caller.workspace_id, query, deps.clock.now(),
                                       caller.restricted_to)


async def _member_names(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    """Everyone on the team, by name and status (the first NAMED_MEMBERS): whom a chat can go to, who made a
    broadcast. Seeing it is the team overview's permission, which a member working chats holds, unlike the
    roster's."""
    page = await roster.roster(deps.db, caller.workspace_id, {"status": "all", "limit": str(NAMED_MEMBERS)},
                               deps.clock.now())
    return Done(page.data)


NAMED_MEMBERS = 200
"""The roster's largest page: a member beyond it shows by number where a page names members."""


# -- the declarations ----------------------------------------------------------------------------------------

ADD_MEMBER = UseCase("add_member", roster.AddMember, permissions.TEAM_SETTINGS, Kind.WRITE, _add_member)
CHANGE_MEMBER = UseCase("change_member", MemberChange, permissions.TEAM_SETTINGS, Kind.WRITE, _change_member)
SUSPEND_MEMBER = UseCase("suspend_member", OneMember, permissions.TEAM_SETTINGS, Kind.WRITE, _suspend_member)
REACTIVATE_MEMBER = UseCase("reactivate_member", OneMember, permissions.TEAM_SETTINGS, Kind.WRITE, _reactivate_member)
INVITE_MEMBER = UseCase("invite_member", OneMember, permissions.TEAM_SETTINGS, Kind.WRITE, _invite_member)
REMOVE_MEMBER = UseCase("remove_member", OneMember, permissions.REMOVE_MEMBERS, Kind.WRITE, _remove_member)
SAVE_SLA = UseCase("save_sla_policy", sla.SaveSla, permissions.TEAM_SETTINGS, Kind.WRITE, _save_sla)

MEMBERS = UseCase("list_members", TeamQuery, permissions.TEAM_SETTINGS, Kind.READ, _paged(_members))
MEMBER = UseCase("get_member", OneMember, permissions.TEAM_SETTINGS, Kind.READ, _member)
SLA_POLICY = UseCase("get_sla_policy", NoArguments, permissions.TEAM_SETTINGS, Kind.READ, _sla_policy)
AUDIT_LOG = UseCase("read_audit_log", TeamQuery, permissions.AUDIT_LOG, Kind.READ, _paged(_audit_log))
PERFORMANCE = UseCase("team_performance", TeamQuery, permissions.TEAM_DATA, Kind.READ, _paged(_performance))
MEMBER_NAMES = UseCase("list_member_names", NoArguments, permissions.TEAM_OVERVIEW, Kind.READ, _member_names)
HANDOFF_QUEUE = UseCase("handoff_queue", TeamQuery, permissions.TEAM_OVERVIEW, Kind.READ, _paged(_handoff_queue))
