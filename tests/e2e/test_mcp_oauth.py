"""MCP's OAuth connection flow against the running service: the official SDK client (`OAuthClientProvider`)
discovers the flow from the endpoint's 401, registers, and sends the browser to the consent page, where Chromium
(standing in for the person) signs the demo admin in, picks two actions and approves; the SDK's session then has
exactly those two tools, and a refresh through the SDK keeps it working. Plain HTTP shows what is refused: a wrong
PKCE verifier, a code used twice, a redirect URI not registered, a refresh token used twice; Deny answers
access_denied, and a member without the settings permission is told an admin must connect it."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import time
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import pytest
import trio
from mcp.client.auth import OAuthClientProvider
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.shared.exceptions import MCPError
from playwright.sync_api import Page, expect, sync_playwright
from quart import request
from quart_trio import QuartTrio

from inbox_actors.access import accounts
from inbox_actors.access.demo_workspace import DemoAccess, seed_demo
from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.chat_helpers import customer_writes
from tests.e2e.conftest import bearer
from tests.local_http import serve_on_free_port

CHOSEN = ("list_conversations", "unread_summary")
PHONE = "919833300003"
AGENT_EMAIL = "nila@demo.example"
AGENT_PASSWORD = "nila-has-a-long-password"
PING = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


class MemoryStorage:
    """The SDK's TokenStorage, in memory: what a desktop assistant keeps on disk."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


@asynccontextmanager
async def callback_server():
    """The client's redirect URI: a local HTTP server, as desktop clients run one; yields its URL and a channel
    of the query parameters each redirect brought."""
    app = QuartTrio("oauth-callback")
    arrived, answers = trio.open_memory_channel[dict[str, str]](10)

    @app.get("/callback")
    async def callback():
        arrived.send_nowait({name: value for name, value in request.args.items()})
        return "Connected; you can close this window."

    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_on_free_port, app)
        yield f"{url}/callback", answers
        nursery.cancel_scope.cancel()


@pytest.fixture
async def demo(service) -> DemoAccess:
    """The demo workspace (Scale) and its admin's credentials, as `serve --demo` prints them."""
    return await seed_demo(service.db)


# -- in the browser -----------------------------------------------------------------------------------------


def _sign_in_to_consent(page: Page, url: str, authorization_url: str, email: str, password: str) -> None:
    """Follow the authorization URL: not signed in yet, so the sign-in form, which comes back to the consent page."""
    page.goto(authorization_url)
    expect(page).to_have_url(re.compile(re.escape(f"{url}/app/sign-in?next=/app/connect%3F")))
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(re.escape(f"{url}/app/connect?")))


def _approve(chromium: str, authorization_url: str, url: str, demo: DemoAccess, callback_url: str,
             folder: Path) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            _sign_in_to_consent(page, url, authorization_url, demo.email, demo.password)
            expect(page.locator(".client-name")).to_have_text("Test assistant")
            expect(page.get_by_text(urlsplit(callback_url).netloc)).to_be_visible()
            offered = page.get_by_role("checkbox")
            assert offered.count() == 10, "the ten read actions a workspace exposes by default"
            for box in offered.all():
                box.uncheck()
            for name in CHOSEN:  # each label shows the action's title and its name
                page.get_by_label(name).check()
            assert_accessible(page, "the consent page")
            page.screenshot(path=str(folder / "01-consent.png"), full_page=True)
            page.get_by_role("button", name="Approve").click()
            page.wait_for_url(f"{callback_url}?**")
            expect(page.locator("body")).to_contain_text("Connected")
        finally:
            browser.close()


def _deny_and_refuse_an_agent(chromium: str, url: str, demo: DemoAccess, admin_url: str, agent_url: str,
                              callback_url: str, folder: Path) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        try:
            admin = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            _sign_in_to_consent(admin, url, admin_url, demo.email, demo.password)
            admin.get_by_role("button", name="Deny").click()
            admin.wait_for_url(f"{callback_url}?**")

            # A member without the settings permission sees why, and can only send the application away.
            agent = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
            _sign_in_to_consent(agent, url, agent_url, AGENT_EMAIL, AGENT_PASSWORD)
            expect(agent.get_by_role("alert")).to_contain_text("ask an admin of your workspace to connect it")
            assert agent.get_by_role("checkbox").count() == 0
            expect(agent.get_by_role("button", name="Approve")).to_have_count(0)
            assert_accessible(agent, "the consent page, for a member who may not connect")
            agent.screenshot(path=str(folder / "02-consent-agent.png"), full_page=True)
            agent.get_by_role("button", name="Cancel and tell the application").click()
            agent.wait_for_url(f"{callback_url}?**")
        finally:
            browser.close()


