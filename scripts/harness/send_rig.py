"""The service as scripts/bench_send.py and scripts/soak_requests.py run it, the requests they send, and what
they read from it besides its answers: both measure the same rig, so it is set up in one place.

- PostgreSQL: harness.postgres's, the embedded server started with pg_stat_statements preloaded so that statements
  can be counted (or the server of --database-url, counted only if it preloads pg_stat_statements itself); a
  database of its own, migrated and dropped, with one Scale workspace, an admin, a full-access key with the
  highest limit a key may have, and the template `order_update` (en, 2 parameters).
- The platform: `inbox-actors simulator` in a process of its own (harness.simulator's SeparateSimulator), knowing
  that template, accepting --throughput sends a second per number (1,000), posting its signed statuses to the
  service; the service gets WHATSAPP_API_URL and the simulator's secrets, WHATSAPP_SENDS_PER_SECOND (1,000) and
  INBOX_IP_LIMIT_PER_MINUTE 1,000,000 (so neither limit is what is measured).
- The service: `inbox-actors serve` on that database, in a process of its own; the simulator starts after it
  and stops before it (it holds keep-alive connections to the service).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import msgspec
import trio_asyncio

from harness.load_client import post_request
from harness.postgres import bench_database
from harness.processes import Child, cli_command, service_env
from harness.simulator import SeparateSimulator, wait_statuses_posted
from harness.workspace import Workspace, make_workspace
from inbox_actors.platform import templates
from inbox_actors.platform.payloads import InboundMessage
from inbox_actors.platform.webhook_envelope import SIGNATURE_HEADER, build_envelope, sign
from persistence.database import Database

TEMPLATE = ("order_update", "en", "Hello {{1}}, your order {{2}} is on its way.")
SENDS_PER_SECOND = 1000
IDLE_SECONDS = 3600          # no actor passivates during a run: per-kind message counts only grow
EXISTING_PHONE_BASE = 447_000_000_000    # chats made before the sends to existing chats
NEW_PHONE_BASE = 447_100_000_000         # + a phase's offset: a new chat per request
CUSTOMER_PHONE_BASE = 447_900_000_000    # customers who write in (platform webhooks)
STARTUP_SECONDS = 120.0

# -- the requests -------------------------------------------------------------------------------------------


def bearer(key: str) -> tuple[tuple[str, str], ...]:
    return (("Authorization", f"Bearer {key}"),)


@dataclass(frozen=True)
class TemplateSends:
    """POST /api/send-message, the template to chat n % chats from `first_phone` (chats None: chat n, new)."""

    host: str
    key: str
    first_phone: int
    chats: int | None = None

    def request(self, n: int) -> bytes:
        phone = self.first_phone + (n % self.chats if self.chats else n)
        body = msgspec.json.encode({"to": str(phone), "type": "template", "template": {
            "name": TEMPLATE[0], "language": TEMPLATE[1], "parameters": [f"Customer {n}", f"#{100000 + n}"]}})
        return post_request("/api/send-message", self.host, body, bearer(self.key))


@dataclass(frozen=True)
class CustomerMessages:
    """POST /webhooks/whatsapp as Meta sends it: `per_post` messages from different customers (of `customers`
    from `first_phone`, in turn), ids unique per `tag`, signed with the app secret."""

    host: str
    app_secret: str
    phone_number_id: str
    tag: str
    per_post: int = 1
    customers: int = 1024
    first_phone: int = CUSTOMER_PHONE_BASE

    def request(self, n: int) -> bytes:
        at = datetime.now(timezone.utc)
        messages = [InboundMessage(message_id=f"wamid.bench.{self.tag}.{n}.{i}",
                                   from_phone=str(self.first_phone + (n * self.per_post + i) % self.customers),
                                   at=at, type="text", text=f"Any news about order #{100000 + n}?",
                                   profile_name=f"Customer {i}") for i in range(self.per_post)]
        body = build_envelope(self.phone_number_id, "15550000000", messages=messages)
        return post_request("/webhooks/whatsapp", self.host, body, ((SIGNATURE_HEADER, sign(self.app_secret, body)),))


# -- PostgreSQL's statement counts ---------------------------------------------------------------------


class Statements:
    """pg_stat_statements for one database, read from another (the server's own), so reading adds nothing."""

    def __init__(self, admin: Database, database: str) -> None:
        self.admin = admin
        self.database = database

    @classmethod
    async def open(cls, server_url: str, database: str) -> Statements | None:
        """None when the server does not load pg_stat_statements."""
        admin = await Database.connect(server_url, min_size=1, max_size=1)
        try:
            if "pg_stat_statements" not in await admin.fetchval("SHOW shared_preload_libraries"):
                raise LookupError
            await admin.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        except Exception:  # not loaded, or not ours to install: statements are then not counted
            await admin.close()
            return None
        return cls(admin, database)

    async def snapshot(self) -> Counter:
        rows = await self.admin.fetch(
            "SELECT query, sum(calls)::bigint AS calls FROM pg_stat_statements"
            " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1) GROUP BY query", self.database)
        return Counter({row["query"]: row["calls"] for row in rows})

    async def close(self) -> None:
        await self.admin.close()


def round_trips(statements: Counter) -> int:
    """Statements, less those that share one round trip: asyncpg's pool resets a released connection with one
    query of four statements (SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL)."""
    return sum(statements.values()) - 3 * statements.get("RESET ALL", 0)


# -- the running service ------------------------------------------------------------------------------------


@dataclass
class Rig:
    ws: Workspace
    service: Child
    simulator: Child
    platform: SeparateSimulator
    db: Database                     # the service's database
    statements: Statements | None    # None: not counted
    postgres_pid: int | None

    @property
    def url(self) -> str:
        return self.service.ready["url"]

    @property
    def host(self) -> str:
        return urlsplit(self.url).netloc

    async def actor_messages(self) -> Counter:
        """Messages handled per actor kind so far (live actors; none passivates during a run)."""
        async with httpx.AsyncClient(base_url=self.url, timeout=30) as client:
            answer = await client.get("/health/actors", params={"busiest": 0})
        answer.raise_for_status()
        return Counter({kind: counts["messages_handled"] for kind, counts in answer.json()["kinds"].items()})

    async def wait_statuses_posted(self, patience: float = 60.0) -> bool:
        """Until the simulator has posted (or dropped) every status it owes; False if it still owes some."""
        async with httpx.AsyncClient(base_url=self.simulator.ready["url"], timeout=30) as client:
            return await wait_statuses_posted(client, patience, every=0.2)


@contextlib.asynccontextmanager
async def running_rig(server_url: str, postgres_pid: int | None, work_dir: Path, name: str,
                      extra_env: dict[str, str] | None = None) -> AsyncIterator[Rig]:
    """The database, the service and its simulator, up and ready, with a loop for asyncpg opened here."""
    async with trio_asyncio.open_loop():
        async with bench_database(server_url, name) as (url, db):
            ws = await make_workspace(db, "Send bench")
            await templates.add_template(db, workspace_id=ws.workspace_id, name=TEMPLATE[0], language=TEMPLATE[1],
                                         body=TEMPLATE[2])
            statements = await Statements.open(server_url, name)
            platform = SeparateSimulator.on_free_ports()
            env = {**service_env(work_dir / "service", platform.service_env()), "DATABASE_URL": url,
                   "INBOX_IP_LIMIT_PER_MINUTE": "1000000", "WHATSAPP_SENDS_PER_SECOND": str(SENDS_PER_SECOND),
                   "INBOX_ACTOR_IDLE_SECONDS": str(IDLE_SECONDS), **(extra_env or {})}
            env.pop("INBOX_HEALTH_TOKEN", None)   # /health/actors from loopback, no token
            service = Child("service", [*cli_command(), "serve", "--port", str(platform.service_port)], env,
                            work_dir / "service.log")
            simulator = Child("simulator", [*platform.command(), "--throughput", str(SENDS_PER_SECOND),
                                            "--template", f"{TEMPLATE[0]}:{TEMPLATE[1]}:2"],
                              dict(env), work_dir / "simulator.log")
            try:
                async with service.running(STARTUP_SECONDS), simulator.running(STARTUP_SECONDS):
                    yield Rig(ws, service, simulator, platform, db, statements, postgres_pid)
            finally:
                if statements is not None:
                    await statements.close()
