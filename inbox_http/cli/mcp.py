"""`inbox-actors mcp token create|list|revoke`: MCP tokens from the operator's side, for any member of a workspace
(the HTTP settings call makes them for the caller's own member). The plaintext is printed once."""

from __future__ import annotations

import argparse
from datetime import datetime, timezone
from typing import Any

import msgspec

from inbox_actors.access.accounts import AccountError
from inbox_actors.mcp import tokens
from inbox_http.cli.database import DatabaseCommand
from persistence.database import Database
from persistence.queries import workspaces as workspace_queries


def add_commands(commands: Any) -> None:
    group = commands.add_parser("mcp", help="MCP tokens (POST /api/mcp)")
    subjects = group.add_subparsers(dest="subject", required=True, metavar="SUBJECT")
    token = subjects.add_parser("token", help="create, list and revoke MCP tokens")
    actions = token.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = actions.add_parser("create", help="create a token acting as a member (plaintext printed once)")
    create.add_argument("--workspace", required=True, type=int, metavar="ID")
    create.add_argument("--member", required=True, type=int, metavar="USER_ID", help="the member it acts as")
    create.add_argument("--name", default="MCP client", help="what it is for (default: MCP client)")
    listing = actions.add_parser("list", help="the workspace's tokens, newest first (never a plaintext)")
    listing.add_argument("--workspace", required=True, type=int, metavar="ID")
    revoke = actions.add_parser("revoke", help="revoke a token at once")
    revoke.add_argument("--workspace", required=True, type=int, metavar="ID")
    revoke.add_argument("--id", required=True, type=int, metavar="TOKEN_ID")


async def create(db: Database, args: argparse.Namespace) -> dict:
    try:
        issued = await tokens.create_token(db, workspace_id=args.workspace, member_id=args.member, name=args.name)
    except tokens.TokenError as err:
        raise AccountError(str(err)) from None
    return msgspec.to_builtins(issued)


async def list_tokens(db: Database, args: argparse.Namespace) -> dict:
    await _workspace(db, args.workspace)
    return {"workspace_id": args.workspace,
            "data": msgspec.to_builtins(await tokens.list_tokens(db, args.workspace))}


async def revoke(db: Database, args: argparse.Namespace) -> dict:
    revoked = await tokens.revoke_token(db, args.workspace, args.id, datetime.now(timezone.utc))
    if revoked is None:
        raise AccountError(f"no MCP token {args.id} in workspace {args.workspace}")
    return msgspec.to_builtins(revoked)


async def _workspace(db: Database, workspace_id: int) -> None:
    if await workspace_queries.find_workspace_created(db, workspace_id) is None:
        raise AccountError(f"no workspace {workspace_id}")


COMMANDS: dict[str | None, DatabaseCommand] = {"create": create, "list": list_tokens, "revoke": revoke}
