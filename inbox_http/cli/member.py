"""`inbox-actors member`: add team members, suspend or remove them."""

from __future__ import annotations

import argparse
from typing import Any

from inbox_actors.access import accounts
from inbox_http.cli.console import comma_list
from inbox_http.cli.database import DatabaseCommand
from persistence.database import Database


def add_commands(commands: Any) -> None:
    member = commands.add_parser("member", help="add team members, suspend or remove them")
    member_commands = member.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = member_commands.add_parser("add", help="add a member to a workspace")
    add.add_argument("--workspace", required=True, type=int, metavar="ID")
    add.add_argument("--name", required=True)
    add.add_argument("--email")
    add.add_argument("--role", required=True, choices=("admin", "agent"))
    add.add_argument("--assigned-only", action="store_true", help="the member sees only chats assigned to them")
    add.add_argument("--permissions", metavar="SCOPE,SCOPE",
                     help="the member's permissions in scope names (default: all for admins, "
                          "inbox,contacts,templates,whatsapp_api,analytics:read for agents)")
    status = member_commands.add_parser("set-status", help="suspend, remove or reactivate a member")
    status.add_argument("--member", required=True, type=int, metavar="USER_ID")
    status.add_argument("--status", required=True, choices=("active", "suspended", "removed"))


async def add(db: Database, args: argparse.Namespace) -> dict:
    permissions = comma_list(args.permissions) if args.permissions is not None else None
    user_id = await accounts.add_member(
        db, workspace_id=args.workspace, name=args.name, email=args.email, role=args.role,
        assigned_only=args.assigned_only, permissions=permissions,
    )
    return {"user_id": user_id}


async def set_status(db: Database, args: argparse.Namespace) -> dict:
    await accounts.set_member_status(db, member_id=args.member, status=args.status)
    return {"user_id": args.member, "status": args.status}


COMMANDS: dict[str | None, DatabaseCommand] = {
    "add": add,
    "set-status": set_status,
}
