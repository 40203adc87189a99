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
