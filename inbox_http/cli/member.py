"""`inbox-actors member`: add team members, suspend or remove them, and let them sign in (a link that sets their
password, or a password the operator sets)."""

from __future__ import annotations

import argparse
import getpass
import sys
from datetime import datetime, timezone
from typing import Any

import trio

from inbox_actors.access import accounts, invites
from inbox_actors.domain import team_audit
from inbox_http.cli.console import comma_list
from inbox_http.cli.database import DatabaseCommand
from inbox_http.settings import Settings
from persistence.database import Database


def add_commands(commands: Any) -> None:
    member = commands.add_parser("member", help="add team members, suspend or remove them, let them sign in")
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
    invite = member_commands.add_parser("invite", help="make a one-time link that sets the member's password "
                                                       "(printed once; earlier links stop working)")
    invite.add_argument("--member", required=True, type=int, metavar="USER_ID")
    invite.add_argument("--hours", type=int, default=invites.DEFAULT_INVITE_HOURS, metavar="N",
                        help=f"how long the link works, {invites.INVITE_HOURS[0]} to {invites.INVITE_HOURS[1]} "
                             f"(default {invites.DEFAULT_INVITE_HOURS})")
    invite.add_argument("--base-url", metavar="URL",
                        help="the web app's address as members reach it (default: http://INBOX_HOST:INBOX_PORT)")
    password = member_commands.add_parser("set-password", help="set the member's password, read from stdin "
                                                               "(ends their sessions)")
    password.add_argument("--member", required=True, type=int, metavar="USER_ID")


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


async def invite(db: Database, args: argparse.Namespace) -> dict:
    base_url = _base_url(args.base_url)
    issued = await invites.invite_member(db, member_id=args.member, now=datetime.now(timezone.utc),
                                         created_by=team_audit.OPERATOR, hours=args.hours)
    return {"user_id": issued.member_id, "email": issued.email, "invite_url": base_url + issued.path,
            "expires_at": issued.expires_at.isoformat()}


async def set_password(db: Database, args: argparse.Namespace) -> dict:
    password = await trio.to_thread.run_sync(_read_password)
    await accounts.set_member_password(db, member_id=args.member, password=password)
    return {"user_id": args.member, "password_set": True}


def _base_url(given: str | None) -> str:
    if given is not None:
        if not given.startswith(("http://", "https://")):
            raise invites.InviteError(f"--base-url must be an http:// or https:// URL, not {given!r}")
        return given.rstrip("/")
    settings = Settings.from_environment()
    # Listening on every address names none a browser can visit: this machine's is the one that surely works.
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::") else settings.host
    return f"http://{f'[{host}]' if ':' in host else host}:{settings.port}"


def _read_password() -> str:
    """From a terminal without echoing it; otherwise stdin's first line (a password never appears in arguments,
    which other users of the machine can read)."""
    if sys.stdin.isatty():
        return getpass.getpass("New password: ")
    return sys.stdin.readline().removesuffix("\n").removesuffix("\r")


COMMANDS: dict[str | None, DatabaseCommand] = {
    "add": add,
    "set-status": set_status,
    "invite": invite,
    "set-password": set_password,
}
