import re

import pytest
from openapi_spec_validator import validate

from .test_authentication import ENDPOINTS


@pytest.mark.django_db
def test_the_schema_is_valid_openapi_3_and_documents_every_endpoint(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    validate(schema)
    assert schema["openapi"].startswith("3.")
    for method, path in ENDPOINTS:
        [documented] = [p for p in schema["paths"] if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", p), path)]
        operation = schema["paths"][documented][method]
        assert {"401", "403", "404"} <= set(operation["responses"]), path
    approval = schema["components"]["schemas"]["Approval"]["properties"]
    assert approval["subjectRef"] == {"$ref": "#/components/schemas/SubjectRef"}
    subject = schema["components"]["schemas"]["SubjectRef"]["properties"]
    assert all(subject[name]["nullable"] for name in ("flowId", "nodeId", "agentId"))
    # Request bodies are strict: the schema says so, as the API does.
    requests = {
        name: body for name, body in schema["components"]["schemas"].items() if name.endswith("Request")
    }
    assert {"StartRunRequest", "CompleteApprovalRequest", "ApprovalRuleRequest"} <= set(requests)
    shapes = [shape for body in requests.values() for shape in body.get("oneOf", [body])]
    assert all(shape["additionalProperties"] is False for shape in shapes)
    errors = schema["components"]["schemas"]["Error"]["properties"]["error"]["properties"]["details"]
    assert set(errors["properties"]) == {"errors", "fields"}


@pytest.fixture
def schema(client, db):
    return client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()


def parameter(schema, path: str, name: str) -> dict:
    [found] = [p for p in schema["paths"][path]["get"]["parameters"] if p["name"] == name]
    return found["schema"]


def test_the_schema_states_the_bounds_and_shapes_the_api_holds(schema):
    """What the API refuses, the schema forbids (schemathesis found each disagreement)."""
    assert parameter(schema, "/api/v1/runs", "limit") == {
        "type": "integer",
        "minimum": 1,
        "maximum": 200,
        "default": 50,
    }
    assert parameter(schema, "/api/v1/audit", "since") == {"type": "string", "format": "date-time"}
    components = schema["components"]["schemas"]
    escalation = components["ApprovalRuleRequest"]["properties"]["escalation"]
    assert escalation["type"] == "array"
    assert "nullable" not in escalation
    assert escalation["maxItems"] == 10
    assert components["DecisionsRequest"]["properties"]["decisions"]["minItems"] == 1
    approval, rejection = components["CompleteApprovalRequest"]["oneOf"]
    assert approval["properties"]["decision"]["enum"] == ["approve"]
    assert "rationale" not in approval["required"]
    assert rejection["properties"]["decision"]["enum"] == ["reject", "request_changes"]
    assert "rationale" in rejection["required"]
    assert rejection["properties"]["rationale"]["minLength"] == 1
    assert "arguments" not in rejection["properties"]
    # A message's content is text for people and the tool's result for a tool: any JSON value.
    assert "type" not in components["Message"]["properties"]["content"]
    rule = components["ApprovalRuleRequest"]["properties"]
    blank = {"$ref": "#/components/schemas/BlankEnum"}
    assert rule["effectKind"]["oneOf"] == [{"$ref": "#/components/schemas/EffectKindEnum"}, blank]
    assert "writes" in components["EffectKindEnum"]["enum"]
    assert rule["requiredRole"]["oneOf"] == [{"$ref": "#/components/schemas/ReviewerRoleEnum"}, blank]
    assert components["ReviewerRoleEnum"]["enum"] == ["standard", "senior", "admin"]


@pytest.mark.django_db
def test_the_docs_page_loads_its_assets_from_this_server(client):
    page = client.get("/api/docs/")
    assert page.status_code == 200
    assert "cdn" not in page.text.lower()
    assert "/static/drf_spectacular_sidecar/" in page.text


def test_a_keyed_posts_answers_say_when_they_are_given_again(schema):
    keyed = [
        (path, operation)
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if any(given.get("name") == "Idempotency-Key" for given in operation.get("parameters", []))
    ]
    assert {path for path, _ in keyed} >= {"/api/v1/runs", "/api/v1/approvals/{approval_id}/complete"}
    for path, operation in keyed:
        assert (
            "Idempotent-Replayed"
            in operation["responses"]["201" if "201" in operation["responses"] else "200"]["headers"]
        ), path
        assert "Idempotency-Key" in operation["responses"]["409"]["description"]
    assert "headers" not in schema["paths"]["/api/v1/runs"]["get"]["responses"]["200"]
