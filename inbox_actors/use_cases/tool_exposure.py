"""Which catalog actions a workspace exposes over MCP, and which need approval in the app.

An action that needs a person's approval in the app cannot be exposed: an assistant would act without it. The
settings call that would leave an action both exposed and needing approval is refused (`NeedsApproval`) and
changes nothing; lifting the approval and exposing can be done in one call.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from inbox_actors.domain import team_audit
from inbox_actors.use_cases.catalog import ACTIONS, BY_NAME, Action
from persistence.database import Database
from persistence.queries import mcp as queries
from persistence.queries import team_audit as audit_queries


class ActionSetting(msgspec.Struct, frozen=True):
    name: str
    title: str
    description: str
    kind: str  # read or write
    permissions: list[str]
    exposed: bool
    needs_approval: bool
    default_exposed: bool
    default_needs_approval: bool


class ActionSettings(msgspec.Struct, frozen=True):
    data: list[ActionSetting]


class ChangeAction(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Fields left out keep their value."""

    exposed: bool | msgspec.UnsetType = msgspec.UNSET
    needs_approval: bool | msgspec.UnsetType = msgspec.UNSET


class UnknownAction(LookupError):
    pass


class NeedsApproval(ValueError):
    pass


async def read_settings(db: Database, workspace_id: int) -> ActionSettings:
    stored = {row["action"]: row for row in await queries.action_settings(db, workspace_id)}
    return ActionSettings([_setting(action, stored.get(action.name)) for action in ACTIONS])


async def exposed_actions(db: Database, workspace_id: int) -> list[Action]:
    """The actions the workspace's MCP tools are, in catalog order."""
    settings = await read_settings(db, workspace_id)
    return [BY_NAME[setting.name] for setting in settings.data if setting.exposed]


async def change_action(db: Database, workspace_id: int, name: str, change: ChangeAction, *, by_member: int,
                        via: str, now: datetime) -> ActionSetting:
    """Save the action's exposure and approval; a change is recorded in the team audit log."""
    action = BY_NAME.get(name)
    if action is None:
        raise UnknownAction(f"There is no action {name!r}; the catalog has {', '.join(BY_NAME)}.")
    async with db.transaction() as tx:
        await queries.lock_workspace_actions(tx, workspace_id)
        stored = {row["action"]: row for row in await queries.action_settings(tx, workspace_id)}
        current = _setting(action, stored.get(name))
        exposed = current.exposed if change.exposed is msgspec.UNSET else change.exposed
        needs_approval = current.needs_approval if change.needs_approval is msgspec.UNSET else change.needs_approval
        if exposed and needs_approval:
            raise NeedsApproval(
                f"{name} needs approval in the app, so it cannot be exposed over MCP: an assistant would act "
                "without that approval. Set needs_approval to false first (or in the same call) to expose it."
                if change.exposed is not msgspec.UNSET else
                f"{name} is exposed over MCP; unexpose it (exposed: false) before requiring approval for it.")
        await queries.save_action(tx, workspace_id, name, exposed=exposed, needs_approval=needs_approval)
        if (exposed, needs_approval) != (current.exposed, current.needs_approval):
            await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=by_member, via=via,
                                       action=team_audit.MCP_ACTION_CHANGED,
                                       subject=team_audit.mcp_action_subject(name),
                                       details={"exposed": exposed, "needs_approval": needs_approval,
                                                "was": {"exposed": current.exposed,
                                                        "needs_approval": current.needs_approval}})
    return msgspec.structs.replace(current, exposed=exposed, needs_approval=needs_approval)


def _setting(action: Action, row) -> ActionSetting:
    return ActionSetting(
        name=action.name, title=action.title, description=action.description, kind=action.kind.value,
        permissions=list(action.permissions),
        exposed=row["exposed"] if row is not None else action.default_exposed,
        needs_approval=row["needs_approval"] if row is not None else action.default_needs_approval,
        default_exposed=action.default_exposed, default_needs_approval=action.default_needs_approval)
