"""`inbox-actors credits`: a workspace's balance, and top-ups from the operator's side (a payment taken elsewhere)."""

from __future__ import annotations

import argparse
from datetime import datetime, timezone
from typing import Any

import msgspec

from inbox_actors.access.accounts import AccountError
from inbox_actors.credits import ledger
from inbox_http.cli.database import DatabaseCommand
from persistence.database import Database
from persistence.queries import credits as credit_queries
from persistence.queries import workspaces as workspace_queries


def add_commands(commands: Any) -> None:
    group = commands.add_parser("credits", help="a workspace's credits: balance and top-ups")
    actions = group.add_subparsers(dest="action", required=True, metavar="ACTION")
    balance = actions.add_parser("balance", help="the workspace's balance")
    balance.add_argument("--workspace", required=True, type=int, metavar="ID")
    top_up = actions.add_parser("top-up", help="add credits (a ledger entry with your note and reference)")
    top_up.add_argument("--workspace", required=True, type=int, metavar="ID")
    top_up.add_argument("--amount", required=True, type=int, metavar="N", help=f"1 to {ledger.MAX_TOP_UP:,}")
    top_up.add_argument("--note", help="why, for the ledger (up to 500 characters)")
    top_up.add_argument("--reference", help="a payment's id: the same reference again credits nothing")


async def balance(db: Database, args: argparse.Namespace) -> dict:
    await _workspace(db, args.workspace)
    return {"workspace_id": args.workspace, "balance": await credit_queries.balance(db, args.workspace)}


async def top_up(db: Database, args: argparse.Namespace) -> dict:
    await _workspace(db, args.workspace)
    try:
        body = msgspec.convert({"amount": args.amount, "note": args.note, "reference": args.reference},
                               ledger.TopUp)
    except msgspec.ValidationError as err:
        raise AccountError(f"invalid top-up: {err}") from None
    try:
        topped = await ledger.top_up(db, args.workspace, None, body, datetime.now(timezone.utc))
    except ledger.ReferenceUsed as err:
        raise AccountError(str(err)) from None
    return {"workspace_id": args.workspace, **msgspec.to_builtins(topped)}


async def _workspace(db: Database, workspace_id: int) -> None:
    if await workspace_queries.find_workspace_created(db, workspace_id) is None:
        raise AccountError(f"no workspace {workspace_id}")


COMMANDS: dict[str | None, DatabaseCommand] = {
    "balance": balance,
    "top-up": top_up,
}
