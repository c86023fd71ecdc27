"""Any JSON, anywhere input enters: it is accepted, or refused with errors as data that name at
most five fields; nothing raises past the boundary, and a refusal changes nothing."""

import json
import os

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from approvals.models import Approval, Decision, Reviewer
from kindgi.cli.errors import USAGE_ERROR, CliError
from kindgi.cli.main import json_object
from runs.actions import check_start_run
from runs.engine.invocation import validate_arguments
from runs.engine.validation import INPUT_ERROR_LIMIT
from runs.exceptions import RunInputError
from runs.models import JournalEntry, Run
from runs.policy_context import engine_limits
from tenants.tokens import do_create_token
from tests.factories import default_tenant, member, principal, reviewer
from tools.registry import get_registry

from .strategies import objects_with, values

# `make fuzz` scales the number of examples up (KINDGI_FUZZ_SCALE) and explores at random;
# `make test` runs the same examples every time.
SCALE = int(os.environ.get("KINDGI_FUZZ_SCALE", "1"))
FUZZ = settings(
    max_examples=60 * SCALE,
    derandomize=SCALE == 1,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
TOOL_IDS = [
    "my-pack.lookup-order",
    "my-pack.add-order-note",
    "acme-ops.post-update",
    "probe.typed",
    "probe.read",
]


def outcome(call, refusal: type[Exception]):
    """(what ``call`` returned, None), or (None, the ``refusal`` it raised); anything else escapes."""
    try:
        return call(), None
    except refusal as error:
        return None, error


def state() -> tuple[int, ...]:
    return (
        Run.objects.count(),
        JournalEntry.objects.count(),
        Approval.objects.filter(status="pending").count(),
        Decision.objects.count(),
        Reviewer.objects.count(),
    )


@pytest.mark.parametrize("tool_id", TOOL_IDS)
def test_tool_input_is_valid_or_at_most_five_errors_as_data(tool_id):
    tool = get_registry().tool(tool_id)
    keys = [field.alias or name for name, field in tool.input_model.model_fields.items()]

    @FUZZ
    @given(arguments=objects_with(keys) | values)
    def check(arguments):
        validated, refused = validate_arguments(tool, arguments, engine_limits())
        assert (validated is None) != (refused is None)
        if refused is not None:
            assert refused["success"] is False
            assert refused["error"]["code"] == "INVALID_TOOL_INPUT"
            listed = (
                refused["error"]["message"].removeprefix("The tool input is invalid: ").split(" (and ")[0]
            )
            # Each error starts with its field's pointer, whose own slashes are escaped (~1): a
            # field named "; " cannot pass for a second error.
            assert 1 <= len(listed.split("; /")) <= INPUT_ERROR_LIMIT
            json.dumps(refused)  # data the model can be sent

    check()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("target", "keys"),
    [
        ({"flow_id": "my-pack.check-order"}, ["orderId"]),
        ({"agent_id": "acme-ops.status-agent"}, ["userMessage"]),
        ({"agent_id": "probe.toned"}, ["userMessage", "tone", "maxWords"]),
    ],
)
def test_run_input_is_accepted_or_refused_naming_fields_and_refusal_writes_nothing(target, keys):
    tenant = default_tenant()

    @FUZZ
    @given(data=objects_with(keys) | values)
    def check(data):
        before = state()
        run, refused = outcome(
            lambda: check_start_run(tenant=tenant, principal=principal(tenant), input=data, **target),
            RunInputError,
        )
        if refused is not None:
            assert 1 <= len(refused.errors) <= INPUT_ERROR_LIMIT
            assert all(line.startswith("/") for line in refused.errors)
            assert state() == before
        else:
            assert run.pk is not None
            json.dumps(run.input)

    check()


@pytest.mark.django_db(transaction=True)
def test_api_bodies_never_cause_a_server_error_and_a_refusal_writes_nothing():
    caller = reviewer("ada", role="admin")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {do_create_token(user=caller)[1]}")
    admin = APIClient()
    admin.credentials(
        HTTP_AUTHORIZATION=f"Bearer {do_create_token(user=member('bea', tenant_admin=True))[1]}"
    )
    started = api.post(
        "/api/v1/runs", {"agentId": "acme-ops.status-agent", "input": {"userMessage": "Up."}}, format="json"
    )
    approval = Approval.objects.get(run_id=started.json()["id"])
    endpoints = [
        (
            api,
            "/api/v1/runs",
            ["flowId", "agentId", "input", "dryRun", "readOnly", "version", "conversationId"],
        ),
        (api, f"/api/v1/approvals/{approval.pk}/complete", ["decision", "rationale", "arguments"]),
        (api, "/api/v1/reviewers/register", ["role", "displayName"]),
        (admin, "/api/v1/approval-rules", ["name", "toolPattern", "gate", "condition", "requiredRole"]),
    ]

    @settings(FUZZ, max_examples=40 * SCALE)
    @given(endpoint=st.sampled_from(range(len(endpoints))), data=st.data())
    def check(endpoint, data):
        client, path, keys = endpoints[endpoint]
        body = data.draw(objects_with(keys) | values)
        before = state()
        response = client.post(path, json.dumps(body), content_type="application/json")
        assert response.status_code < 500, response.content
        if response.status_code >= 400:
            assert set(response.json()) == {"error"}
            assert response.json()["error"]["message"]
            assert state() == before

    check()


@FUZZ
@given(text=st.text(max_size=200) | values.map(json.dumps))
@example(text="[" * 100_000)
@example(text='{"a": NaN}')
def test_cli_input_is_an_object_or_a_usage_error_saying_why(text):
    parsed, refused = outcome(lambda: json_object("--input")(text), CliError)
    if refused is not None:
        assert refused.exit_code == USAGE_ERROR
        assert str(refused).startswith("--input ")
        assert "\n" not in str(refused)
    else:
        assert isinstance(parsed, dict)
