from pathlib import Path

import pytest

from inbox_http.guard import bearer_token
from inbox_http.settings import Settings, SettingsError


@pytest.mark.parametrize("header, token", [
    (None, None),
    ("", None),
    ("Bearer", None),
    ("Bearer   ", None),
    ("Basic dXNlcjpwYXNz", None),
    ("Bearer abc", "abc"),
    ("bearer abc", "abc"),
    ("  Bearer   abc  ", "abc"),
    ("Bearer a b", "a b"),  # not a key shape; the lookup refuses it
])
def test_bearer_token(header, token):
    assert bearer_token(header) == token


def test_settings_defaults():
    settings = Settings.from_environment({})
    assert settings.database_url is None
    assert settings.data_dir == Path(".inbox")
    assert (settings.host, settings.port) == ("127.0.0.1", 8080)


def test_settings_from_environment():
    settings = Settings.from_environment({
        "DATABASE_URL": "postgresql://x@h/db", "INBOX_DATA_DIR": "/var/lib/inbox", "INBOX_PORT": "9000",
        "INBOX_HEALTH_TOKEN": "t", "INBOX_ACTOR_IDLE_SECONDS": "30", "INBOX_LOG_LEVEL": "debug",
    })
    assert settings.database_url == "postgresql://x@h/db"
    assert settings.port == 9000
    assert settings.health_token == "t"
    assert settings.actor_idle_seconds == 30.0
    assert settings.log_level == "DEBUG"


@pytest.mark.parametrize("env", [{"INBOX_PORT": "eighty"}, {"INBOX_PORT": "70000"}, {"INBOX_ACTOR_IDLE_SECONDS": "-1"}])
def test_settings_refuse_bad_values(env):
    with pytest.raises(SettingsError):
        Settings.from_environment(env)


@pytest.mark.parametrize("ip, bucket", [
    ("203.0.113.7", "203.0.113.7"),
    ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
    ("2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"),
    ("::ffff:203.0.113.7", "203.0.113.7"),
    ("unknown", "unknown"),
])
def test_ipv6_clients_share_a_bucket_per_64(ip, bucket):
    from inbox_http.guard import rate_bucket_address

    assert rate_bucket_address(ip) == bucket


def test_whatsapp_settings_default_to_the_simulator():
    settings = Settings.from_environment({})
    assert settings.uses_simulator and settings.simulator_status_delays == (0.05, 0.2, 0.5)
    assert settings.simulator_throughput == 80


def test_a_real_platform_needs_all_three_secrets():
    env = {"WHATSAPP_API_URL": "https://graph.facebook.com/v21.0/", "WHATSAPP_ACCESS_TOKEN": "t",
           "WHATSAPP_APP_SECRET": "s", "WHATSAPP_VERIFY_TOKEN": "v"}
    settings = Settings.from_environment(env)
    assert not settings.uses_simulator and settings.whatsapp_api_url == "https://graph.facebook.com/v21.0"
    with pytest.raises(SettingsError, match="WHATSAPP_APP_SECRET"):
        Settings.from_environment({**env, "WHATSAPP_APP_SECRET": ""})
    with pytest.raises(SettingsError, match="http"):
        Settings.from_environment({**env, "WHATSAPP_API_URL": "graph.facebook.com"})


@pytest.mark.parametrize("delays", ["1,2", "a,b,c", "-1,0,0"])
def test_simulator_delays_must_be_three_seconds_values(delays):
    with pytest.raises(SettingsError, match="INBOX_SIMULATOR_STATUS_DELAYS"):
        Settings.from_environment({"INBOX_SIMULATOR_STATUS_DELAYS": delays})
