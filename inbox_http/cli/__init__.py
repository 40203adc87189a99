"""`inbox-actors`: the operator's command line.

Every command prints one JSON object on stdout, so scripts can drive it. Bad arguments print a message on
stderr and exit with status 2, having written nothing; an unreachable database exits with status 1.

One module per command group: each adds its parser (`add_command` / `add_commands`) and, when it runs
against the database, maps its actions to their work (`COMMANDS`); `main` parses and dispatches.
"""

from __future__ import annotations

import argparse
import logging
import sys

from inbox_http.cli import (
    bot,
    credits,
    importer,
    key,
    mcp,
    member,
    migrate,
    serve,
    session,
    simulator,
    template,
    workspace,
)
from inbox_http.cli.console import EXIT_BAD_ARGUMENTS, fail, print_json
from inbox_http.cli.database import DatabaseCommand, run_with_database
from inbox_http.settings import Settings, SettingsError

__all__ = ["build_parser", "main"]

# (command, action) -> its work against the database; `serve` and `simulator` run on their own.
_COMMANDS: dict[tuple[str, str | None], DatabaseCommand] = {
    (name, action): command
    for name, group in (("migrate", migrate), ("workspace", workspace), ("member", member), ("key", key),
                        ("session", session), ("template", template), ("bot", bot), ("import", importer),
                        ("credits", credits), ("mcp", mcp))
    for action, command in group.COMMANDS.items()
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="inbox-actors", description="Inbox Actors: shared team inbox service.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve.add_command(commands)
    migrate.add_command(commands)
    workspace.add_commands(commands)
    member.add_commands(commands)
    session.add_commands(commands)
    key.add_commands(commands)
    template.add_commands(commands)
    bot.add_commands(commands)
    importer.add_commands(commands)
    credits.add_commands(commands)
    mcp.add_commands(commands)
    simulator.add_command(commands)
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "simulator":
        simulator.run_simulator(args)        # needs neither the service's settings nor its database
        return

    try:
        settings = Settings.from_environment()
    except SettingsError as err:
        fail(str(err), EXIT_BAD_ARGUMENTS)
    logging.basicConfig(
        stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        level=settings.log_level if args.command == "serve" else logging.WARNING,
    )
    if args.command == "serve":
        serve.serve(args, settings)
        return
    print_json(run_with_database(settings, _COMMANDS[(args.command, getattr(args, "action", None))], args))
