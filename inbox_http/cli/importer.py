"""`inbox-actors import`: bring records of an earlier system into a workspace."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import msgspec

from inbox_actors.access.accounts import AccountError
from inbox_actors.conversations import web_chat_import
from inbox_actors.team.audit_import import UnknownWorkspace, import_audit_log
from inbox_http.cli.database import DatabaseCommand
from persistence.database import Database


def add_commands(commands: Any) -> None:
    importer = commands.add_parser("import", help="bring records of an earlier system into a workspace")
    import_commands = importer.add_subparsers(dest="action", required=True, metavar="WHAT")
    audit = import_commands.add_parser(
        "audit-log", help="an earlier team audit log (JSON lines of claims, releases and transfers) as the chats' "
                          "assignment history from before this workspace began recording (source: audit)")
    audit.add_argument("file", type=Path, metavar="FILE", help="JSON lines; - for standard input")
    audit.add_argument("--workspace", required=True, type=int, metavar="ID")
    web = import_commands.add_parser(
        "web-chats", help="chats from a web-client session (JSON lines, a chat each) as history of channel web_client")
    web.add_argument("file", type=Path, metavar="FILE", help="JSON lines; - for standard input")
    web.add_argument("--workspace", required=True, type=int, metavar="ID")


async def audit_log(db: Database, args: argparse.Namespace) -> dict:
    try:
        lines = _read_lines(args.file)
        report = await import_audit_log(db, args.workspace, lines)
    except (OSError, UnknownWorkspace) as err:
        raise AccountError(str(err)) from None
    return msgspec.to_builtins(report)


async def web_chats(db: Database, args: argparse.Namespace) -> dict:
    try:
        lines = _read_lines(args.file)
        report = await web_chat_import.import_web_chats(db, args.workspace, lines)
    except (OSError, web_chat_import.UnknownWorkspace) as err:
        raise AccountError(str(err)) from None
    return msgspec.to_builtins(report)


def _read_lines(path: Path) -> list[bytes]:
    if str(path) == "-":
        return sys.stdin.buffer.read().splitlines()
    return path.read_bytes().splitlines()


COMMANDS: dict[str | None, DatabaseCommand] = {
    "audit-log": audit_log,
    "web-chats": web_chats,
}
