"""Configuration, read once from the environment (every variable is listed in the README)."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec


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
    log_level: str = "INFO"
    # Per-IP ceiling on API calls (sends exempt), checked before any key limit.
    ip_limit_per_minute: int = 1_000
    # Behind a load balancer: how many X-Forwarded-For hops to trust for the client IP (per-IP limit, audit).
    trusted_proxy_hops: int = 0

    @classmethod
    def from_environment(cls, env: dict[str, str] | None = None) -> "Settings":
        env = dict(os.environ if env is None else env)
        return cls(
            database_url=env.get("DATABASE_URL") or None,
            data_dir=Path(env.get("INBOX_DATA_DIR") or ".inbox"),
            db_pool_size=_int(env, "INBOX_DB_POOL_SIZE", 10, 1, 500),
            host=env.get("INBOX_HOST") or "127.0.0.1",
            port=_int(env, "INBOX_PORT", 8080, 0, 65535),
            health_token=env.get("INBOX_HEALTH_TOKEN") or None,
            actor_idle_seconds=_float(env, "INBOX_ACTOR_IDLE_SECONDS", 300.0),
            shutdown_grace_seconds=_float(env, "INBOX_SHUTDOWN_GRACE_SECONDS", 10.0),
            log_level=(env.get("INBOX_LOG_LEVEL") or "INFO").upper(),
            trusted_proxy_hops=_int(env, "INBOX_TRUSTED_PROXY_HOPS", 0, 0, 10),
            ip_limit_per_minute=_int(env, "INBOX_IP_LIMIT_PER_MINUTE", 1_000, 10, 1_000_000),
        )


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


def _float(env: dict[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number of seconds, not {raw!r}") from None
    if value <= 0:
        raise SettingsError(f"{name} must be positive, not {value}")
    return value
