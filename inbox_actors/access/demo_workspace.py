"""A ready-to-use demo: a Scale workspace with an admin who signs in by email and password and a full-access key,
made afresh on each start."""

from __future__ import annotations

import secrets
from datetime import datetime, timezone
from decimal import Decimal

import msgspec

from inbox_actors.access import accounts
from inbox_actors.ai_agent import knowledge, pricing
from inbox_actors.ai_agent.pricing import Item
from inbox_actors.conversations import bot
from inbox_actors.platform import templates
from persistence.database import Database
from persistence.queries import api_keys as key_queries
from persistence.queries import roster as roster_queries
from persistence.queries import sign_in as sign_in_queries
from persistence.queries import workspaces as workspace_queries

DEMO_WORKSPACE = "Demo workspace"
DEMO_ADMIN = "Demo Admin"
DEMO_EMAIL = "admin@demo.example"
DEMO_KEY_NAME = "demo"
# Amounts live in the pricing sheet (the AI agent states no amount its quote_price tool did not return); the FAQ
# answers and the article hold the rest of what the demo's agent knows.
DEMO_ANSWERS = (
    (["hours", "open"], "We are open 9:00 to 18:00, Monday to Friday."),
    (["refund"], "Refunds are made within 5 working days of the request."),
)
DEMO_ARTICLE = ("Plans and shipping", """Every plan includes the shared inbox, the AI agent and the mobile app.

## Shipping
Orders ship from our warehouse within two working days. Tracking links are sent by WhatsApp.

## Returns
You can return a device within 30 days of delivery. Keep the original box and the receipt.""")
DEMO_PRICES = (
    Item(name="Starter plan", price=Decimal("10.00"), currency="USD", unit="month", notes="Up to 3 members"),
    Item(name="Pro plan", price=Decimal("25.00"), currency="USD", unit="month", notes="Up to 20 members"),
    Item(name="Express shipping", price=Decimal("7.50"), currency="USD", unit="order"),
)


class DemoAccess(msgspec.Struct, frozen=True):
    workspace_id: int
    phone_number_id: str
    user_id: int
    key: str
    email: str                 # the admin's, to sign in to the web app with
    password: str              # new on each start, like the key: shown once, only its hash is stored


async def seed_demo(db: Database) -> DemoAccess:
    """Idempotent: reuses the demo workspace and admin; revokes the previous demo key and issues a new one, and
    gives the admin a new password (a plaintext key or password cannot be shown twice)."""
    async with db.transaction() as tx:
        workspace = await workspace_queries.find_workspace_by_name(tx, DEMO_WORKSPACE)
    if workspace is None:
        created = await accounts.create_workspace(db, name=DEMO_WORKSPACE, plan="scale")
        workspace_id, phone_number_id = created.workspace_id, created.phone_number_id
        await _seed_bot_and_templates(db, workspace_id)
    else:
        workspace_id, phone_number_id = workspace["id"], workspace["phone_number_id"]
        await accounts.set_plan(db, workspace_id=workspace_id, plan="scale")
    async with db.transaction() as tx:
        admin = await workspace_queries.find_member_by_name(tx, workspace_id, DEMO_ADMIN, "admin")
    admin_id = admin["id"] if admin is not None else None
    if admin_id is None:
        admin_id = await accounts.add_member(db, workspace_id=workspace_id, name=DEMO_ADMIN, role="admin",
                                             email=DEMO_EMAIL)
    else:
        await _give_demo_email(db, admin_id)
    password = secrets.token_urlsafe(12)
    await accounts.set_member_password(db, member_id=admin_id, password=password)
    async with db.transaction() as tx:
        await key_queries.revoke_keys_named(tx, workspace_id, DEMO_KEY_NAME)
    issued = await accounts.create_key(db, workspace_id=workspace_id, member_id=admin_id, name=DEMO_KEY_NAME,
                                       scopes=["all"])
    return DemoAccess(workspace_id=workspace_id, phone_number_id=phone_number_id, user_id=admin_id,
                      key=issued.key, email=DEMO_EMAIL, password=password)


async def _give_demo_email(db: Database, admin_id: int) -> None:
    """A demo made before members signed in by email has an admin without one."""
    async with db.transaction() as tx:
        admin = await sign_in_queries.find_member_for_sign_in(tx, admin_id)
        if (admin["email"] or "").lower() != DEMO_EMAIL:
            await roster_queries.update_member(tx, admin_id, {"email": DEMO_EMAIL}, datetime.now(timezone.utc))


async def _seed_bot_and_templates(db: Database, workspace_id: int) -> None:
    """A few FAQ answers, an article, a pricing sheet and one template, so a demo chat has an agent that answers
    and quotes, and a template to send."""
    await seed_demo_knowledge(db, workspace_id)
    await templates.add_template(db, workspace_id=workspace_id, name="order_update", language="en",
                                 body="Hello {{1}}, your order {{2}} is on its way.", category_name="UTILITY")


async def seed_demo_knowledge(db: Database, workspace_id: int) -> None:
    """What the demo's bot knows (its FAQ answers, article and pricing sheet), in `workspace_id`: scripts/load_chats.py
    gives its own workspaces the same. Made by the operator (no member), as the command line does."""
    for keywords, answer in DEMO_ANSWERS:
        await bot.add_answer(db, workspace_id=workspace_id, keywords=keywords, answer=answer)
    now = datetime.now(timezone.utc)
    await knowledge.add_article(db, workspace_id, None, "cli", *DEMO_ARTICLE, now)
    sheet = await pricing.add_sheet(db, workspace_id, None, "cli", "Plans", now)
    await pricing.import_items(db, workspace_id, None, "cli", sheet.id, DEMO_PRICES, now)
