"""scripts/load_chats.py, driven against the in-process service: a handful of customers, every count checked, with the
keyword FAQ bot and with the AI agent asking the model simulator; and run as a user runs it against `serve --nodes 2`
with two workspaces."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from inbox_actors.access import accounts
from inbox_actors.access.demo_workspace import seed_demo_knowledge
from tests import builders
from tests.e2e.conftest import with_settings
from tests.e2e.test_bench_reporting_script import ONE_BENCH_DATABASE_AT_A_TIME, bench_databases
from tests.e2e.test_webhook_scripts import run_script

_SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
_spec = importlib.util.spec_from_file_location("load_chats", _SCRIPTS / "load_chats.py")
load_chats = sys.modules.setdefault("load_chats", importlib.util.module_from_spec(_spec))
# As `python scripts/load_chats.py` runs it: scripts/ first on the path, where its `harness` package is; only while
# it loads, so that nothing else in the session imports from scripts/.
sys.path.insert(0, str(_SCRIPTS))
try:
    _spec.loader.exec_module(load_chats)
    from harness.simulator import SeparateSimulator
finally:
    sys.path.remove(str(_SCRIPTS))


async def _demo_like_workspace(db) -> tuple[str, str]:
    """(phone_number_id, full-access key) of a Scale workspace knowing what the demo's bot knows."""
    created = await accounts.create_workspace(db, name="Load workspace", plan="scale")
    await seed_demo_knowledge(db, created.workspace_id)
    admin = await builders.member(db, created.workspace_id, "admin")
    issued = await builders.key(db, created.workspace_id, admin)
    return created.phone_number_id, issued.key


async def test_five_customers_chat_and_every_count_adds_up(service):
    number, key = await _demo_like_workspace(service.db)
    target = load_chats.Target(simulator_url=service.simulator_url, phone_number_id=number,
                               service_url=service.url, key=key)
    options = load_chats.LoadOptions(customers=5, messages_per_customer=3, start_phone="15550001",
                                     poll_interval=0.02, bot_timeout=10.0, responder="faq")

    report = await load_chats.run_load(target, options)

    assert dict(report.errors) == {}, report.mismatches
    assert (report.messages_sent, report.messages_delivered) == (15, 15)
    assert (report.bot_questions, report.bot_answers, report.handoffs) == (10, 10, 5)
    assert report.stray_answers == 0          # the bot stayed quiet after each hand-off
    assert report.chats_verified == 5         # state HANDOFF_PENDING, counts 5 / 3 / 2 in every chat
    assert report.exactness["exactly_once"] == 15 and report.exactness["lost"] == 0
    assert (len(report.webhook), len(report.bot_seen), len(report.bot_sent)) == (15, 10, 10)
    summary = report.summary()
    assert summary["webhook_latency_ms"]["count"] == 15 and summary["messages_per_second"] > 0
    assert summary["simulator"]["customer_messages_delivered"] == 15
    assert summary["simulator"]["sends_accepted"] == 10


async def test_a_chat_already_handed_off_shows_as_unanswered_questions(service):
    number, key = await _demo_like_workspace(service.db)
    target = load_chats.Target(simulator_url=service.simulator_url, phone_number_id=number)
    first = load_chats.LoadOptions(customers=1, messages_per_customer=2, start_phone="15550101",
                                   poll_interval=0.02, verify=0, responder="faq")
    assert not (await load_chats.run_load(target, first)).errors

    again = load_chats.LoadOptions(customers=1, messages_per_customer=1, start_phone="15550101",
                                   poll_interval=0.02, bot_timeout=0.5, verify=0, responder="faq")
    report = await load_chats.run_load(target, again)   # same number: its chat waits for a person

    assert dict(report.errors) == {"bot_no_answer": 1}
    assert (report.messages_delivered, report.bot_answers) == (1, 0)


class TestWithTheAgent:
    @pytest.fixture
    def service_settings(self, service_settings):
        # The built-in model simulator (the service's default), each call a little slow, as a model's are.
        return with_settings(service_settings, model_url=None, model_simulator_latency=0.05)

    async def test_every_question_gets_the_demos_exact_answer_and_the_models_usage_is_reported(self, service):
        number, key = await _demo_like_workspace(service.db)
        target = load_chats.Target(simulator_url=service.simulator_url, phone_number_id=number,
                                   service_url=service.url, key=key)
        options = load_chats.LoadOptions(customers=3, messages_per_customer=4, start_phone="15550201",
                                         poll_interval=0.02, bot_timeout=10.0)

        report = await load_chats.run_load(target, options)

        assert dict(report.errors) == {}, report.mismatches
        # Each customer asks the price, the hours and the refund time (in its own order), then hands over.
        assert (report.bot_questions, report.bot_answers, report.handoffs) == (9, 9, 3)
        summary = json.loads(json.dumps(report.summary()))   # what the JSON line holds
        # A price question is two calls (quote_price, then the answer), any other question or hand-off one.
        usage = summary["usage"]
        assert (usage["calls"], usage["replies"], usage["failures"]) == (15, 9, 0)
        assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0 and usage["cost_usd"] > 0
        assert usage["average_latency_ms"] >= 50
        exact = summary["exactness"]
        assert (exact["exactly_once"], exact["messages"], exact["duplicate_answers"], exact["lost"]) == (12, 12, 0, 0)
        assert exact["handover_reasons"] == {"bot_handed_off": 3}


