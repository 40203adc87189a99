"""`inbox-actors bot`: the answers the bot gives customers."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from inbox_actors.conversations import bot
from inbox_http.cli.console import comma_list
from inbox_http.cli.database import DatabaseCommand
from persistence.database import Database


def add_commands(commands: Any) -> None:
    group = commands.add_parser("bot", help="the answers the bot gives customers")
    bot_commands = group.add_subparsers(dest="action", required=True, metavar="ACTION")
    bot_add = bot_commands.add_parser("add", help="add an answer given when one of its keywords is asked")
    bot_add.add_argument("--workspace", required=True, type=int, metavar="ID")
    bot_add.add_argument("--keywords", required=True, metavar="WORD,PHRASE", help="alternatives: \"price,cost\"")
    bot_add.add_argument("--answer", required=True, metavar="TEXT")
    bot_list = bot_commands.add_parser("list", help="a workspace's answers")
    bot_list.add_argument("--workspace", required=True, type=int, metavar="ID")
    bot_remove = bot_commands.add_parser("remove", help="remove an answer")
    bot_remove.add_argument("--workspace", required=True, type=int, metavar="ID")
    bot_remove.add_argument("--answer", required=True, type=int, metavar="ID")


async def add(db: Database, args: argparse.Namespace) -> dict:
    added = await bot.add_answer(db, workspace_id=args.workspace, keywords=comma_list(args.keywords),
                                 answer=args.answer)
    return {"answer_id": added.answer_id, "keywords": added.keywords}


async def list_(db: Database, args: argparse.Namespace) -> dict:
    answers = await bot.list_answers(db, workspace_id=args.workspace)
    return {"workspace_id": args.workspace, "answers": msgspec.to_builtins(answers)}


async def remove(db: Database, args: argparse.Namespace) -> dict:
    await bot.remove_answer(db, workspace_id=args.workspace, answer_id=args.answer)
    return {"answer_id": args.answer, "removed": True}


COMMANDS: dict[str | None, DatabaseCommand] = {
    "add": add,
    "list": list_,
    "remove": remove,
}
