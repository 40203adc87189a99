"""Several nodes as a check's clients see them (scripts/cluster_check.py and its modes): the nodes and which are up,
each request sent to the next node still up, and how long a workspace takes to answer again after a fault."""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx
import trio

from harness.processes import Child

# The calls that find when the workspace answers again: at most PROBE_TIMEOUT / PROBE_EVERY (4) in flight at once.
PROBE_EVERY = 0.5
PROBE_TIMEOUT = 2.0
WHOAMI = "/api/reporting/v1/whoami"
# When the platform delivers a refused message again, if the answer says no Retry-After.
CUSTOMER_RETRY_PAUSE = 0.5


@dataclass
class Cluster:
    """The nodes and which are up; what crash_sends' clients read of a service (`up`, `started_at`)."""

    nodes: list[Child]
    clients: list[httpx.AsyncClient] = field(default_factory=list)
    dead: set[int] = field(default_factory=set)
    up: trio.Event = field(default_factory=trio.Event)
    started_at: float = 0.0
    turn: int = 0
    refusals: list[str] = field(default_factory=list)      # the first answers 4xx other than 409 and 429
    stopped_at: float | None = None        # trio time of the SIGKILL (or SIGSTOP)
    send_back_after: float | None = None   # from it to the first send started after it and answered 200

    def next_client(self) -> httpx.AsyncClient:
        """The next node still up."""
        live = [n for n in range(len(self.clients)) if n not in self.dead]
        self.turn += 1
        return self.clients[live[self.turn % len(live)]]

    async def deliver(self, post) -> httpx.Response:
        """`post(client)` on the next node still up."""
        return await post(self.next_client())

    async def post(self, path: str, **request) -> httpx.Response:
        """The request on the next node still up (crash_sends' client calls this as it calls an httpx client)."""
        began = trio.current_time()
        answer = await self.next_client().post(path, **request)
        if answer.status_code == 200 and self.stopped_at is not None and began >= self.stopped_at \
                and self.send_back_after is None:
            # Started after the node stopped and sent to another one: the workspace is served again.
            self.send_back_after = trio.current_time() - self.stopped_at
        if 400 <= answer.status_code < 500 and answer.status_code not in (409, 429) and len(self.refusals) < 5:
            self.refusals.append(f"{answer.status_code} {answer.text[:200]}")
        return answer


async def out_of_service(client: httpx.AsyncClient, key: str, since: float) -> float:
    """Seconds from `since` until the node answers a call of the workspace 200. A call is started every
    PROBE_EVERY seconds, each given up after PROBE_TIMEOUT (one relayed to a paused node would wait for the relay's
    own timeout), so one call stuck on the stopped node does not hide, for its whole timeout, the answer a later
    call gets: the figure is late by PROBE_EVERY at most."""
    answered_at: float | None = None

    async with trio.open_nursery() as probes:
        async def probe() -> None:
            nonlocal answered_at
            try:
                answer = await client.get(WHOAMI, headers={"Authorization": f"Bearer {key}"}, timeout=PROBE_TIMEOUT)
            except httpx.HTTPError:
                return
            if answer.status_code == 200 and answered_at is None:
                answered_at = trio.current_time()
                probes.cancel_scope.cancel()

        while True:
            probes.start_soon(probe)
            await trio.sleep(PROBE_EVERY)
    assert answered_at is not None
    return answered_at - since


def retry_after(answer: httpx.Response | None) -> float:
    """When the platform delivers a refused message again: after the answer's Retry-After, if it says one."""
    try:
        return min(float(answer.headers["retry-after"]), 30.0) if answer is not None else CUSTOMER_RETRY_PAUSE
    except (KeyError, ValueError):
        return CUSTOMER_RETRY_PAUSE
