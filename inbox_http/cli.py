"""`inbox-actors`: the operator's command line.

Every command prints one JSON object on stdout, so scripts can drive it. Bad arguments print a message on
stderr and exit with status 2, having written nothing; an unreachable database exits with status 1.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Any, Awaitable, Callable, NamedTuple, NoReturn

EXIT_FAILURE = 1
EXIT_BAD_ARGUMENTS = 2

PLANS = ("starter", "growth", "scale")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="inbox-actors", description="Inbox Actors: shared team inbox service.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the service (embedded PostgreSQL unless DATABASE_URL is set)")
    serve.add_argument("--host", help="address to listen on (default INBOX_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (default INBOX_PORT or 8080; 0 picks one)")
    serve.add_argument("--demo", action="store_true",
                       help="seed a Scale demo workspace and print a fresh full-access demo key when ready")

    commands.add_parser("migrate", help="apply pending database migrations")

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

    member = commands.add_parser("member", help="add team members, suspend or remove them")
    member_commands = member.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = member_commands.add_parser("add", help="add a member to a workspace")
    add.add_argument("--workspace", required=True, type=int, metavar="ID")
    add.add_argument("--name", required=True)
    add.add_argument("--email")
    add.add_argument("--role", required=True, choices=("admin", "agent"))
    add.add_argument("--assigned-only", action="store_true", help="the member sees only chats assigned to them")
    add.add_argument("--permissions", metavar="SCOPE,SCOPE",
                     help="the member's permissions in scope names (default: all for admins, "
                          "inbox,contacts,templates,whatsapp_api,analytics:read for agents)")
    status = member_commands.add_parser("set-status", help="suspend, remove or reactivate a member")
    status.add_argument("--member", required=True, type=int, metavar="USER_ID")
    status.add_argument("--status", required=True, choices=("active", "suspended", "removed"))

    session = commands.add_parser("session", help="issue a member's dashboard session (accepted by key management)")
    session_commands = session.add_subparsers(dest="action", required=True, metavar="ACTION")
    session_create = session_commands.add_parser("create", help="create a session token (printed once)")
    session_create.add_argument("--member", required=True, type=int, metavar="USER_ID")
    session_create.add_argument("--hours", type=int, default=12, metavar="N", help="lifetime, 1 to 720 (default 12)")

    key = commands.add_parser("key", help="issue API keys")
    key_commands = key.add_subparsers(dest="action", required=True, metavar="ACTION")
    key_create = key_commands.add_parser("create", help="create an API key (plaintext printed once)")
    key_create.add_argument("--workspace", required=True, type=int, metavar="ID")
    key_create.add_argument("--member", required=True, type=int, metavar="USER_ID", help="the key's creator")
    key_create.add_argument("--name", required=True)
    key_create.add_argument("--scopes", required=True, metavar="all|SCOPE,SCOPE")
    key_create.add_argument("--expires-in-days", type=int, metavar="N", help="1 to 730")
    key_create.add_argument("--rate-limit", type=int, metavar="N", help="requests per minute, 10 to 100000")
    _add_template_and_bot_commands(commands)
    _add_simulator_command(commands)
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "simulator":
        _simulator(args)                     # needs neither the service's settings nor its database
        return

    from inbox_http.settings import Settings, SettingsError

    try:
        settings = Settings.from_environment()
    except SettingsError as err:
        _fail(str(err), EXIT_BAD_ARGUMENTS)
    logging.basicConfig(
        stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        level=settings.log_level if args.command == "serve" else logging.WARNING,
    )
    if args.command == "serve":
        _serve(args, settings)
        return
    _print(_run_with_database(settings, _COMMANDS[(args.command, getattr(args, "action", None))], args))


def _serve(args: argparse.Namespace, settings: Any) -> None:
    import msgspec
    import trio

    from inbox_http.server import run_service

    overrides = {name: value for name, value in (("host", args.host), ("port", args.port)) if value is not None}
    if "port" in overrides and not 0 <= overrides["port"] <= 65535:
        _fail("--port must be between 0 and 65535", EXIT_BAD_ARGUMENTS)
    settings = msgspec.structs.replace(settings, **overrides)
    trio.run(lambda: run_service(settings, demo=args.demo, on_ready=_print))


def _add_simulator_command(commands: Any) -> None:
    simulator = commands.add_parser("simulator", help="run the WhatsApp Cloud API simulator (no database)")
    simulator.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    simulator.add_argument("--port", type=int, default=8090, help="port to listen on (default 8090; 0 picks one)")
    simulator.add_argument("--webhook-url", metavar="URL",
                           help="where to post signed webhooks: the service's /webhooks/whatsapp")
    simulator.add_argument("--app-secret", required=True, help="signs the webhooks (X-Hub-Signature-256)")
    simulator.add_argument("--access-token", required=True, help="the bearer token sends must carry")
    simulator.add_argument("--template", action="append", default=[], metavar="NAME:LANG:PARAMS[:CATEGORY]",
                           help="a template every business number has (repeatable; category default UTILITY)")
    simulator.add_argument("--throughput", type=int, default=80, metavar="N",
                           help="sends per second per business number before 130429 (default 80)")
    simulator.add_argument("--status-delays", default="0.05,0.2,0.5", metavar="SENT,DELIVERED,READ",
                           help="seconds after acceptance of each status (default 0.05,0.2,0.5)")


def _simulator(args: argparse.Namespace) -> None:
    import trio

    from inbox_actors.platform.simulator.command import run_simulator_command
    from inbox_actors.platform.simulator.rules import StatusDelays
    from inbox_actors.platform.template_catalog import InvalidTemplateSpec, parse_template_spec

    logging.basicConfig(stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        level=logging.WARNING)
    if not 0 <= args.port <= 65535:
        _fail("--port must be between 0 and 65535", EXIT_BAD_ARGUMENTS)
    if args.throughput < 1:
        _fail("--throughput must be at least 1", EXIT_BAD_ARGUMENTS)
    try:
        templates = [parse_template_spec(text) for text in args.template]
    except InvalidTemplateSpec as err:
        _fail(str(err), EXIT_BAD_ARGUMENTS)
    try:
        delays = [float(part) for part in args.status_delays.split(",")]
    except ValueError:
        delays = []
    if len(delays) != 3 or delays != sorted(delays) or delays[0] < 0:
        _fail("--status-delays must be three increasing numbers of seconds", EXIT_BAD_ARGUMENTS)
    trio.run(lambda: run_simulator_command(
        args.host, args.port, args.webhook_url, args.app_secret, args.access_token, templates=templates,
        delays=StatusDelays(*delays), throughput_per_second=args.throughput, on_ready=_print))


def _run_with_database(settings: Any, command: Callable[[Any, argparse.Namespace], Awaitable[Any]],
                       args: argparse.Namespace) -> Any:
    import trio

    from inbox_actors.access.accounts import AccountError
    from inbox_actors.access.sessions import SessionError
    from persistence.database import DatabaseUnavailable, open_database_loop
    from persistence.embedded import EmbeddedPostgresError
    from persistence.startup import open_database

    async def run() -> Any:
        # Expected failures are turned into values inside the loop: past it they arrive wrapped in groups.
        async with open_database_loop():
            try:
                async with open_database(url=settings.database_url, data_dir=settings.data_dir,
                                         pool_size=2) as db:
                    return await command(db, args)
            except (AccountError, SessionError) as err:
                return _Failure(str(err), EXIT_BAD_ARGUMENTS)
            except (DatabaseUnavailable, EmbeddedPostgresError) as err:
                return _Failure(str(err), EXIT_FAILURE)

    outcome = trio.run(run)
    if isinstance(outcome, _Failure):
        _fail(outcome.message, outcome.status)
    return outcome


class _Failure(NamedTuple):
    message: str
    status: int


async def _migrate(db, args):
    from persistence.migrations import available_migrations

    # open_database has applied whatever was pending.
    version = await db.fetchval("SELECT max(version) FROM schema_migrations")
    return {"schema_version": version, "migrations": len(available_migrations())}


async def _workspace_create(db, args):
    from inbox_actors.access import accounts

    created = await accounts.create_workspace(db, name=args.name, plan=args.plan, phone_number_id=args.phone_number_id)
    return {"workspace_id": created.workspace_id, "phone_number_id": created.phone_number_id}


async def _workspace_set_plan(db, args):
    from inbox_actors.access import accounts

    change = await accounts.set_plan(db, workspace_id=args.workspace, plan=args.plan)
    return {"workspace_id": change.workspace_id, "plan": change.plan}


async def _workspace_set_sla(db, args):
    from inbox_actors.access import accounts

    return await accounts.set_sla(db, workspace_id=args.workspace, sla_seconds=args.seconds)


async def _workspace_set_cloud_api(db, args):
    from inbox_actors.access import accounts

    return await accounts.set_cloud_api(db, workspace_id=args.workspace, enabled=args.enabled == "on")


async def _member_add(db, args):
    from inbox_actors.access import accounts

    permissions = _split(args.permissions) if args.permissions is not None else None
    user_id = await accounts.add_member(
        db, workspace_id=args.workspace, name=args.name, email=args.email, role=args.role,
        assigned_only=args.assigned_only, permissions=permissions,
    )
    return {"user_id": user_id}


async def _member_set_status(db, args):
    from inbox_actors.access import accounts

    await accounts.set_member_status(db, member_id=args.member, status=args.status)
    return {"user_id": args.member, "status": args.status}


async def _key_create(db, args):
    from inbox_actors.access import accounts

    issued = await accounts.create_key(
        db, workspace_id=args.workspace, member_id=args.member, name=args.name, scopes=_split(args.scopes),
        expires_in_days=args.expires_in_days, rate_limit_per_minute=args.rate_limit,
    )
    result = {"id": issued.id, "key": issued.key, "scopes": issued.scopes, "read_only": issued.read_only}
    if issued.expires_at is not None:
        result["expires_at"] = issued.expires_at.isoformat()
    if issued.rate_limit_per_minute is not None:
        result["rate_limit_per_minute"] = issued.rate_limit_per_minute
    return result


async def _session_create(db, args):
    from datetime import datetime, timezone

    from inbox_actors.access.sessions import create_session

    token, expires_at = await create_session(db, member_id=args.member, hours=args.hours,
                                             now=datetime.now(timezone.utc))
    return {"user_id": args.member, "token": token, "expires_at": expires_at.isoformat()}


def _add_template_and_bot_commands(commands: Any) -> None:
    template = commands.add_parser("template", help="register a workspace's message templates")
    template_commands = template.add_subparsers(dest="action", required=True, metavar="ACTION")
    template_add = template_commands.add_parser("add", help="add a template (one per name and language)")
    template_add.add_argument("--workspace", required=True, type=int, metavar="ID")
    template_add.add_argument("--name", required=True, help="lowercase letters, digits and underscores")
    template_add.add_argument("--language", required=True, metavar="CODE", help="locale code: en, en_US, pt_BR")
    template_add.add_argument("--body", required=True, metavar="TEXT", help="parameters as {{1}}, {{2}}, ...")
    template_add.add_argument("--category", default="UTILITY", metavar="UTILITY|MARKETING|AUTHENTICATION")
    template_add.add_argument("--status", default="APPROVED", metavar="APPROVED|PENDING|REJECTED|PAUSED|DISABLED")
    template_add.add_argument("--parameters", type=int, metavar="N",
                              help="parameter count (default: counted from the body; must agree with it)")
    template_list = template_commands.add_parser("list", help="a workspace's templates by name and language")
    template_list.add_argument("--workspace", required=True, type=int, metavar="ID")
    template_remove = template_commands.add_parser("remove", help="remove a template")
    template_remove.add_argument("--workspace", required=True, type=int, metavar="ID")
    template_remove.add_argument("--name", required=True)
    template_remove.add_argument("--language", required=True, metavar="CODE")

    bot = commands.add_parser("bot", help="the answers the bot gives customers")
    bot_commands = bot.add_subparsers(dest="action", required=True, metavar="ACTION")
    bot_add = bot_commands.add_parser("add", help="add an answer given when one of its keywords is asked")
    bot_add.add_argument("--workspace", required=True, type=int, metavar="ID")
    bot_add.add_argument("--keywords", required=True, metavar="WORD,PHRASE", help="alternatives: \"price,cost\"")
    bot_add.add_argument("--answer", required=True, metavar="TEXT")
    bot_list = bot_commands.add_parser("list", help="a workspace's answers")
    bot_list.add_argument("--workspace", required=True, type=int, metavar="ID")
    bot_remove = bot_commands.add_parser("remove", help="remove an answer")
    bot_remove.add_argument("--workspace", required=True, type=int, metavar="ID")
    bot_remove.add_argument("--answer", required=True, type=int, metavar="ID")


async def _template_add(db, args):
    from inbox_actors.platform import templates

    added = await templates.add_template(
        db, workspace_id=args.workspace, name=args.name, language=args.language, body=args.body,
        category_name=args.category, status_name=args.status, parameters=args.parameters,
    )
    return {"template_id": added.template_id, "name": added.name, "language": added.language,
            "parameter_count": added.parameter_count}


async def _template_list(db, args):
    import msgspec

    from inbox_actors.platform import templates

    found = await templates.list_templates(db, workspace_id=args.workspace)
    return {"workspace_id": args.workspace, "templates": msgspec.to_builtins(found)}


async def _template_remove(db, args):
    from inbox_actors.platform import templates

    removed = await templates.remove_template(db, workspace_id=args.workspace, name=args.name,
                                              language=args.language)
    return {"workspace_id": args.workspace, "name": removed.name, "language": removed.language, "removed": True}


async def _bot_add(db, args):
    from inbox_actors.conversations import bot

    added = await bot.add_answer(db, workspace_id=args.workspace, keywords=_split(args.keywords), answer=args.answer)
    return {"answer_id": added.answer_id, "keywords": added.keywords}


async def _bot_list(db, args):
    import msgspec

    from inbox_actors.conversations import bot

    answers = await bot.list_answers(db, workspace_id=args.workspace)
    return {"workspace_id": args.workspace, "answers": msgspec.to_builtins(answers)}


async def _bot_remove(db, args):
    from inbox_actors.conversations import bot

    await bot.remove_answer(db, workspace_id=args.workspace, answer_id=args.answer)
    return {"answer_id": args.answer, "removed": True}


_COMMANDS: dict[tuple[str, str | None], Callable[[Any, argparse.Namespace], Awaitable[Any]]] = {
    ("migrate", None): _migrate,
    ("workspace", "create"): _workspace_create,
    ("workspace", "set-plan"): _workspace_set_plan,
    ("workspace", "set-sla"): _workspace_set_sla,
    ("workspace", "set-cloud-api"): _workspace_set_cloud_api,
    ("member", "add"): _member_add,
    ("member", "set-status"): _member_set_status,
    ("key", "create"): _key_create,
    ("session", "create"): _session_create,
    ("template", "add"): _template_add,
    ("template", "list"): _template_list,
    ("template", "remove"): _template_remove,
    ("bot", "add"): _bot_add,
    ("bot", "list"): _bot_list,
    ("bot", "remove"): _bot_remove,
}


def _split(csv: str) -> list[str]:
    return [part for part in (p.strip() for p in csv.split(",")) if part]


def _print(payload: Any) -> None:
    print(json.dumps(payload, default=str), flush=True)


def _fail(message: str, status: int) -> NoReturn:
    print(f"inbox-actors: error: {message}", file=sys.stderr)
    sys.exit(status)


if __name__ == "__main__":
    main()
