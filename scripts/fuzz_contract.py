"""Fuzz every operation of the published contract (`http/openapi.json`) with Schemathesis, every check on, against
the real service on a real socket; print the counts by check and exit 1 on any failure.

    .venv/bin/python scripts/fuzz_contract.py                     # 100 examples per operation
    .venv/bin/python scripts/fuzz_contract.py --examples 20 --seed 7
    .venv/bin/python scripts/fuzz_contract.py --database-url postgresql://postgres@127.0.0.1:5432/postgres

What it starts, and stops at the end:
- PostgreSQL: the embedded server (durability off) in a temporary directory, or the server of --database-url,
  with a database `inbox_bench_fuzz_<pid>` of its own, migrated and dropped at the end.
- The service, in this process on 127.0.0.1 (an ephemeral port), with its built-in platform simulator, on a
  Scale workspace whose admin has two full-access keys with the highest limit a key may have, and a dashboard
  session; the per-IP ceiling is raised so that no limit is what is tested. One chat (opened by a customer's
  message) and its contact exist under the phone the contract gives as its example, so examples reach the
  routes' success paths. Outbound webhooks may go to 127.0.0.0/8 only and no host name is resolved (whatever
  URL the fuzzer saves, nothing leaves this machine); a receiver here answers them 200.
- Schemathesis (`schemathesis run`, a process of its own): `--checks all`, --examples per operation, a fixed
  --seed, in three passes: every operation but key management with the first key; key management and webhook
  settings with the session; key management with the second key, last (it may revoke the key it calls with).
  scripts/fuzz_contract_hooks.py keeps positive cases inside the rules JSON Schema cannot state and adds the
  check that only a send the platform refused may answer 5xx.

Every operation is fuzzed. POST /webhooks/whatsapp only as far as its signature check: a fuzzer cannot sign
its own bodies with the app secret, so every case is a documented 401 (tests/e2e cover signed deliveries).
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

import httpx
import trio
import trio_asyncio
from harness.options import add_database_url
from harness.postgres import bench_database
from harness.run import run_on_postgres

from inbox_actors.access import accounts
from inbox_actors.access.sessions import create_session
from inbox_actors.labels import label_set as labels
from inbox_actors.platform import templates
from inbox_actors.platform.payloads import InboundMessage
from inbox_actors.platform.webhook_envelope import SIGNATURE_HEADER, build_envelope, sign
from inbox_actors.webhooks.address_guard import AddressGuard, EndpointUrl, UnresolvedHost
from inbox_http.server import build_app, serve_app
from inbox_http.settings import Settings
from persistence.database import Database

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "http" / "openapi.json"
ALL_PHASES = "examples,coverage,fuzzing,stateful"
EXAMPLE_PHONE = "919876543210"     # the phone the contract's examples name
KEY_LIMIT_PER_MINUTE = 100_000     # the highest a key may have
# The routes a member's dashboard session may call besides a key: key management and webhook settings.
SESSION_ROUTES = r"^/api/(keys|webhook/outbound)(/|$)"
KEY_ROUTES = r"^/api/keys(/|$)"
LOOPBACK = ipaddress.ip_network("127.0.0.0/8")


class LoopbackOnlyGuard(AddressGuard):
    """Webhook addresses for a fuzzed service: 127.0.0.0/8 only, and no host name is ever resolved (but
    localhost), so no URL a fuzzer saves can make the service reach beyond this machine."""

    def __init__(self) -> None:
        super().__init__((LOOPBACK,), resolve_timeout=0.1)

    def refusal(self, address, scheme: str) -> str | None:
        return None if self.is_allowed(address) else f"{address} is outside 127.0.0.0/8 (fuzzing)"

    def check_url(self, url: str) -> EndpointUrl:
        endpoint = super().check_url(url)
        try:
            address = ipaddress.ip_address(endpoint.host)
        except ValueError:
            return endpoint
        reason = self.refusal(address, endpoint.scheme)
        if reason is not None:
            from inbox_actors.webhooks.address_guard import InvalidEndpointUrl
            raise InvalidEndpointUrl(reason)
        return endpoint

    async def addresses_to_connect(self, endpoint: EndpointUrl):
        host = "127.0.0.1" if endpoint.host.rstrip(".") == "localhost" else endpoint.host
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            raise UnresolvedHost(f"the host {endpoint.host} does not resolve (no name is resolved while fuzzing)")
        return await super().addresses_to_connect(
            EndpointUrl(endpoint.scheme, str(address), endpoint.port, endpoint.target, endpoint.host_header,
                        endpoint.url))


@dataclass(frozen=True)
class Access:
    member_id: int
    key: str
    management_key: str
    session: str


# The fuzzing workspace's one label, which the hooks put on chats (FUZZ_LABEL in their environment).
FUZZ_LABEL = "Fuzz"


async def seed(db: Database) -> tuple[Access, str]:
    """A Scale workspace, its admin's full-access key (the highest limit) and session, a template, a label; (access,
    the workspace's phone_number_id)."""
    created = await accounts.create_workspace(db, name="Contract fuzzing", plan="scale")
    admin = await accounts.add_member(db, workspace_id=created.workspace_id, name="Fuzz admin", role="admin",
                                      email="admin@fuzz.example.com")
    key, management_key = [await accounts.create_key(
        db, workspace_id=created.workspace_id, member_id=admin, name=name, scopes=["all"],
        rate_limit_per_minute=KEY_LIMIT_PER_MINUTE) for name in ("fuzzer", "fuzzer of key management")]
    session, _ = await create_session(db, member_id=admin, hours=12)
    await templates.add_template(db, workspace_id=created.workspace_id, name="order_update", language="en",
                                 body="Hello {{1}}, your order {{2}} is on its way.")
    await labels.create(db, created.workspace_id, admin, "operator", labels.CreateLabel(name=FUZZ_LABEL),
                        datetime.now(timezone.utc))
    return Access(member_id=admin, key=key.key, management_key=management_key.key, session=session), \
        created.phone_number_id


