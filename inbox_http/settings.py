"""Configuration, read once from the environment (every variable is listed in docs/operating.md)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import msgspec

from inbox_actors.ai_agent.usage import ModelPrices
from inbox_actors.ai_agent.usage import parse_prices as parse_model_prices
from inbox_actors.cluster.rebalancing import REBALANCE_SECONDS
from inbox_actors.domain.credit_prices import TemplatePrices, parse_prices
from inbox_actors.webhooks.address_guard import Network, parse_networks

# The built-in model simulator's one model, and INBOX_MODEL_URL's word for no model at all.
SIMULATED_MODEL = "simulated-grounded"
NO_MODEL = "none"


class SettingsError(ValueError):
    """An environment variable holds a value the service cannot use."""


class Settings(msgspec.Struct, frozen=True):
    # PostgreSQL to use; unset means the private embedded server under data_dir.
    database_url: str | None = None
    data_dir: Path = Path(".inbox")
    db_pool_size: int = 10
    host: str = "127.0.0.1"
    port: int = 8080
    # When set, /health/actors* require `Authorization: Bearer <this>` (actor keys name customers' phones).
    health_token: str | None = None
    # Actors idle this long leave memory; their state stays in PostgreSQL.
    actor_idle_seconds: float = 300.0
    # On shutdown, how long in-flight requests and actor mailboxes get to finish.
    shutdown_grace_seconds: float = 10.0
    # On SIGTERM, how long the service goes on serving with GET /health/ready answering 503 (and every response
    # saying Connection: close) before it stops accepting connections: the load balancer's time to notice.
    drain_seconds: float = 0.0
    log_level: str = "INFO"
    # Per-IP ceiling on API calls (sends exempt), checked before any key limit.
    ip_limit_per_minute: int = 1_000
    # Behind a load balancer: how many X-Forwarded-For hops to trust for the client IP (per-IP limit, audit).
    trusted_proxy_hops: int = 0
    # The WhatsApp Cloud API. Unset URL: the built-in simulator runs in-process on simulator_port and the
    # three secrets below default to random values made at start (nothing outside the process needs them).
    whatsapp_api_url: str | None = None
    whatsapp_access_token: str | None = None
    # Signs the platform's webhooks to us (X-Hub-Signature-256); a webhook that fails the check is refused.
    whatsapp_app_secret: str | None = None
    # Answers the platform's GET verification of the webhook URL.
    whatsapp_verify_token: str | None = None
    simulator_port: int = 0
    # The simulator's delays before it posts the sent, delivered and read statuses back.
    simulator_status_delays: tuple[float, float, float] = (0.05, 0.2, 0.5)
    # Sends per second per business number the service allows itself (the platform's limit; Meta: 80).
    platform_sends_per_second: int = 80
    # The simulator's per-number throughput limit (messages per second; 130429 beyond it).
    simulator_throughput: int = 80
    # Outbound webhooks go to https:// URLs on public addresses only, except inside these networks (which
    # may also use http://): e.g. 127.0.0.0/8 for a receiver on this machine, 10.0.0.0/8 for an internal one.
    webhook_allowed_networks: tuple[Network, ...] = ()
    # Requests in flight to one workspace's endpoint at most.
    webhook_concurrency: int = 64
    # Credits a template send costs by category (INBOX_TEMPLATE_CREDITS); all zero: sends are not metered.
    template_prices: TemplatePrices = TemplatePrices()
    # The address other nodes reach this node at (several nodes on one PostgreSQL): it names the node in the
    # workspace leases, and requests for the workspaces it holds are forwarded there. Unset: the address it serves
    # on (a wildcard host replaced by this machine's name), enough for nodes on one machine.
    node_url: str | None = None
    # Signs the requests one node forwards to another (their proof of the client's address); every node of a
    # cluster needs the same. Unset: a random one, which only a node alone can do with.
    cluster_secret: str | None = None
    # A second port this node listens on, its own (INBOX_NODE_URL's), when the service port is shared.
    node_port: int | None = None
    # Bind the service port with SO_REUSEPORT, so the kernel spreads its connections over the nodes sharing it.
    reuse_port: bool = False
    # `serve` starts this many nodes on this machine, sharing the service port (inbox_http/cluster/node_launcher.py).
    nodes: int = 1
    # How often a node of a cluster compares its share of the workspaces and hands the excess over
    # (inbox_actors/cluster/rebalancing.py); 0: never.
    rebalance_seconds: float = REBALANCE_SECONDS
    # The AI agent's model (docs/ai-agent.md#the-model): an OpenAI-compatible Chat Completions endpoint. Unset: the
    # built-in model simulator, served with the built-in platform simulator (none runs beside a real platform,
    # and then the keyword FAQ bot answers); "none": no model, the FAQ bot answers.
    model_url: str | None = None
    model_key: str | None = None
    # The model a workspace's agent asks unless its settings name another.
    model: str = SIMULATED_MODEL
    model_timeout_seconds: float = 20.0
    model_context_tokens: int = 8000
    # Model calls of one workspace in flight at once (the model gate).
    model_concurrency: int = 32
    model_prices: ModelPrices = ModelPrices({SIMULATED_MODEL: (0.15, 0.60)})
    # Credits an AI reply costs the workspace (0: not metered).
    ai_reply_credits: int = 0
    # The built-in model simulator's answer latency (seconds).
    model_simulator_latency: float = 0.0

    def node_name(self, served_at: str) -> str:
        """The node's name in the workspace leases, given the URL it serves on. One process at a time can listen
        there, so a node restarted on the same address takes its workspaces back at once
        (persistence/queries/workspace_leases.py)."""
        if self.node_url is not None:
            return self.node_url
        scheme, _, address = served_at.partition("://")
        host, _, port = address.rpartition(":")
        if host in ("0.0.0.0", "[::]", "::"):
            host = socket.gethostname()
        return f"{scheme}://{host}:{port}"

    @property
    def clustered(self) -> bool:
        """Whether this node is one of a cluster: it shares a secret with the others."""
        return self.cluster_secret is not None

    @property
    def rebalances(self) -> bool:
        """Whether this node hands workspaces to nodes holding fewer: a node of a cluster, asked to."""
        return self.clustered and self.rebalance_seconds > 0

    @property
    def connection_name(self) -> str:
        """What this node's PostgreSQL connections are called (`application_name` in pg_stat_activity and the
        server's log): the node's name, where it is known before the node listens."""
        if self.node_url is None and self.node_port is None:
            return "inbox-actors"
        return f"inbox-actors {self.node_name(f'http://{self.host}:{self.node_port}')}"[:63]

    @property
    def uses_simulator(self) -> bool:
        return self.whatsapp_api_url is None

    @property
    def uses_model_simulator(self) -> bool:
        """The AI agent asks the built-in model simulator (no model endpoint set, the built-in platform runs)."""
        return self.model_url is None and self.uses_simulator

    @property
    def has_model(self) -> bool:
        return self.model_url not in (None, NO_MODEL) or self.uses_model_simulator

    @classmethod
    def from_environment(cls, env: dict[str, str] | None = None) -> "Settings":
        env = dict(os.environ if env is None else env)
        if env.get("INBOX_NODE_URL") and not env.get("INBOX_CLUSTER_SECRET"):
            raise SettingsError("with INBOX_NODE_URL set, INBOX_CLUSTER_SECRET must be set too (the same on every "
                                "node)")
        return cls(
            database_url=env.get("DATABASE_URL") or None,
            data_dir=Path(env.get("INBOX_DATA_DIR") or ".inbox"),
            db_pool_size=_int(env, "INBOX_DB_POOL_SIZE", 10, 1, 500),
            host=env.get("INBOX_HOST") or "127.0.0.1",
            port=_int(env, "INBOX_PORT", 8080, 0, 65535),
            health_token=env.get("INBOX_HEALTH_TOKEN") or None,
            actor_idle_seconds=_float(env, "INBOX_ACTOR_IDLE_SECONDS", 300.0),
            shutdown_grace_seconds=_float(env, "INBOX_SHUTDOWN_GRACE_SECONDS", 10.0),
            drain_seconds=_float(env, "INBOX_DRAIN_SECONDS", 0.0, zero=True),
            rebalance_seconds=_float(env, "INBOX_REBALANCE_SECONDS", REBALANCE_SECONDS, zero=True),
            log_level=(env.get("INBOX_LOG_LEVEL") or "INFO").upper(),
            trusted_proxy_hops=_int(env, "INBOX_TRUSTED_PROXY_HOPS", 0, 0, 10),
            ip_limit_per_minute=_int(env, "INBOX_IP_LIMIT_PER_MINUTE", 1_000, 10, 1_000_000),
            webhook_allowed_networks=_networks(env, "WEBHOOK_ALLOWED_NETWORKS"),
            webhook_concurrency=_int(env, "INBOX_WEBHOOK_CONCURRENCY", 64, 1, 1_000),
            template_prices=_prices(env, "INBOX_TEMPLATE_CREDITS"),
            node_url=_node_url(env, "INBOX_NODE_URL"),
            cluster_secret=env.get("INBOX_CLUSTER_SECRET") or None,
            node_port=_int(env, "INBOX_NODE_PORT", 0, 0, 65535) or None,
            reuse_port=_flag(env, "INBOX_REUSE_PORT"),
            nodes=_int(env, "INBOX_NODES", 1, 1, 64),
            **_whatsapp(env),
            **_model(env),
        )


def _whatsapp(env: dict[str, str]) -> dict[str, object]:
    url = (env.get("WHATSAPP_API_URL") or "").rstrip("/") or None
    values: dict[str, object] = {
        "whatsapp_api_url": url,
        "whatsapp_access_token": env.get("WHATSAPP_ACCESS_TOKEN") or None,
        "whatsapp_app_secret": env.get("WHATSAPP_APP_SECRET") or None,
        "whatsapp_verify_token": env.get("WHATSAPP_VERIFY_TOKEN") or None,
        "simulator_port": _int(env, "INBOX_SIMULATOR_PORT", 0, 0, 65535),
        "simulator_throughput": _int(env, "INBOX_SIMULATOR_THROUGHPUT", 80, 1, 100_000),
        "platform_sends_per_second": _int(env, "WHATSAPP_SENDS_PER_SECOND", 80, 1, 100_000),
    }
    if url is not None:
        if not url.startswith(("http://", "https://")):
            raise SettingsError(f"WHATSAPP_API_URL must be an http(s) URL, not {url!r}")
        missing = [name for name in ("WHATSAPP_ACCESS_TOKEN", "WHATSAPP_APP_SECRET", "WHATSAPP_VERIFY_TOKEN")
                   if not env.get(name)]
        if missing:
            raise SettingsError(f"with WHATSAPP_API_URL set, {', '.join(missing)} must be set too")
    delays = env.get("INBOX_SIMULATOR_STATUS_DELAYS")
    if delays:
        try:
            parsed = tuple(float(part) for part in delays.split(","))
        except ValueError:
            parsed = ()
        if len(parsed) != 3 or any(not value >= 0 for value in parsed):
            raise SettingsError("INBOX_SIMULATOR_STATUS_DELAYS must be three seconds values: sent,delivered,read")
        values["simulator_status_delays"] = parsed
    return values


def _model(env: dict[str, str]) -> dict[str, object]:
    url = (env.get("INBOX_MODEL_URL") or "").strip().rstrip("/") or None
    if url is not None and url != NO_MODEL and not url.startswith(("http://", "https://")):
        raise SettingsError(f"INBOX_MODEL_URL must be an http(s) URL or {NO_MODEL!r}, not {url!r}")
    model = (env.get("INBOX_MODEL") or "").strip()
    if url not in (None, NO_MODEL) and not model:
        raise SettingsError("with INBOX_MODEL_URL set, INBOX_MODEL must name the model to ask (e.g. gpt-4o-mini)")
    values: dict[str, object] = {
        "model_url": url,
        "model_key": env.get("INBOX_MODEL_KEY") or None,
        "model": model or SIMULATED_MODEL,
        "model_timeout_seconds": _float(env, "INBOX_MODEL_TIMEOUT", 20.0),
        "model_context_tokens": _int(env, "INBOX_MODEL_CONTEXT_TOKENS", 8000, 1000, 2_000_000),
        "model_concurrency": _int(env, "INBOX_MODEL_CONCURRENCY", 32, 1, 1000),
        "ai_reply_credits": _int(env, "INBOX_AI_REPLY_CREDITS", 0, 0, 1_000_000),
        "model_simulator_latency": _float(env, "INBOX_MODEL_SIMULATOR_LATENCY", 0.0, zero=True),
    }
    prices = env.get("INBOX_MODEL_PRICES")
    if prices is not None:
        try:
            values["model_prices"] = parse_model_prices(prices)
        except ValueError as err:
            raise SettingsError(f"INBOX_MODEL_PRICES: {err}") from None
    return values


def _flag(env: dict[str, str], name: str) -> bool:
    raw = (env.get(name) or "").strip().lower()
    if raw in ("", "0", "false", "no"):
        return False
    if raw in ("1", "true", "yes"):
        return True
    raise SettingsError(f"{name} must be 1 or 0, not {raw!r}")


def _node_url(env: dict[str, str], name: str) -> str | None:
    url = (env.get(name) or "").rstrip("/") or None
    if url is not None and not url.startswith(("http://", "https://")):
        raise SettingsError(f"{name} must be an http(s) URL, not {url!r}")
    return url


def _prices(env: dict[str, str], name: str) -> TemplatePrices:
    try:
        return parse_prices(env.get(name) or "")
    except ValueError as err:
        raise SettingsError(f"{name}: {err}") from None


def _networks(env: dict[str, str], name: str) -> tuple[Network, ...]:
    try:
        return parse_networks(env.get(name) or "")
    except ValueError as err:
        raise SettingsError(f"{name}: {err}") from None


def _int(env: dict[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a whole number, not {raw!r}") from None
    if not low <= value <= high:
        raise SettingsError(f"{name} must be between {low} and {high}, not {value}")
    return value


def _float(env: dict[str, str], name: str, default: float, *, zero: bool = False) -> float:
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number of seconds, not {raw!r}") from None
    if not (value >= 0 if zero else value > 0):
        raise SettingsError(f"{name} must be {'zero or ' if zero else ''}positive, not {value}")
    return value
