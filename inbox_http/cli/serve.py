"""`inbox-actors serve`: run the service."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec
import trio

from inbox_http.cli.console import EXIT_BAD_ARGUMENTS, EXIT_FAILURE, fail, print_json
from inbox_http.settings import Settings


def add_command(commands: Any) -> None:
    serve = commands.add_parser("serve", help="run the service (embedded PostgreSQL unless DATABASE_URL is set)")
    serve.add_argument("--host", help="address to listen on (default INBOX_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (default INBOX_PORT or 8080; 0 picks one)")
    serve.add_argument("--demo", action="store_true",
                       help="seed a Scale demo workspace and print a fresh full-access demo key when ready")
    serve.add_argument("--nodes", type=int, metavar="N",
                       help="run N nodes on this machine sharing the port, one database and one platform "
                            "(default INBOX_NODES or 1)")


def serve(args: argparse.Namespace, settings: Settings) -> None:
    overrides = {name: value for name, value in (("host", args.host), ("port", args.port)) if value is not None}
    if "port" in overrides and not 0 <= overrides["port"] <= 65535:
        fail("--port must be between 0 and 65535", EXIT_BAD_ARGUMENTS)
    settings = msgspec.structs.replace(settings, **overrides)
    nodes = args.nodes if args.nodes is not None else settings.nodes
    if not 1 <= nodes <= 64:
        fail("--nodes must be between 1 and 64", EXIT_BAD_ARGUMENTS)
    if nodes == 1:
        # Imported here: the whole HTTP service (Quart, Hypercorn, every route) is for this command only, and
        # importing it would double the start-up time of every other command.
        from inbox_http.server import run_service

        trio.run(lambda: run_service(settings, demo=args.demo, on_ready=print_json))
        return
    if settings.node_url is not None:
        fail("INBOX_NODE_URL names one node: with --nodes N each node is named by its own port; unset it",
             EXIT_BAD_ARGUMENTS)
    # The parent of the nodes runs no service of its own: the database, the simulator and the node processes.
    from inbox_http.cluster.node_launcher import run_nodes

    failure = trio.run(lambda: run_nodes(settings, nodes, demo=args.demo, on_ready=print_json))
    if failure is not None:
        fail(failure, EXIT_FAILURE)