async def open_example_chat(url: str, app_secret: str, phone_number_id: str) -> None:
    """The chat of the example phone, opened by its customer's message as the platform delivers it."""
    message = InboundMessage(message_id="wamid.fuzz.1", from_phone=EXAMPLE_PHONE, at=datetime.now(timezone.utc),
                             type="text", text="Where is my order?", profile_name="Ravi")
    body = build_envelope(phone_number_id, "15550000000", messages=[message])
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        answer = await client.post("/webhooks/whatsapp", content=body, headers={
            "Content-Type": "application/json", SIGNATURE_HEADER: sign(app_secret, body)})
    answer.raise_for_status()


@dataclass(frozen=True)
class Pass:
    name: str
    token: str
    paths: str          # --include-path-regex
    excluded: str = ""  # --exclude-path-regex


def passes(access: Access) -> list[Pass]:
    """Key management last, with a key of its own: a fuzzer that learns key ids from the list may revoke the key
    it calls with (every answer after that is a documented 403)."""
    return [
        Pass("key: every operation but key management", access.key, ".*", KEY_ROUTES),
        Pass("session: key management and webhook settings", access.session, SESSION_ROUTES),
        Pass("key: key management", access.management_key, KEY_ROUTES),
    ]


CONFIG = """
[checks.positive_data_acceptance]
# 412: the contact moved on from the version a case names, a precondition like 409's conflict.
expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "412", "429", "5xx"]

[checks.negative_data_rejection]
# A refused precondition (412, checked before the fields) refuses the request too.
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "412", "415", "422", "428", "429", "5xx"]

[checks.not_a_server_error]
# A send the platform refused is answered 500 (send-message, as the spec has it) or 502 (an agent's reply) with
# the platform's errorCode. Those two statuses are judged by the hooks' check instead, which fails every 5xx
# but such a refusal.
expected-statuses = ["2xx", "3xx", "4xx", "500", "502"]
"""


