"""A ready-to-use demo: a Scale workspace with an admin who signs in by email and password and a full-access key,
made afresh on each start."""

from __future__ import annotations

import secrets
from datetime import datetime, timezone

import msgspec

from inbox_actors.access import accounts
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
DEMO_ANSWERS = (
    (["price"], "Our plans start at 10 USD a month."),
    (["hours"], "We are open 9:00 to 18:00, Monday to Friday."),
    (["refund"], "Refunds are made within 5 working days of the request."),
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
    """A few FAQ answers and one template, so a demo chat has a bot that answers and a template to send."""
    for keywords, answer in DEMO_ANSWERS:
        await bot.add_answer(db, workspace_id=workspace_id, keywords=keywords, answer=answer)
    await templates.add_template(db, workspace_id=workspace_id, name="order_update", language="en",
                                 body="Hello {{1}}, your order {{2}} is on its way.", category_name="UTILITY")