def test_customer_numbers_skip_those_ending_in_0_and_refuse_the_simulators_special_prefixes():
    assert load_chats.customer_phones("15550008", 3) == ["15550008", "15550009", "15550011"]
    for start, count in (("9981234567", 1), ("9969999999", 2), ("99999999", 1), ("123", 1), ("99999998", 5)):
        with pytest.raises(ValueError):
            load_chats.customer_phones(start, count)


def test_percentiles_are_nearest_rank_in_milliseconds():
    figures = load_chats.percentiles([i / 1000 for i in range(1, 101)])
    assert (figures["p50"], figures["p90"], figures["p99"], figures["max"]) == (50.0, 90.0, 99.0, 100.0)
    assert load_chats.percentiles([])["count"] == 0


def test_bad_arguments_exit_2():
    with pytest.raises(SystemExit) as exited:
        load_chats.main(["--customers", "0", "--spawn"])
    assert exited.value.code == 2
    with pytest.raises(SystemExit) as exited:
        load_chats.main(["--customers", "3"])    # nowhere to send
    assert exited.value.code == 2


def test_separate_simulator_goes_with_spawn():
    args, target, _ = load_chats.parse_args(["--spawn", "--separate-simulator"])
    assert args.separate_simulator and target is None
    with pytest.raises(SystemExit) as exited:
        load_chats.main(["--separate-simulator", "--simulator", "http://127.0.0.1:1", "--phone-number-id", "1"])
    assert exited.value.code == 2


def test_the_separate_simulator_and_the_service_are_given_the_same_secrets_and_each_others_ports():
    platform = SeparateSimulator.on_free_ports()
    command = platform.command()
    option = dict(zip(command[command.index("simulator") + 1::2], command[command.index("simulator") + 2::2]))
    env = platform.service_env()

    assert platform.port != platform.service_port
    assert option["--port"] == str(platform.port) and env["WHATSAPP_API_URL"] == f"http://127.0.0.1:{platform.port}"
    assert option["--webhook-url"] == f"http://127.0.0.1:{platform.service_port}/webhooks/whatsapp"
    assert (option["--app-secret"], option["--access-token"]) == (env["WHATSAPP_APP_SECRET"],
                                                                   env["WHATSAPP_ACCESS_TOKEN"])
    assert env["WHATSAPP_VERIFY_TOKEN"]


@pytest.mark.deep
@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_two_nodes_serve_two_workspaces_and_every_process_started_is_measured(postgres_server):
    before = bench_databases(postgres_server.admin_url)
    done = run_script("load_chats.py", "--spawn", "--nodes", "2", "--workspaces", "2", "--separate-simulator",
                      "--customers", "4", "--messages-per-customer", "3", "--poll-interval", "0.02",
                      "--database-url", postgres_server.admin_url)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads(done.stdout.splitlines()[-1])
    assert (summary["nodes"], summary["workspaces"], summary["errors"]) == (2, 2, {})
    assert (summary["messages_delivered"], summary["bot_answers"], summary["handoffs"]) == (12, 8, 4)
    assert summary["simulator"]["sends_accepted"] == 8 and summary["stray_answers"] == 0
    assert summary["chats_verified"] == 4          # each chat read back with its own workspace's key
    # The AI agent answered, asking the model the simulator's process plays beside it.
    assert summary["responder"] == "agent" and summary["usage"]["replies"] == 8
    assert len(summary["workspaces_held"]) == 2 and sum(summary["workspaces_held"]) == 2
    assert 0 <= summary["requests_relayed"] <= summary["requests_answered"]
    # Every process started, the parent and each node apart; PostgreSQL is --database-url's, not measured.
    assert set(summary["process_cpu_seconds"]) == {"serve", "node-1", "node-2", "simulator"}
    assert summary["cpu_ms_per_message"]["service"] > 0 and "postgres" not in summary["cpu_ms_per_message"]
    assert bench_databases(postgres_server.admin_url) == before
