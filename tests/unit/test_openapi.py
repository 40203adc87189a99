import json
from pathlib import Path

from inbox_http.app import create_app
from inbox_http.openapi import API_VERSION, build_document

CHECKED_IN = Path(__file__).resolve().parents[2] / "http" / "openapi.json"


def test_checked_in_document_matches_the_code():
    document = build_document(create_app(None))
    assert json.loads(CHECKED_IN.read_text()) == document, (
        "http/openapi.json is stale: run `python -m inbox_http.openapi > http/openapi.json`")


def test_document_carries_the_spec_version_and_the_whoami_shape():
    document = build_document(create_app(None))
    assert document["info"]["version"] == API_VERSION == "1.0.0"
    whoami = document["paths"]["/api/reporting/v1/whoami"]["get"]
    assert whoami["x-api-tier"] == "core"
    schema = whoami["responses"]["200"]["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/Whoami"}
    assert set(document["components"]["schemas"]["Whoami"]["required"]) == {
        "workspace_id", "auth", "key", "api_access", "api_tier", "reporting_api"}


def test_every_read_of_the_reporting_api_is_documented_with_its_query_parameters():
    document = build_document(create_app(None))
    paths = document["paths"]
    media = "/api/reporting/v1/conversations/{phone}/messages/{message_id}/media"
    assert paths[media]["get"]["x-documented"] is False  # ours: the spec has media_url, not its route
    reads = [path for path in paths if path.startswith("/api/reporting/v1/") and "get" in paths[path]
             and path != media]
    assert len(reads) == 13
    assert all(paths[path]["get"]["x-documented"] for path in reads)
    names = {path: [p["name"] for p in paths[path]["get"].get("parameters", []) if p["in"] == "query"]
             for path in reads}
    assert names["/api/reporting/v1/conversations"] == [
        "unread", "needs_reply", "state", "assigned_to", "sla_breached", "q", "label", "snoozed", "since", "to",
        "sort", "limit", "cursor"]
    assert names["/api/reporting/v1/conversations/unanswered"][0] == "older_than"
    assert names["/api/reporting/v1/conversations/{phone}/messages"] == [
        "since", "to", "order", "expand", "limit", "cursor"]
    assert names["/api/reporting/v1/replies"] == ["since", "to", "agent_id", "sender_type", "phone", "limit", "cursor"]
    contacts = paths["/api/contacts/paginated"]["get"]
    assert contacts["x-documented"] and contacts["x-error-convention"] == "sentence"
    assert [p["name"] for p in contacts["parameters"]] == ["page", "limit", "search"]


def test_the_conversation_schema_allows_null_only_where_the_spec_s_table_says_nullable():
    schemas = build_document(create_app(None))["components"]["schemas"]
    conversation = schemas["Conversation"]["properties"]
    assert conversation["handover_reason"] == {"type": "string"}
    assert conversation["last_message"] == {"$ref": "#/components/schemas/LastMessage"}
    assert schemas["LastMessage"]["properties"]["message_id"] == {"type": "string"}
    assert {"type": "null"} in conversation["assigned_to"]["anyOf"]
