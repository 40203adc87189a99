"""Looking up the credential behind a bearer key, with a per-process cache.

Every request needs its key's scopes, its creator and its workspace's plan; reading them from PostgreSQL
each time would put a query on every request. The cache keeps found keys (never misses: a key created a
moment ago by the CLI must work at once) and forgets a workspace's entries the moment PostgreSQL announces a
change to its plan, members or keys (`inbox_access_changed`, sent by triggers, so changes made by other
processes count too). Notifications travel asynchronously, so a change made elsewhere applies within
moments rather than at once; changes made through this process's actors apply before they reply. Without the
listening connection nothing is cached, and a bounded age is the backstop should a notification be missed.

It also holds the hashes of the keys exempt from the default limits (`limits_exempt`), read again on every
access change: the per-IP ceiling is checked before any lookup, so an exempt key must be known without one.
"""

from __future__ import annotations

import logging

import trio

from inbox_actors.domain.api_keys import has_key_shape, hash_key
from inbox_actors.domain.auth_ladder import Credential
from inbox_actors.domain.plans import Plan
from inbox_actors.runtime.outage_log import OutageLog
from persistence.database import Database, DatabaseUnavailable, Record
from persistence.queries import api_keys as key_queries

log = logging.getLogger("inbox_actors.access.credentials")

ACCESS_CHANGED_CHANNEL = "inbox_access_changed"
_RECONNECT_FIRST_DELAY = 0.5
# Low: nothing is cached until it listens again, so every request reads its key from PostgreSQL meanwhile.
_RECONNECT_MAX_DELAY = 2.0
_EXEMPT_READ_SECONDS = 5.0


class CredentialCache:
    def __init__(self, db: Database, *, max_age: float = 60.0, capacity: int = 10_000) -> None:
        self._db = db
        self._max_age = max_age
        self._capacity = capacity
        self._entries: dict[bytes, tuple[Credential, float]] = {}
        # Bumped on every invalidation: a lookup that raced one must not store what it read.
        self._generation = 0
        # Caching is safe only while changes are heard (keep_listening holds the connection).
        self._listening = False
        self._exempt: frozenset[bytes] = frozenset()
        self._exempt_changed = trio.Event()
        self.hits = 0
        self.misses = 0

    async def keep_listening(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Hold the LISTEN connection for as long as the service runs, reconnecting when it drops.

        While it is down the cache is empty and stores nothing, since a change could go unheard.
        """
        delay = _RECONNECT_FIRST_DELAY
        # Whatever listening meets, it tries again: a database error must never end the node.
        outage = OutageLog(log, "listening for access changes (nothing is cached meanwhile)", (DatabaseUnavailable,))
        while True:
            lost = trio.Event()
            try:
                await self._db.listen({ACCESS_CHANGED_CHANNEL: self._on_access_changed}, on_lost=lost.set,
                                      name="credentials")
            except Exception as err:
                outage.failed(err)
            else:
                outage.succeeded()
                self.forget_all()  # whatever was cached while deaf may be stale
                self._listening = True
                async with trio.open_nursery() as nursery:
                    await nursery.start(self._keep_exemptions_fresh)
                    task_status.started()
                    task_status = trio.TASK_STATUS_IGNORED
                    delay = _RECONNECT_FIRST_DELAY
                    await lost.wait()
                    nursery.cancel_scope.cancel()
                self._listening = False
                self.forget_all()
                log.warning("lost the connection that listens for access changes; caching stops until it is back")
            await trio.sleep(delay)
            delay = min(2 * delay, _RECONNECT_MAX_DELAY)

    async def lookup(self, token: str) -> Credential | None:
        """The credential for a plaintext key, or None when no such key exists."""
        if not has_key_shape(token):
            return None
        key_hash = hash_key(token)
        cached = self._entries.get(key_hash)
        now = trio.current_time()
        if cached is not None and now - cached[1] < self._max_age:
            self.hits += 1
            return cached[0]
        self.misses += 1
        generation = self._generation
        row = await key_queries.find_credential(self._db, key_hash)
        if row is None:
            return None
        credential = credential_from_row(row)
        if generation == self._generation and self._listening:
            if len(self._entries) >= self._capacity:
                self._entries.pop(next(iter(self._entries)))
            self._entries[key_hash] = (credential, now)
        return credential

    def is_exempt(self, token: str) -> bool:
        """Whether the token is a key exempt from the default limits; never asks PostgreSQL."""
        return bool(self._exempt) and has_key_shape(token) and hash_key(token) in self._exempt

    async def _keep_exemptions_fresh(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                                     ) -> None:
        """Read the exempt keys now and again after every access change (one heard while reading: again)."""
        outage = OutageLog(log, "reading the keys exempt from the default limits (the last ones stand meanwhile)",
                           (DatabaseUnavailable,))
        while True:
            changed = self._exempt_changed = trio.Event()
            # Shielded (and bounded): a read cut off by the listener's cancellation would leave its connection
            # mid-query for whoever closes the pool.
            with trio.CancelScope(shield=True, deadline=trio.current_time() + _EXEMPT_READ_SECONDS):
                try:
                    self._exempt = frozenset(await key_queries.exempt_key_hashes(self._db))
                except Exception as err:     # a failing read must not end the listener, nor the node with it
                    outage.failed(err)
                else:
                    outage.succeeded()
            task_status.started()
            task_status = trio.TASK_STATUS_IGNORED
            await changed.wait()

    def cached(self, token: str) -> Credential | None:
        """The credential if it is in memory; never asks PostgreSQL (for requests refused before any lookup)."""
        entry = self._entries.get(hash_key(token)) if has_key_shape(token) else None
        if entry is None or trio.current_time() - entry[1] >= self._max_age:
            return None
        return entry[0]

    def forget_workspace(self, workspace_id: int) -> None:
        self._generation += 1
        stale = [h for h, (credential, _) in self._entries.items() if credential.workspace_id == workspace_id]
        for key_hash in stale:
            del self._entries[key_hash]

    def forget_all(self) -> None:
        self._generation += 1
        self._entries.clear()

    def _on_access_changed(self, payload: str) -> None:
        self._exempt_changed.set()
        try:
            self.forget_workspace(int(payload))
        except ValueError:
            log.warning("unexpected %s payload %r; dropping every cached credential", ACCESS_CHANGED_CHANNEL, payload)
            self.forget_all()


def credential_from_row(row: Record) -> Credential:
    return Credential(
        key_id=row["key_id"],
        workspace_id=row["workspace_id"],
        key_name=row["key_name"],
        scopes=tuple(row["scopes"]),
        read_only=row["read_only"],
        rate_limit_per_minute=row["rate_limit_per_minute"],
        expires_at=row["expires_at"],
        revoked_at=row["revoked_at"],
        grace_until=row["grace_until"],
        member_id=row["member_id"],
        member_role=row["member_role"],
        member_permissions=tuple(row["member_permissions"]),
        member_status=row["member_status"],
        member_assigned_only=row["member_assigned_only"],
        plan=Plan(row["plan"]),
        cloud_api_enabled=row["cloud_api_enabled"],
        limits_exempt=row["limits_exempt"],
    )
