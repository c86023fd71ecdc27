"""Bad input never gives a 500, and every error is the promised JSON, worded for a person."""

import base64

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def error_of(response, status):
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    return response.json()["error"]


def cursor(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    "value",
    ["garbage", cursor("p=2026"), cursor("p=not-a-time&o=1"), cursor("o=-1"), "%%%"],
    ids=["not base64", "a year for a position", "no time", "negative offset", "not even ascii"],
)
@pytest.mark.parametrize("path", ["/api/v1/runs", "/api/v1/approvals", "/api/v1/reviewers"])
def test_a_cursor_the_api_did_not_give_out_is_a_400(api, path, value):
    error = error_of(api.get(path, {"cursor": value}), 400)
    assert error["code"] == "invalid_input"
    assert error["details"]["fields"] == {
        "cursor": "not a cursor this API gave out: pass nextCursor as it came, or leave cursor out"
    }


def test_a_cursor_the_api_gave_out_still_works(api):
    for _ in range(3):
        api.post(
            "/api/v1/runs",
            {"flowId": "my-pack.check-order", "input": {"orderId": "ord_1001"}, "dryRun": True},
            format="json",
        )
    first = api.get("/api/v1/runs", {"limit": 2}).json()
    second = api.get("/api/v1/runs", {"limit": 2, "cursor": first["nextCursor"]}).json()
    assert len(first["items"]) == 2
    assert len(second["items"]) == 1


def test_ids_in_any_case_name_the_same_thing(api):
    run = api.post(
        "/api/v1/runs",
        {"flowId": "my-pack.check-order", "input": {"orderId": "ord_1001"}, "dryRun": True},
        format="json",
    ).json()
    upper = run["id"].upper()
    assert api.get(f"/api/v1/runs/{upper}").json()["id"] == run["id"]
    assert api.get(f"/api/v1/runs/{upper}/journal").status_code == 200


def test_every_not_found_says_what_is_not_there(api):
    missing = "00000000-0000-4000-8000-000000000000"
    assert error_of(api.get(f"/api/v1/runs/{missing}"), 404) == {
        "code": "not_found",
        "message": f"there is no run {missing}",
        "details": {},
    }
    assert (
        error_of(api.get(f"/api/v1/approvals/{missing}"), 404)["message"] == f"there is no approval {missing}"
    )
    assert (
        error_of(api.post(f"/api/v1/runs/{missing}/cancel"), 404)["message"] == f"there is no run {missing}"
    )
    assert (
        error_of(api.get("/api/v1/nothing-here"), 404)["message"]
        == "there is no API endpoint /api/v1/nothing-here"
    )


MISSING = "00000000-0000-4000-8000-000000000000"


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/runs/a%0Ab",
        "/api/v1/%0A",
        "/api/v1/runs%0A",
        f"/api/v1/runs/{MISSING}%0A",
        f"/api/v1/runs/{MISSING}/journal%0A",
        f"/api/v1/approvals/{MISSING}%0A/complete",
        "/api/v1/approval-rules/1%0A",
        f"/api/v1/mailboxes/{MISSING}%0A/messages",
        "/api/v1/agents/a/overrides/b/%0A",
        "/api/v1/runs/a%0D%0Abc",  # a NUL is refused before any view (tests/core/test_scrubbing.py)
    ],
)
@pytest.mark.parametrize("method", ["get", "post", "delete"])
def test_a_path_with_a_newline_that_names_nothing_is_the_json_404(api, path, method):
    response = getattr(api, method)(path)
    error = error_of(response, 404)
    assert error["code"] == "not_found"
    assert error["message"].startswith("there is no API endpoint /api/v1/")


@pytest.mark.parametrize("body", [[1, 2], "text", 3])
def test_a_body_that_is_not_an_object_is_an_error_about_the_body_with_no_field_named(api, body):
    error = error_of(api.post("/api/v1/runs", body, format="json"), 400)
    assert error["message"].startswith("/: must be a JSON object, not ")
    assert "non_field_errors" not in str(error)
    assert error["details"] == {}


def test_the_schema_declares_405_everywhere_and_413_and_415_where_a_body_is_sent(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            responses = set(operation["responses"])
            assert "405" in responses, (method, path)
            assert ({"413", "415"} <= responses) == ("requestBody" in operation), (method, path)


def test_more_query_parameters_than_django_reads_is_a_json_400(api, settings):
    query = "&".join(f"x{number}=1" for number in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1))
    error = error_of(api.get(f"/api/v1/runs?{query}"), 400)
    assert error["code"] == "malformed_request"
    assert "query parameters" in error["message"]


@pytest.mark.parametrize("path", ["/api/", "/api/v1", "/api/v2/runs", "/api/schema/x"])
def test_a_path_under_api_that_names_nothing_is_the_json_404(api, path):
    assert error_of(api.get(path), 404)["code"] == "not_found"


def test_a_form_post_to_the_api_is_the_json_415_even_with_a_provider_key_configured(api, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-" + "Ab3dEf7hIj" * 4)
    response = api.generic("POST", "/api/v1/runs", b"--x\r\n", content_type="multipart/form-data; boundary=x")
    assert error_of(response, 415)["code"] == "unsupported_media_type"
