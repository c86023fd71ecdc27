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
    assert all(body["additionalProperties"] is False for body in requests.values())
    errors = schema["components"]["schemas"]["Error"]["properties"]["error"]["properties"]["details"]
    assert set(errors["properties"]) == {"errors", "fields"}


@pytest.mark.django_db
def test_the_docs_page_loads_its_assets_from_this_server(client):
    page = client.get("/api/docs/")
    assert page.status_code == 200
    assert "cdn" not in page.text.lower()
    assert "/static/drf_spectacular_sidecar/" in page.text
