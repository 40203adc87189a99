"""`inbox-actors key`: issue API keys."""

from __future__ import annotations

import argparse
from typing import Any

from inbox_actors.access import accounts
from inbox_http.cli.console import comma_list
from inbox_http.cli.database import DatabaseCommand
from persistence.database import Database


def add_commands(commands: Any) -> None:
    key = commands.add_parser("key", help="issue API keys")
    key_commands = key.add_subparsers(dest="action", required=True, metavar="ACTION")
    key_create = key_commands.add_parser("create", help="create an API key (plaintext printed once)")
    key_create.add_argument("--workspace", required=True, type=int, metavar="ID")
    key_create.add_argument("--member", required=True, type=int, metavar="USER_ID", help="the key's creator")
    key_create.add_argument("--name", required=True)
    key_create.add_argument("--scopes", required=True, metavar="all|SCOPE,SCOPE")
    key_create.add_argument("--expires-in-days", type=int, metavar="N", help="1 to 730")
    key_create.add_argument("--rate-limit", type=int, metavar="N", help="requests per minute, 10 to 100000")


async def create(db: Database, args: argparse.Namespace) -> dict:
    issued = await accounts.create_key(
        db, workspace_id=args.workspace, member_id=args.member, name=args.name, scopes=comma_list(args.scopes),
        expires_in_days=args.expires_in_days, rate_limit_per_minute=args.rate_limit,
    )
    result = {"id": issued.id, "key": issued.key, "scopes": issued.scopes, "read_only": issued.read_only}
    if issued.expires_at is not None:
        result["expires_at"] = issued.expires_at.isoformat()
    if issued.rate_limit_per_minute is not None:
        result["rate_limit_per_minute"] = issued.rate_limit_per_minute
    return result


COMMANDS: dict[str | None, DatabaseCommand] = {"create": create}
