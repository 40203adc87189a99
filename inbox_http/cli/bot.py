"""`inbox-actors bot`: the answers the bot gives customers, added, listed and removed through the bot's use cases
(`use_cases/bot.py`) as the operator: the API's rules, and the same audit records."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from inbox_actors.conversations.bot import BotAnswerError
from inbox_actors.use_cases import bot
from inbox_actors.use_cases.use_case import UseCase
from inbox_http.cli.console import comma_list
from inbox_http.cli.database import DatabaseCommand
from inbox_http.cli.operator import run_as_operator
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
    added = await _run(db, args.workspace, bot.ADD_ANSWER, {"keywords": comma_list(args.keywords),
                                                            "answer": args.answer})
    return {"answer_id": added.answer_id, "keywords": added.keywords}


async def list_(db: Database, args: argparse.Namespace) -> dict:
    answers = await _run(db, args.workspace, bot.ANSWERS, {})
    return {"workspace_id": args.workspace, "answers": msgspec.to_builtins(answers.data)}


async def remove(db: Database, args: argparse.Namespace) -> dict:
    return msgspec.to_builtins(await _run(db, args.workspace, bot.REMOVE_ANSWER, {"answer_id": args.answer}))


async def _run(db: Database, workspace_id: int, use_case: UseCase, arguments: dict[str, Any]) -> Any:
    """The bot's use case as the operator; its refusal is the bot's operator error (exit 2, its sentence)."""
    return await run_as_operator(db, workspace_id, use_case, arguments, BotAnswerError)


COMMANDS: dict[str | None, DatabaseCommand] = {
    "add": add,
    "list": list_,
    "remove": remove,
}
