"""The connectors' dynamic dropdowns as read use cases: the approved templates, the active members, the
contacts' tags, each item a `Choice` (its value what the action's field takes, its label what a person reads);
each platform's door shapes them (Zapier's `{id, label}`, Make's `{label, value}`). Each needs what reading its
data needs elsewhere: templates the templates permission, members the team overview's, tags the contacts'."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import msgspec

from inbox_actors.connectors import sources
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Done, Outcome
from inbox_actors.use_cases.use_case import Kind, UseCase
from persistence.database import Database

Items = Callable[[Database, int], Awaitable[Sequence[tuple[str | int, str]]]]


class NoArguments(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A dropdown of the caller's workspace."""


class Choice(msgspec.Struct, frozen=True):
    value: str | int
    label: str


def _listed(items: Items):
    async def handler(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
        return Done([Choice(value, label) for value, label in await items(deps.db, caller.workspace_id)])

    return handler


# -- the declarations ----------------------------------------------------------------------------------------

TEMPLATE_CHOICES = UseCase("template_choices", NoArguments, permissions.TEMPLATES, Kind.READ,
                           _listed(sources.templates))
MEMBER_CHOICES = UseCase("member_choices", NoArguments, permissions.TEAM_OVERVIEW, Kind.READ,
                         _listed(sources.members))
TAG_CHOICES = UseCase("tag_choices", NoArguments, permissions.CONTACTS, Kind.READ, _listed(sources.tags))
BY_SOURCE = {"templates": TEMPLATE_CHOICES, "members": MEMBER_CHOICES, "tags": TAG_CHOICES}
"""Each dropdown by the name the action fields give its source (`…/sources/<name>`, `rpc://<name>`)."""