def schemathesis_command(url: str, run: Pass, args: argparse.Namespace, work_dir: Path, report: Path) -> list[str]:
    command = [str(Path(sys.executable).with_name("schemathesis")), "--config-file", str(work_dir / "st.toml"),
               "run", str(CONTRACT), "--url", url, "--checks", "all", "--max-examples", str(args.examples),
               "--seed", str(args.seed), "--workers", str(args.workers), "--generation-database", "none",
               "--header", f"Authorization: Bearer {run.token}", "--request-timeout", "30",
               "--suppress-health-check", "all", "--report", "ndjson", "--report-ndjson-path", str(report),
               "--include-path-regex", run.paths, "--phases", args.phases]
    if run.excluded:
        command += ["--exclude-path-regex", run.excluded]
    return command


async def run_schemathesis(command: list[str], env: dict[str, str], work_dir: Path, log: Path) -> int:
    with log.open("wb") as out:
        done = await trio.run_process(command, stdout=out, stderr=out, check=False, env=env, cwd=work_dir)
    return done.returncode


@dataclass
class Tally:
    """What the fuzzer's reports say: cases, answers by status, each check's passes and failures."""

    cases: int = 0
    statuses: Counter = field(default_factory=Counter)
    passed: Counter = field(default_factory=Counter)
    failed: Counter = field(default_factory=Counter)
    codes: Counter = field(default_factory=Counter)      # failures by Schemathesis code (ST103, ...)
    failures: list[str] = field(default_factory=list)    # one line per distinct failure
    operations: set = field(default_factory=set)
    errors: list[str] = field(default_factory=list)      # network errors, crashes of the fuzzer

    def read(self, report: Path) -> None:
        for line in report.read_text().splitlines():
            event = json.loads(line)
            if "ScenarioFinished" in event:
                self._scenario(event["ScenarioFinished"])
            elif "NonFatalError" in event or "FatalError" in event:
                error = event.get("NonFatalError") or event.get("FatalError")
                self.errors.append(f"{error.get('label', '')}: {error.get('info', {}).get('message', error)}"[:300])

    def _scenario(self, finished: dict) -> None:
        recorder = finished["recorder"]
        self.operations.add(recorder["label"])
        for case_id, checks in recorder.get("checks", {}).items():
            self.cases += 1
            response = (recorder["interactions"].get(case_id) or {}).get("response") or {}
            if "status_code" in response:
                self.statuses[response["status_code"]] += 1
            for check in checks:
                if check["status"] == "success":
                    self.passed[check["name"]] += 1
                elif check["status"] == "failure":
                    self.failed[check["name"]] += 1
                    failure = (check.get("failure_info") or {}).get("failure", {})
                    self.codes[failure.get("code", check["name"])] += 1
                    entry = (f"{recorder['label']}: {check['name']} {failure.get('code', '')} "
                             f"(status {response.get('status_code')}) {failure.get('message', '')}")
                    if entry not in self.failures:
                        self.failures.append(entry.replace("\n", "; ")[:400])

    def print(self) -> None:
        by_class = Counter(f"{status // 100}xx" for status in self.statuses.elements())
        print(f"operations fuzzed: {len(self.operations)}; cases: {self.cases:,}; answers: "
              + ", ".join(f"{name} {count:,}" for name, count in sorted(by_class.items())))
        server_errors = sum(count for status, count in self.statuses.items() if status >= 500)
        print(f"5xx answers: {server_errors:,} (only a platform's refusal of a send may be one)")
        print(f"{'check':<42}{'passed':>9}{'failed':>8}")
        for name in sorted(set(self.passed) | set(self.failed)):
            print(f"{name:<42}{self.passed[name]:>9,}{self.failed[name]:>8,}")
        print("failures by code: " + (", ".join(f"{code} {n}" for code, n in sorted(self.codes.items())) or "none"))
        for line in self.failures[:60]:
            print(f"  FAIL {line}")
        for line in self.errors[:20]:
            print(f"  ERROR {line}")
        print(f"failures: {sum(self.failed.values())}; fuzzer errors: {len(self.errors)}")


