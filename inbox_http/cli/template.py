"""`inbox-actors template`: register a workspace's message templates."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from inbox_actors.platform import templates
from inbox_http.cli.database import DatabaseCommand
from persistence.database import Database


def add_commands(commands: Any) -> None:
    template = commands.add_parser("template", help="register a workspace's message templates")
    template_commands = template.add_subparsers(dest="action", required=True, metavar="ACTION")
    template_add = template_commands.add_parser("add", help="add a template (one per name and language)")
    template_add.add_argument("--workspace", required=True, type=int, metavar="ID")
    template_add.add_argument("--name", required=True, help="lowercase letters, digits and underscores")
    template_add.add_argument("--language", required=True, metavar="CODE", help="locale code: en, en_US, pt_BR")
    template_add.add_argument("--body", required=True, metavar="TEXT", help="parameters as {{1}}, {{2}}, ...")
    template_add.add_argument("--category", default="UTILITY", metavar="UTILITY|MARKETING|AUTHENTICATION")
    template_add.add_argument("--status", default="APPROVED", metavar="APPROVED|PENDING|REJECTED|PAUSED|DISABLED")
    template_add.add_argument("--parameters", type=int, metavar="N",
                              help="parameter count (default: counted from the body; must agree with it)")
    template_list = template_commands.add_parser("list", help="a workspace's templates by name and language")
    template_list.add_argument("--workspace", required=True, type=int, metavar="ID")
    template_remove = template_commands.add_parser("remove", help="remove a template")
    template_remove.add_argument("--workspace", required=True, type=int, metavar="ID")
    template_remove.add_argument("--name", required=True)
    template_remove.add_argument("--language", required=True, metavar="CODE")


async def add(db: Database, args: argparse.Namespace) -> dict:
    added = await templates.add_template(
        db, workspace_id=args.workspace, name=args.name, language=args.language, body=args.body,
        category_name=args.category, status_name=args.status, parameters=args.parameters,
    )
    return {"template_id": added.template_id, "name": added.name, "language": added.language,
            "parameter_count": added.parameter_count}


async def list_(db: Database, args: argparse.Namespace) -> dict:
    found = await templates.list_templates(db, workspace_id=args.workspace)
    return {"workspace_id": args.workspace, "templates": msgspec.to_builtins(found)}


async def remove(db: Database, args: argparse.Namespace) -> dict:
    removed = await templates.remove_template(db, workspace_id=args.workspace, name=args.name,
                                              language=args.language)
    return {"workspace_id": args.workspace, "name": removed.name, "language": removed.language, "removed": True}


COMMANDS: dict[str | None, DatabaseCommand] = {
    "add": add,
    "list": list_,
    "remove": remove,
}
