"""Running the simulator on its own: `inbox-actors simulator`, and `run_simulator` for callers with a nursery."""

from __future__ import annotations

import json
import logging
import signal
from collections.abc import Callable, Sequence
from functools import partial

import trio

from inbox_actors.clock import Clock
from inbox_actors.platform.simulator import DEFAULT_DELAYS, Simulator, SimulatorConfig
from inbox_actors.platform.simulator_rules import StatusDelays
from inbox_actors.platform.template_catalog import InMemoryTemplateCatalog, TemplateCatalog, TemplateSpec

log = logging.getLogger("inbox_actors.platform.simulator")


async def run_simulator(config: SimulatorConfig, *, host: str = "127.0.0.1", port: int = 0,
                        catalog: TemplateCatalog | None = None, clock: Clock | None = None,
                        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
    """A simulator on `host:port` until cancelled; reports its base URL once listening."""
    await Simulator(config, catalog=catalog, clock=clock).serve(host, port, task_status=task_status)


async def run_simulator_command(
    host: str, port: int, webhook_url: str | None, app_secret: str, access_token: str, *,
    templates: Sequence[TemplateSpec] = (), delays: StatusDelays = DEFAULT_DELAYS, throughput_per_second: int = 80,
    on_ready: Callable[[dict], None] | None = None,
) -> None:
    """`inbox-actors simulator`: serve until SIGINT or SIGTERM, reporting `{"status": "ready", "url": ...}`."""
    config = SimulatorConfig(app_secret=app_secret, access_token=access_token, webhook_url=webhook_url,
                             delays=delays, throughput_per_second=throughput_per_second)
    simulator = Simulator(config, catalog=InMemoryTemplateCatalog(templates))
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_stop_on_signal, stop)
        url = await nursery.start(partial(simulator.serve, host, port, shutdown_trigger=stop.wait))
        ready = {"status": "ready", "url": url, "webhook_url": webhook_url}
        if on_ready is not None:
            on_ready(ready)
        else:
            print(json.dumps(ready), flush=True)
        await stop.wait()
        nursery.cancel_scope.cancel()


async def _stop_on_signal(stop: trio.Event) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            log.info("received %s", signal.Signals(signum).name)
            stop.set()
            return