async def serve_receiver(*, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """A webhook receiver on 127.0.0.1 that answers every request 200 (and closes the connection)."""

    async def answer(stream: trio.SocketStream) -> None:
        data = b""
        with trio.move_on_after(5):
            while b"\r\n\r\n" not in data:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            while len(body) < length:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    return
                body += chunk
            await stream.send_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        await stream.aclose()

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    task_status.started(listeners[0].socket.getsockname()[1])
    await trio.serve_listeners(answer, listeners)


async def run(args: argparse.Namespace, server_url: str, _postgres_pid: int | None, work_dir: Path) -> int:
    (work_dir / "st.toml").write_text(CONFIG)
    tally = Tally()
    codes = []
    async with trio_asyncio.open_loop():
        async with bench_database(server_url, f"inbox_bench_fuzz_{os.getpid()}") as (url, db):
            access, phone_number_id = await seed(db)
            settings = Settings(database_url=url, port=0, ip_limit_per_minute=1_000_000,
                                shutdown_grace_seconds=2.0, simulator_status_delays=(0.01, 0.02, 0.03),
                                webhook_allowed_networks=(LOOPBACK,))
            app = await build_app(db, settings, address_guard=LoopbackOnlyGuard())
            stop = trio.Event()
            async with trio.open_nursery() as nursery:
                receiver_port = await nursery.start(serve_receiver)
                service_url = await nursery.start(partial(serve_app, app, shutdown_trigger=stop.wait))
                print(f"service: {service_url}; {args.examples} examples per operation, seed {args.seed}", flush=True)
                await open_example_chat(service_url, app.extensions["inbox"].platform.app_secret, phone_number_id)
                env = {**os.environ, "SCHEMATHESIS_HOOKS": "fuzz_contract_hooks",
                       "PYTHONPATH": os.pathsep.join([str(ROOT / "scripts"), str(ROOT)]),
                       "FUZZ_MEMBER_ID": str(access.member_id), "FUZZ_LABEL": FUZZ_LABEL,
                       "FUZZ_RECEIVER_URL": f"http://127.0.0.1:{receiver_port}/hook"}
                for number, each in enumerate(passes(access), 1):
                    started = time.monotonic()
                    report = work_dir / f"pass{number}.ndjson"
                    code = await run_schemathesis(schemathesis_command(service_url, each, args, work_dir, report),
                                                  env, work_dir, work_dir / f"pass{number}.log")
                    before = tally.cases
                    if report.exists():
                        tally.read(report)
                    print(f"pass {number}, {each.name}: {tally.cases - before:,} cases in "
                          f"{time.monotonic() - started:.1f} s (exit {code})", flush=True)
                    if code not in (0, 1) or not report.exists():
                        print((work_dir / f"pass{number}.log").read_text()[-3000:])
                    codes.append(code)
                stop.set()
                nursery.cancel_scope.cancel()
    tally.print()
    return 0 if all(code == 0 for code in codes) and not tally.failed and not tally.errors else 1


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=100, help="examples per operation (default 100)")
    parser.add_argument("--seed", type=int, default=1, help="Schemathesis' random seed (default 1)")
    parser.add_argument("--phases", default=ALL_PHASES,
                        help=f"Schemathesis' phases, comma-separated (default all: {ALL_PHASES}); the suite's quick "
                             "pass skips coverage, whose thousands of boundary cases the deep run keeps")
    # One: with several threads Schemathesis 4.32 on CPython 3.11 at times fails generating a case (SystemError
    # from the ast module), and the service, not the fuzzer, is what takes the time.
    parser.add_argument("--workers", type=int, default=1, help="Schemathesis' concurrent workers (default 1)")
    add_database_url(parser, help="a PostgreSQL server to use (its role needs CREATEDB) instead of an embedded one")
    args = parser.parse_args(argv)
    if args.examples < 1 or args.workers < 1:
        parser.error("--examples and --workers must be at least 1")
    if not args.phases or not set(args.phases.split(",")) <= set(ALL_PHASES.split(",")):
        parser.error(f"--phases is a comma-separated list of {ALL_PHASES}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_on_postgres("fuzz-contract", args.database_url, run, args, noun="script")


if __name__ == "__main__":
    sys.exit(main())
