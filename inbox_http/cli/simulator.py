"""`inbox-actors simulator`: run the WhatsApp Cloud API simulator on its own (no settings, no database)."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

import trio

from inbox_actors.platform.simulator.rules import StatusDelays
from inbox_actors.platform.template_catalog import InvalidTemplateSpec, parse_template_spec
from inbox_http.cli.console import EXIT_BAD_ARGUMENTS, fail, print_json


def add_command(commands: Any) -> None:
    simulator = commands.add_parser("simulator", help="run the WhatsApp Cloud API simulator (no database)")
    simulator.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    simulator.add_argument("--port", type=int, default=8090, help="port to listen on (default 8090; 0 picks one)")
    simulator.add_argument("--webhook-url", metavar="URL",
                           help="where to post signed webhooks: the service's /webhooks/whatsapp")
    simulator.add_argument("--app-secret", required=True, help="signs the webhooks (X-Hub-Signature-256)")
    simulator.add_argument("--access-token", required=True, help="the bearer token sends must carry")
    simulator.add_argument("--template", action="append", default=[], metavar="NAME:LANG:PARAMS[:CATEGORY]",
                           help="a template every business number has (repeatable; category default UTILITY)")
    simulator.add_argument("--throughput", type=int, default=80, metavar="N",
                           help="sends per second per business number before 130429 (default 80)")
    simulator.add_argument("--status-delays", default="0.05,0.2,0.5", metavar="SENT,DELIVERED,READ",
                           help="seconds after acceptance of each status (default 0.05,0.2,0.5)")
    simulator.add_argument("--webhook-retry-delays", metavar="S,S,...",
                           help="waits between attempts at a status webhook the service did not take; after the "
                                "last its statuses are dropped (default 0.5,2,8)")
    simulator.add_argument("--history", type=int, metavar="N",
                           help="accepted sends kept per business number for GET /simulator/numbers/.../messages "
                                "(default 1000)")


def run_simulator(args: argparse.Namespace) -> None:
    # Imported here: the simulator's HTTP app (Quart, Hypercorn) is for this command only, and importing it
    # would slow the start-up of every other command.
    from inbox_actors.platform.simulator.command import run_simulator_command

    logging.basicConfig(stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        level=logging.WARNING)
    if not 0 <= args.port <= 65535:
        fail("--port must be between 0 and 65535", EXIT_BAD_ARGUMENTS)
    if args.throughput < 1:
        fail("--throughput must be at least 1", EXIT_BAD_ARGUMENTS)
    try:
        templates = [parse_template_spec(text) for text in args.template]
    except InvalidTemplateSpec as err:
        fail(str(err), EXIT_BAD_ARGUMENTS)
    try:
        delays = [float(part) for part in args.status_delays.split(",")]
    except ValueError:
        delays = []
    if len(delays) != 3 or delays != sorted(delays) or delays[0] < 0:
        fail("--status-delays must be three increasing numbers of seconds", EXIT_BAD_ARGUMENTS)
    retry_delays = None
    if args.webhook_retry_delays is not None:
        try:
            retry_delays = tuple(float(part) for part in args.webhook_retry_delays.split(","))
        except ValueError:
            retry_delays = (-1.0,)
        if any(delay < 0 for delay in retry_delays):
            fail("--webhook-retry-delays must be numbers of seconds, at least 0", EXIT_BAD_ARGUMENTS)
    if args.history is not None and args.history < 1:
        fail("--history must be at least 1", EXIT_BAD_ARGUMENTS)
    trio.run(lambda: run_simulator_command(
        args.host, args.port, args.webhook_url, args.app_secret, args.access_token, templates=templates,
        delays=StatusDelays(*delays), throughput_per_second=args.throughput, webhook_retry_delays=retry_delays,
        history_per_number=args.history, on_ready=print_json))
