"""`inbox-actors import`: bring records of an earlier system into a workspace."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec

from inbox_actors.access.accounts import AccountError
from inbox_actors.conversations.web_chat_import import import_web_chats
from inbox_actors.domain.jsonl_import import UnknownWorkspace
from inbox_actors.team.audit_import import import_audit_log
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


Importer = Callable[[Database, int, list[bytes]], Awaitable[msgspec.Struct]]


def _importing(importer: Importer) -> DatabaseCommand:
    """The command that runs `importer` on the file's lines and prints its report."""
    async def command(db: Database, args: argparse.Namespace) -> dict:
        try:
            report = await importer(db, args.workspace, _read_lines(args.file))
        except (OSError, UnknownWorkspace) as err:
            raise AccountError(str(err)) from None
        return msgspec.to_builtins(report)

    return command


def _read_lines(path: Path) -> list[bytes]:
    if str(path) == "-":
        return sys.stdin.buffer.read().splitlines()
    return path.read_bytes().splitlines()


COMMANDS: dict[str | None, DatabaseCommand] = {
    "audit-log": _importing(import_audit_log),
    "web-chats": _importing(import_web_chats),
}
