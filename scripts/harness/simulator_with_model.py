"""The platform simulator and the model simulator in one process of its own: what `inbox-actors simulator` serves,
plus the AI agent's model at `{url}/model/v1`, as the built-in simulator of `serve` plays both. The command serves
no model, and a service pointed at a platform (WHATSAPP_API_URL) starts none of its own, so a load script that
runs the simulator apart starts this file instead (harness.simulator's SimulatorWithModel), with the options of
`inbox-actors simulator` it uses and the model's key and latency.

Run as a file (`python -P scripts/harness/simulator_with_model.py ...`): it imports the package, not the harness.
Prints `{"status": "ready", "url": ..., "model_url": ...}`; stops at SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from functools import partial

import trio

from inbox_actors.model_simulator.simulated_model import ModelSettings, ModelSimulator
from inbox_actors.platform.simulator.model import Simulator, SimulatorConfig
from inbox_actors.platform.simulator.rules import StatusDelays
from inbox_actors.platform.simulator.server import serve_simulator
from inbox_actors.platform.template_catalog import InMemoryTemplateCatalog
from inbox_actors.runtime.stop_signal import set_on_stop_signal


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--webhook-url", required=True)
    parser.add_argument("--app-secret", required=True)
    parser.add_argument("--access-token", required=True)
    parser.add_argument("--throughput", type=int, default=80, help="sends per second per business number")
    parser.add_argument("--status-delays", default="0.05,0.2,0.5", help="SENT,DELIVERED,READ seconds")
    parser.add_argument("--model-key", required=True, help="the key the model's callers must bring")
    parser.add_argument("--model-latency", type=float, default=0.0, help="seconds each model call takes")
    return parser.parse_args(argv)


async def serve(args: argparse.Namespace) -> None:
    """Serve both until SIGINT or SIGTERM, printing the ready line once listening."""
    delays = StatusDelays(*(float(part) for part in args.status_delays.split(",")))
    simulator = Simulator(SimulatorConfig(app_secret=args.app_secret, access_token=args.access_token,
                                          webhook_url=args.webhook_url, delays=delays,
                                          throughput_per_second=args.throughput),
                          catalog=InMemoryTemplateCatalog(()))
    model = ModelSimulator(args.model_key, settings=ModelSettings(latency_seconds=args.model_latency))
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(set_on_stop_signal, stop)
        url = await nursery.start(partial(serve_simulator, simulator, args.host, args.port, model=model,
                                          shutdown_trigger=stop.wait))
        print(json.dumps({"status": "ready", "url": url, "model_url": f"{url}/model/v1"}), flush=True)
        await stop.wait()
        nursery.cancel_scope.cancel()


def main() -> None:
    logging.basicConfig(stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        level=logging.WARNING)
    trio.run(serve, parse_args())


if __name__ == "__main__":
    main()
