"""`inbox-actors serve`: run the service."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec
import trio

from inbox_http.cli.console import EXIT_BAD_ARGUMENTS, fail, print_json
from inbox_http.settings import Settings


def add_command(commands: Any) -> None:
    serve = commands.add_parser("serve", help="run the service (embedded PostgreSQL unless DATABASE_URL is set)")
    serve.add_argument("--host", help="address to listen on (default INBOX_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (default INBOX_PORT or 8080; 0 picks one)")
    serve.add_argument("--demo", action="store_true",
                       help="seed a Scale demo workspace and print a fresh full-access demo key when ready")


def serve(args: argparse.Namespace, settings: Settings) -> None:
    # Imported here: the whole HTTP service (Quart, Hypercorn, every route) is for this command only, and
    # importing it would double the start-up time of every other command.
    from inbox_http.server import run_service

    overrides = {name: value for name, value in (("host", args.host), ("port", args.port)) if value is not None}
    if "port" in overrides and not 0 <= overrides["port"] <= 65535:
        fail("--port must be between 0 and 65535", EXIT_BAD_ARGUMENTS)
    settings = msgspec.structs.replace(settings, **overrides)
    trio.run(lambda: run_service(settings, demo=args.demo, on_ready=print_json))
