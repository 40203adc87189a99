"""The connectors' dynamic dropdowns as read use cases: the approved templates, the active members, the
contacts' tags, each item in the platform's shape (Zapier's `{id, label}`, Make's `{label, value}`), its value
what the action's field takes. Each needs what reading its data needs elsewhere: templates the templates
permission, members the team overview's, tags the contacts'."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import msgspec

from inbox_actors.connectors import make_shapes, sources, zapier_shapes
from inbox_actors.connectors.model import Platform
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Done, Outcome
from inbox_actors.use_cases.use_case import Kind, UseCase
from persistence.database import Database

Items = Callable[[Database, int], Awaitable[Sequence[tuple[str | int, str]]]]


class Dropdown(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    platform: Platform


def _shaped(items: Items):
    async def handler(deps: UseCaseDeps, caller: Caller, a: Dropdown) -> Outcome:
        found = await items(deps.db, caller.workspace_id)
        if a.platform is Platform.ZAPIER:
            return Done([zapier_shapes.ZapierChoice(id=value, label=label) for value, label in found])
        return Done([make_shapes.MakeOption(label=label, value=value) for value, label in found])

    return handler


# -- the declarations ----------------------------------------------------------------------------------------

TEMPLATE_CHOICES = UseCase("template_choices", Dropdown, permissions.TEMPLATES, Kind.READ,
                           _shaped(sources.templates))
MEMBER_CHOICES = UseCase("member_choices", Dropdown, permissions.TEAM_OVERVIEW, Kind.READ, _shaped(sources.members))
TAG_CHOICES = UseCase("tag_choices", Dropdown, permissions.CONTACTS, Kind.READ, _shaped(sources.tags))
BY_SOURCE = {"templates": TEMPLATE_CHOICES, "members": MEMBER_CHOICES, "tags": TAG_CHOICES}
"""Each dropdown by the name the action fields give its source (`…/sources/<name>`, `rpc://<name>`)."""
