"""`inbox-actors workspace`: create workspaces, change their plan, SLA and cloud API switch."""

from __future__ import annotations

import argparse
from typing import Any

from inbox_actors.access import accounts
from inbox_actors.access.accounts import AccountError
from inbox_actors.team import sla
from inbox_http.cli.database import DatabaseCommand
from persistence.database import Database

PLANS = ("starter", "growth", "scale")


def add_commands(commands: Any) -> None:
    workspace = commands.add_parser("workspace", help="create workspaces, change plans")
    workspace_commands = workspace.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = workspace_commands.add_parser("create", help="create a workspace")
    create.add_argument("--name", required=True)
    create.add_argument("--plan", required=True, choices=PLANS)
    create.add_argument("--phone-number-id", help="the workspace's WhatsApp phone number id (generated if omitted)")
    set_plan = workspace_commands.add_parser("set-plan", help="change a workspace's plan (keys are kept)")
    set_plan.add_argument("--workspace", required=True, type=int, metavar="ID")
    set_plan.add_argument("--plan", required=True, choices=PLANS)
    set_sla = workspace_commands.add_parser("set-sla", help="how long a customer may wait for a person")
    set_sla.add_argument("--workspace", required=True, type=int, metavar="ID")
    set_sla.add_argument("--seconds", type=int, metavar="N", help="the SLA target; omit to remove the target")
    cloud_api = workspace_commands.add_parser("set-cloud-api", help="switch sending through the cloud API on or off")
    cloud_api.add_argument("--workspace", required=True, type=int, metavar="ID")
    cloud_api.add_argument("--enabled", required=True, choices=("on", "off"))


async def create(db: Database, args: argparse.Namespace) -> dict:
    created = await accounts.create_workspace(db, name=args.name, plan=args.plan, phone_number_id=args.phone_number_id)
    return {"workspace_id": created.workspace_id, "phone_number_id": created.phone_number_id}


async def set_plan(db: Database, args: argparse.Namespace) -> dict:
    change = await accounts.set_plan(db, workspace_id=args.workspace, plan=args.plan)
    return {"workspace_id": change.workspace_id, "plan": change.plan}


async def set_sla(db: Database, args: argparse.Namespace) -> Any:
    try:
        row = await sla.set_target(db, args.workspace, args.seconds)
    except sla.InvalidSlaPolicy as err:
        raise AccountError(str(err)) from None
    if row is None:
        raise AccountError(f"no workspace {args.workspace}")
    return {"workspace_id": row["id"], "sla_seconds": row["sla_seconds"]}


async def set_cloud_api(db: Database, args: argparse.Namespace) -> Any:
    return await accounts.set_cloud_api(db, workspace_id=args.workspace, enabled=args.enabled == "on")


COMMANDS: dict[str | None, DatabaseCommand] = {
    "create": create,
    "set-plan": set_plan,
    "set-sla": set_sla,
    "set-cloud-api": set_cloud_api,
}