# -- over plain HTTP ----------------------------------------------------------------------------------------


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


async def register(service, redirect_uri: str, **extra) -> dict:
    answer = await service.client.post("/oauth/register", json={
        "client_name": "Plain client", "redirect_uris": [redirect_uri], "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"], **extra})
    assert answer.status_code == 201, answer.text
    return answer.json()


@asynccontextmanager
async def signed_in(service, email: str, password: str):
    """A client holding a web-app session cookie, signed in through the form."""
    async with httpx.AsyncClient(base_url=service.url, timeout=10) as browser:
        answer = await browser.post("/app/sign-in", data={"email": email, "password": password,
                                                          "next": "/app/inbox"})
        assert answer.status_code == 303, answer.text
        yield browser


def authorize_params(client_id: str, redirect_uri: str, challenge: str, resource: str, state: str = "s1") -> dict:
    return {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri, "state": state,
            "code_challenge": challenge, "code_challenge_method": "S256", "resource": resource}


async def approve_over_http(browser: httpx.AsyncClient, params: dict, actions: tuple[str, ...]) -> dict[str, str]:
    """What Approve does, as a form post: the redirect's query parameters."""
    sent = await browser.get("/oauth/authorize", params=params)
    assert sent.status_code == 302, sent.text
    consent = await browser.get(sent.headers["Location"])
    assert consent.status_code == 200, consent.text
    fields = dict(re.findall(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">', consent.text))
    fields = {name: value.replace("&amp;", "&") for name, value in fields.items()}
    answer = await browser.post("/app/connect", data={**fields, "action": list(actions), "decision": "approve"})
    assert answer.status_code == 303, answer.text
    location = answer.headers["Location"]
    assert location.startswith(params["redirect_uri"] + "?"), location
    return {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}


async def token(service, **form) -> httpx.Response:
    return await service.client.post("/oauth/token", data=form)


async def tools_with(service, access_token: str) -> httpx.Response:
    return await service.client.post("/api/mcp", headers=bearer(access_token), json=PING)


# -- the tests ----------------------------------------------------------------------------------------------


async def test_the_sdk_client_connects_through_the_consent_page_and_refreshes(service, demo, chromium, artifacts):
    await customer_writes(service, demo.phone_number_id, PHONE, "Is my order on its way?", name="Kavya")
    storage = MemoryStorage()
    async with callback_server() as (callback_url, answers):
        async def open_in_browser(authorization_url: str) -> None:
            await in_browser_thread(_approve, chromium, authorization_url, service.url, demo, callback_url, artifacts)

        async def take_the_redirect() -> AuthorizationCodeResult:
            with trio.fail_after(10):
                arrived = await answers.receive()
            return AuthorizationCodeResult(code=arrived["code"], state=arrived.get("state"), iss=arrived.get("iss"))

        oauth = OAuthClientProvider(
            server_url=f"{service.url}/api/mcp",
            client_metadata=OAuthClientMetadata(client_name="Test assistant", redirect_uris=[callback_url],
                                                grant_types=["authorization_code", "refresh_token"]),
            storage=storage, redirect_handler=open_in_browser, callback_handler=take_the_redirect)
        async with httpx2.AsyncClient(auth=oauth, timeout=30) as http:
            async with streamable_http_client(f"{service.url}/api/mcp", http_client=http) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                assert {tool.name for tool in (await session.list_tools()).tools} == set(CHOSEN)
                chats = await session.call_tool("list_conversations", {})
                assert not chats.is_error, chats
                assert [chat["phone"] for chat in chats.structured_content["data"]] == [PHONE]
                with pytest.raises(MCPError):  # exposed in the workspace, not chosen for this connection
                    await session.call_tool("get_conversation", {"phone": PHONE})

            # The client registered with a secret, kept here by its hash only; nothing plaintext is stored.
            assert storage.client_info.client_secret and storage.client_info.token_endpoint_auth_method == \
                "client_secret_post"
            first = storage.tokens
            assert first.expires_in == 3600 and first.refresh_token
            stored = await service.db.fetchrow(
                "SELECT c.metadata::text AS metadata, c.client_secret_hash, t.name, t.actions, t.expires_at"
                " FROM mcp_oauth_clients c JOIN mcp_tokens t ON t.oauth_client_id = c.client_id")
            assert storage.client_info.client_secret not in stored["metadata"]
            assert stored["client_secret_hash"] == hashlib.sha256(storage.client_info.client_secret.encode()).digest()
            assert stored["name"] == "Test assistant (OAuth)" and sorted(stored["actions"]) == sorted(CHOSEN)
            for table, plaintext in (("mcp_tokens", first.access_token),
                                     ("mcp_oauth_refresh_tokens", first.refresh_token)):
                assert await service.db.fetchval(f"SELECT count(*) FROM {table} WHERE token_hash = $1",
                                                 hashlib.sha256(plaintext.encode()).digest()) == 1, table

            # An hour later, as the client's clock has it: the SDK refreshes before its next request.
            oauth.context.token_expiry_time = time.time() - 1
            async with streamable_http_client(f"{service.url}/api/mcp", http_client=http) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                assert {tool.name for tool in (await session.list_tools()).tools} == set(CHOSEN)
                summary = await session.call_tool("unread_summary", {})
                assert not summary.is_error, summary
        second = storage.tokens
        assert second.access_token != first.access_token and second.refresh_token != first.refresh_token

    # Rotation: the old access token is gone, the new one works; the old refresh token is used up, and presenting
    # it again ends the connection, the new tokens included.
    assert (await tools_with(service, first.access_token)).status_code == 401
    assert (await tools_with(service, second.access_token)).status_code == 200
    client = {"client_id": storage.client_info.client_id, "client_secret": storage.client_info.client_secret}
    reused = await token(service, grant_type="refresh_token", refresh_token=first.refresh_token, **client)
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant", reused.text
    assert (await tools_with(service, second.access_token)).status_code == 401
    after = await token(service, grant_type="refresh_token", refresh_token=second.refresh_token, **client)
    assert after.status_code == 400 and after.json()["error"] == "invalid_grant", after.text
    listed = (await service.client.get("/api/mcp/tokens", headers=bearer(demo.key))).json()["data"]
    assert [(t["name"], t["status"]) for t in listed] == [("Test assistant (OAuth)", "revoked")]


async def test_the_endpoint_points_clients_at_the_flow(service):
    refused = await service.client.post("/api/mcp", json=PING)
    assert refused.status_code == 401
    metadata_url = f"{service.url}/.well-known/oauth-protected-resource/api/mcp"
    assert refused.headers["WWW-Authenticate"] == f'Bearer resource_metadata="{metadata_url}"'
    wrong = await tools_with(service, "mcp_" + "A" * 43)
    assert wrong.headers["WWW-Authenticate"] == f'Bearer error="invalid_token", resource_metadata="{metadata_url}"'

    for path in ("/.well-known/oauth-protected-resource/api/mcp", "/.well-known/oauth-protected-resource"):
        resource = (await service.client.get(path)).json()
        assert resource["resource"] == f"{service.url}/api/mcp", path
        assert resource["authorization_servers"] == [service.url], path
    server = (await service.client.get("/.well-known/oauth-authorization-server")).json()
    assert server["issuer"] == service.url
    assert server["authorization_endpoint"] == f"{service.url}/oauth/authorize"
    assert server["token_endpoint"] == f"{service.url}/oauth/token"
    assert server["registration_endpoint"] == f"{service.url}/oauth/register"
    assert server["revocation_endpoint"] == f"{service.url}/oauth/revoke"
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert "none" in server["token_endpoint_auth_methods_supported"]


async def test_codes_are_bound_to_their_verifier_and_redirect_uri_and_work_once(service, demo):
    redirect_uri = "http://127.0.0.1:9/callback"
    resource = f"{service.url}/api/mcp"
    client = await register(service, redirect_uri)
    assert "client_secret" not in client
    verifier, challenge = pkce()
    async with signed_in(service, demo.email, demo.password) as browser:
        # A redirect URI the client did not register: refused here, never redirected to.
        elsewhere = await browser.get("/oauth/authorize", params=authorize_params(
            client["client_id"], "http://127.0.0.1:9/elsewhere", challenge, resource))
        assert elsewhere.status_code == 400 and "Location" not in elsewhere.headers
        assert elsewhere.json()["error"] == "invalid_request"
        # ...nor by writing the consent page's address by hand.
        sent = await browser.get("/oauth/authorize", params=authorize_params(client["client_id"], redirect_uri,
                                                                            challenge, resource))
        forged = sent.headers["Location"].replace("127.0.0.1%3A9%2Fcallback", "127.0.0.1%3A9%2Felsewhere")
        assert forged != sent.headers["Location"]
        assert (await browser.get(forged)).status_code == 400
        # A token for another resource is not issued (RFC 8707).
        other = await browser.get("/oauth/authorize", params=authorize_params(
            client["client_id"], redirect_uri, challenge, "https://elsewhere.example/mcp"))
        assert other.status_code == 302 and "error=invalid_target" in other.headers["Location"]

        codes = []
        for _ in range(3):
            answer = await approve_over_http(browser, authorize_params(client["client_id"], redirect_uri,
                                                                       challenge, resource), ("list_templates",))
            assert answer["state"] == "s1" and answer["iss"] == service.url
            codes.append(answer["code"])

    def exchange_of(code: str) -> dict:
        return {"grant_type": "authorization_code", "code": code, "client_id": client["client_id"],
                "redirect_uri": redirect_uri}

    # A failed exchange uses the code up: the right verifier or redirect URI after a wrong one comes too late.
    wrong = await token(service, **exchange_of(codes[0]), code_verifier=pkce()[0])
    assert wrong.status_code == 400 and wrong.json() == {"error": "invalid_grant",
                                                        "error_description": "incorrect code_verifier"}
    moved = await token(service, **{**exchange_of(codes[1]), "redirect_uri": "http://127.0.0.1:9/elsewhere"},
                        code_verifier=verifier)
    assert moved.status_code == 400 and moved.json()["error"] == "invalid_request"
    for burnt in codes[:2]:
        late = await token(service, **exchange_of(burnt), code_verifier=verifier)
        assert late.status_code == 400 and late.json()["error"] == "invalid_grant", late.text

    exchange = exchange_of(codes[2])
    issued = await token(service, **exchange, code_verifier=verifier)
    assert issued.status_code == 200, issued.text
    access = issued.json()["access_token"]
    assert issued.json()["token_type"] == "Bearer" and issued.headers["Cache-Control"] == "no-store"
    listed = await tools_with(service, access)
    assert [tool["name"] for tool in listed.json()["result"]["tools"]] == ["list_templates"]

    # The same code again is refused, and ends the connection its first use opened (RFC 6749 4.1.2).
    again = await token(service, **exchange, code_verifier=verifier)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert (await tools_with(service, access)).status_code == 401
    audit = await service.db.fetch("SELECT action, member_id, via, details::text AS details FROM team_audit"
                                   " WHERE subject LIKE 'mcp_token:%' ORDER BY id")
    assert [(row["action"], row["member_id"], row["via"]) for row in audit] == [
        ("mcp_token.created", demo.user_id, f"member:{demo.user_id}"),
        ("mcp_token.revoked", None, f"oauth_client:{client['client_id']}")]
    assert "code used twice" in audit[1]["details"]


async def connect_over_http(service, demo, client: dict, redirect_uri: str) -> dict:
    """A connection of a public client, approved through the consent form: the token answer."""
    verifier, challenge = pkce()
    async with signed_in(service, demo.email, demo.password) as browser:
        answer = await approve_over_http(browser, authorize_params(client["client_id"], redirect_uri, challenge,
                                                                   f"{service.url}/api/mcp"), ("list_templates",))
    issued = await token(service, grant_type="authorization_code", code=answer["code"], redirect_uri=redirect_uri,
                         client_id=client["client_id"], code_verifier=verifier)
    assert issued.status_code == 200, issued.text
    return issued.json()


async def test_an_expired_token_is_refused_and_revoking_ends_the_connection(service, demo):
    redirect_uri = "http://127.0.0.1:9/callback"
    client = await register(service, redirect_uri)
    first = await connect_over_http(service, demo, client, redirect_uri)
    assert (await tools_with(service, first["access_token"])).status_code == 200

    # Past its hour the access token is refused like an unknown one; the refresh token brings a new one.
    await service.db.execute("UPDATE mcp_tokens SET expires_at = now() - interval '1 second'")
    expired = await tools_with(service, first["access_token"])
    assert expired.status_code == 401 and 'error="invalid_token"' in expired.headers["WWW-Authenticate"]
    renewed = await token(service, grant_type="refresh_token", refresh_token=first["refresh_token"],
                          client_id=client["client_id"])
    assert renewed.status_code == 200, renewed.text
    assert (await tools_with(service, renewed.json()["access_token"])).status_code == 200

    # The client revokes (RFC 7009): either token ends the connection. mcp 2.3.0's revocation request declares the
    # client_secret field required even for a public client, which has none: sent empty.
    revoked = await service.client.post("/oauth/revoke", data={"token": renewed.json()["refresh_token"],
                                                               "client_id": client["client_id"], "client_secret": ""})
    assert revoked.status_code == 200, revoked.text
    assert (await tools_with(service, renewed.json()["access_token"])).status_code == 401

    # An admin revokes it as any MCP token, through the settings call: its refresh token dies with it.
    second = await connect_over_http(service, demo, client, redirect_uri)
    listed = (await service.client.get("/api/mcp/tokens", headers=bearer(demo.key))).json()["data"]
    live = [t for t in listed if t["status"] == "active"]
    assert [t["name"] for t in live] == ["Plain client (OAuth)"]
    ended = await service.client.post(f"/api/mcp/tokens/{live[0]['id']}/revoke", headers=bearer(demo.key))
    assert ended.status_code == 200, ended.text
    assert (await tools_with(service, second["access_token"])).status_code == 401
    refused = await token(service, grant_type="refresh_token", refresh_token=second["refresh_token"],
                          client_id=client["client_id"])
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant", refused.text


async def test_deny_answers_access_denied_and_a_member_without_settings_cannot_connect(service, demo, chromium,
                                                                                        artifacts):
    agent = await accounts.add_member(service.db, workspace_id=demo.workspace_id, name="Nila", role="agent",
                                      email=AGENT_EMAIL)
    await accounts.set_member_password(service.db, member_id=agent, password=AGENT_PASSWORD)
    async with callback_server() as (callback_url, answers):
        client = await register(service, callback_url)
        resource = f"{service.url}/api/mcp"
        admin_url, agent_url = (f"{service.url}/oauth/authorize?" + str(httpx.QueryParams(authorize_params(
            client["client_id"], callback_url, pkce()[1], resource, state=state))) for state in ("admin", "agent"))
        await in_browser_thread(_deny_and_refuse_an_agent, chromium, service.url, demo, admin_url, agent_url,
                                callback_url, artifacts)
        with trio.fail_after(10):
            redirects = [await answers.receive(), await answers.receive()]
    assert redirects == [{"error": "access_denied", "state": state, "iss": service.url} for state in ("admin", "agent")]
    assert await service.db.fetchval("SELECT count(*) FROM mcp_oauth_codes") == 0


async def test_the_unauthenticated_endpoints_count_against_the_per_ip_ceiling(service):
    state = service.app.extensions["inbox"]
    limit = state.settings.ip_limit_per_minute
    for _ in range(limit):  # in the address's bucket, on whichever node owns it
        await state.addresses.admit("127.0.0.1", limit)
    for path in ("/oauth/register", "/oauth/token"):
        refused = await service.client.post(path, data={})
        assert refused.status_code == 429, path
        assert int(refused.headers["Retry-After"]) >= 1 and "Too many requests" in refused.json()["error"]
