"""`inbox-actors session`: issue a member's dashboard session."""

from __future__ import annotations

import argparse
from typing import Any

from inbox_actors.access.sessions import create_session
from inbox_http.cli.database import DatabaseCommand
from persistence.database import Database


def add_commands(commands: Any) -> None:
    session = commands.add_parser("session", help="issue a member's dashboard session (accepted by key management)")
    session_commands = session.add_subparsers(dest="action", required=True, metavar="ACTION")
    session_create = session_commands.add_parser("create", help="create a session token (printed once)")
    session_create.add_argument("--member", required=True, type=int, metavar="USER_ID")
    session_create.add_argument("--hours", type=int, default=12, metavar="N", help="lifetime, 1 to 720 (default 12)")


async def create(db: Database, args: argparse.Namespace) -> dict:
    token, expires_at = await create_session(db, member_id=args.member, hours=args.hours)
    return {"user_id": args.member, "token": token, "expires_at": expires_at.isoformat()}


COMMANDS: dict[str | None, DatabaseCommand] = {"create": create}
