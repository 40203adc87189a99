"""Every actor kind the service runs, assembled in one place, and the standing actors started with it.

The HTTP front builds the dependencies it owns (settings, the platform link, the webhook transport), calls
`actor_kinds` and starts the system; which kinds exist, how they are configured and which actors stand from
the start is decided here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from inbox_actors.access.activity_log import activity_log_kind, prune_expired_activity
from inbox_actors.access.credentials import CredentialCache
from inbox_actors.access.key_ring import key_ring_kind
from inbox_actors.access.rate_bucket import rate_bucket_kinds
from inbox_actors.ai_agent.model_gate import model_gate_kind
from inbox_actors.broadcasts.broadcast import BroadcastDeps, broadcast_kind
from inbox_actors.broadcasts.schedule import ScheduleDeps, broadcast_schedule_kind, start_broadcast_schedule
from inbox_actors.contacts.contact_card import contact_card_kind
from inbox_actors.conversations.conversation import ConversationDeps, conversation_kind
from inbox_actors.conversations.in_doubt_sweeper import in_doubt_job
from inbox_actors.conversations.send_pacer import send_pacer_kind
from inbox_actors.conversations.sla_clock import SlaClockDeps, sla_clock_kind, start_sla_clock
from inbox_actors.conversations.snooze_clock import SnoozeClockDeps, snooze_clock_kind, start_snooze_clock
from inbox_actors.conversations.status_writer import status_writer_kind
from inbox_actors.monitoring.clock_skew import clock_skew_job
from inbox_actors.monitoring.metrics import ServiceMetrics
from inbox_actors.runtime import ActorKind, Directory, Job, start_timers, timer_kind
from inbox_actors.runtime.clock import Clock
from inbox_actors.team.assignment_desk import AssignmentDeskDeps, assignment_desk_kind, desk_timer
from inbox_actors.team.audit_log import prune_expired as prune_audit
from inbox_actors.webhooks.endpoint import EndpointDeps, webhook_endpoint_kind
from inbox_actors.webhooks.retention import prune_delivered_events
from persistence.database import Database, DatabaseUnavailable

HOUR = timedelta(hours=1).total_seconds()

OUTAGES: tuple[type[BaseException], ...] = (DatabaseUnavailable,)
"""What the service's actors raise when the database every one of them shares is out: the actor system is told
(`ActorSystem(outages=OUTAGES)`), so a crash so caused spends no actor's restart intensity and opens no kind's
circuit, and the actors start again within a second of the database's return (runtime/supervision.py)."""


@dataclass(frozen=True)
class ServiceDeps:
    db: Database
    clock: Clock
    credentials: CredentialCache
    conversations: ConversationDeps
    webhooks: EndpointDeps
    idle_seconds: float = 300.0
    """Conversations, contact cards, key rings and webhook endpoints leave memory after this long idle."""
    broadcast_concurrency: int = 16
    """Sends of one broadcast in flight at once (its pace is the number's send pacer's)."""
    extra_jobs: Mapping[str, Job] = field(default_factory=dict)
    """Timers of the front's own (e.g. its idempotency records' retention), run beside the actors' own."""
    metrics: ServiceMetrics | None = None
    """Where the actors count what operators watch (GET /metrics)."""

    def timer_jobs(self) -> dict[str, Job]:
        return {**actor_jobs(self.db), "node clock skew": clock_skew_job(self.db, self.clock, self.metrics),
                **self.extra_jobs}


def actor_jobs(db: Database) -> dict[str, Job]:
    """The timers of the actors' own data: hourly retention (activity, delivery log, team audit log), giving up
    sends left in doubt, and waking the assignment desks."""
    return {
        # Node-wide sweeps: each reads PostgreSQL's clock in its statement, never this node's.
        "activity retention": Job(HOUR, lambda _actors: prune_expired_activity(db)),
        "webhook delivery log retention": Job(HOUR, lambda _actors: prune_delivered_events(db)),
        "team audit retention": Job(HOUR, lambda _actors: prune_audit(db)),
        "in-doubt sends": in_doubt_job(db),
        # Wakes the assignment desk of each workspace this node holds with chats waiting (one that is not running).
        "automatic assignment": desk_timer(db),
    }


def actor_kinds(deps: ServiceDeps) -> list[ActorKind]:
    """Every kind the service runs (each kind's module defines its ActorKind)."""
    idle = deps.idle_seconds
    # In dependency order, what is used before what uses it: shutdown stops kinds in reverse, so a conversation
    # stops before the send pacer it asks, the SLA clock and broadcasts before the conversations they tell, and
    # the activity log (every request's last step) last.
    return [
        activity_log_kind(deps.db, deps.metrics),
        *rate_bucket_kinds(),
        key_ring_kind(deps.db, deps.clock, deps.credentials, idle_timeout=idle),
        send_pacer_kind(),
        model_gate_kind(),
        contact_card_kind(deps.db, deps.clock, idle_timeout=idle),
        conversation_kind(deps.conversations, idle_timeout=idle),
        assignment_desk_kind(AssignmentDeskDeps(db=deps.db)),
        status_writer_kind(deps.db, deps.clock),
        sla_clock_kind(SlaClockDeps(db=deps.db)),
        snooze_clock_kind(SnoozeClockDeps(db=deps.db)),
        broadcast_kind(BroadcastDeps(db=deps.db, clock=deps.clock, sends_per_second=deps.conversations.sends_per_second,
                                     concurrency=deps.broadcast_concurrency), idle_timeout=idle),
        broadcast_schedule_kind(ScheduleDeps(db=deps.db)),
        webhook_endpoint_kind(deps.webhooks, idle_timeout=idle),
        timer_kind(deps.timer_jobs()),
    ]


async def start_standing_actors(actors: Directory, deps: ServiceDeps) -> None:
    """Start the actors that run from the start rather than on demand: the SLA and snooze clocks, the broadcast
    schedule (which resumes broadcasts a stop interrupted) and the timers."""
    await start_sla_clock(actors)
    await start_snooze_clock(actors)
    await start_broadcast_schedule(actors)
    await start_timers(actors, list(deps.timer_jobs()))
