"""Running the simulator on its own: `inbox-actors simulator`."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import partial

import msgspec
import trio

from inbox_actors.platform.simulator.model import DEFAULT_DELAYS, Simulator, SimulatorConfig
from inbox_actors.platform.simulator.rules import StatusDelays
from inbox_actors.platform.simulator.server import serve_simulator
from inbox_actors.platform.template_catalog import InMemoryTemplateCatalog, TemplateSpec
from inbox_actors.runtime.stop_signal import set_on_stop_signal


async def run_simulator_command(
    host: str, port: int, webhook_url: str | None, app_secret: str, access_token: str, *,
    templates: Sequence[TemplateSpec] = (), delays: StatusDelays = DEFAULT_DELAYS, throughput_per_second: int = 80,
    webhook_retry_delays: tuple[float, ...] | None = None, history_per_number: int | None = None,
    on_ready: Callable[[dict], None] | None = None,
) -> None:
    """`inbox-actors simulator`: serve until SIGINT or SIGTERM, reporting `{"status": "ready", "url": ...}`.
    `webhook_retry_delays` and `history_per_number` default to SimulatorConfig's."""
    config = SimulatorConfig(app_secret=app_secret, access_token=access_token, webhook_url=webhook_url,
                             delays=delays, throughput_per_second=throughput_per_second)
    if webhook_retry_delays is not None:
        config = msgspec.structs.replace(config, webhook_retry_delays=webhook_retry_delays)
    if history_per_number is not None:
        config = msgspec.structs.replace(config, history_per_number=history_per_number)
    simulator = Simulator(config, catalog=InMemoryTemplateCatalog(templates))
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(set_on_stop_signal, stop)
        url = await nursery.start(partial(serve_simulator, simulator, host, port, shutdown_trigger=stop.wait))
        ready = {"status": "ready", "url": url, "webhook_url": webhook_url}
        if on_ready is not None:
            on_ready(ready)
        else:
            print(json.dumps(ready), flush=True)
        await stop.wait()
        nursery.cancel_scope.cancel()
