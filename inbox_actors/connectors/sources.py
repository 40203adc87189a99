"""The dynamic dropdowns' lists (`…/sources/{templates,members,tags}`): each item an id (what the action's field
takes) and a label, in the workspace's data; the platform's shape is `zapier_shapes`' or `make_shapes`'."""

from __future__ import annotations

from inbox_actors.platform import templates as template_rules
from persistence.database import Database
from persistence.queries import connectors as queries

MAX_ITEMS = 500


async def templates(db: Database, workspace_id: int) -> list[tuple[str, str]]:
    """Approved templates (only those can be sent): their name, labelled with language and parameter count."""
    found = await template_rules.workspace_templates(db, workspace_id, status_name="APPROVED")
    seen: dict[str, str] = {}
    for template in found[:MAX_ITEMS]:
        parameters = f", {template.parameter_count} parameters" if template.parameter_count else ""
        label = f"{template.name} ({template.language}{parameters})"
        seen[template.name] = f"{seen[template.name]}; {label}" if template.name in seen else label
    return list(seen.items())


async def members(db: Database, workspace_id: int) -> list[tuple[int, str]]:
    """Active team members: their user id, labelled with name (and email when they have one)."""
    return [(row["id"], f"{row['name']} ({row['email']})" if row["email"] else row["name"])
            for row in await queries.active_members(db, workspace_id, MAX_ITEMS)]


async def tags(db: Database, workspace_id: int) -> list[tuple[str, str]]:
    """The tags the workspace's contacts carry, with how many carry each."""
    return [(row["tag"], f"{row['tag']} ({row['contacts']})")
            for row in await queries.workspace_tags(db, workspace_id, MAX_ITEMS)]
