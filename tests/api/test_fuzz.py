"""The API fuzzed against its own OpenAPI schema (schemathesis), every operation with every check:
no server errors; every response, success or refusal, as the schema says; data the schema calls
invalid refused; data it calls valid accepted, but for the rules no schema can state, listed
below. Bounded here (a fixed set of cases, in this process: nothing leaves the machine); `make
fuzz` runs it longer."""

import json
import os

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from tenants.tokens import do_create_token
from tests.factories import member, reviewer

# `make fuzz` scales the number of examples up (KINDGI_FUZZ_SCALE) and explores at random;
# `make test` runs the same examples every time, so that CI's verdict does not hang on luck.
SCALE = int(os.environ.get("KINDGI_FUZZ_SCALE", "1"))
EXAMPLES = 12 * SCALE

schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", get_wsgi_application())


@pytest.fixture
def in_process():
    """Serve through WSGI in this process without closing the test's database connection after
    each request (what Django's own test client does too)."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


@pytest.fixture
def headers(db, in_process):
    """A token of a reviewer who is also the tenant admin: every endpoint is open to it."""
    ada = reviewer("ada", role="admin")
    ada.membership.is_tenant_admin = True
    ada.membership.save()
    member("carl")
    return {"Authorization": f"Bearer {do_create_token(user=ada)[1]}"}


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=SCALE == 1,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
def test_the_api_answers_as_its_schema_says(case, headers):
    # Every check schemathesis has; positive data acceptance narrowed to the rules below.
    case.call_and_validate(
        headers=headers,
        excluded_checks=[positive_data_acceptance],
        additional_checks=[valid_data_is_refused_only_for_rules_beyond_the_schema],
    )


# Where a request the schema calls valid may still be refused: rules no OpenAPI schema can
# state, by operation and the fields they hold (each refusal names its field). Everything else
# a schema-valid request holds must be accepted (or be 401, 403, 404, 409: schemathesis's own).
BEYOND_THE_SCHEMA = {
    # Exactly one of flowId and agentId; the flow's own input schema; a conversation of this agent.
    "POST /api/v1/runs": {"flowId", "agentId", "input", "conversationId", "connections", "version"},
    # Exactly one of agentId and flowId; a real cron line; an owner who is a person of the tenant;
    # the flow's input schema.
    "POST /api/v1/schedules": {"agentId", "flowId", "cron", "owner", "input", "name"},
    "PATCH /api/v1/schedules/{schedule_id}": {"agentId", "flowId", "cron", "owner", "input", "name"},
    # An address that is an email address and no other mailbox's; an owner of the tenant; exactly
    # one of agentId and flowId.
    "POST /api/v1/mailboxes": {"address", "owner", "agentId", "flowId"},
    "PATCH /api/v1/mailboxes/{mailbox_id}": {"address", "owner", "agentId", "flowId"},
    # Steps later each and expire last, usernames of the tenant's; a condition in its language
    # (kindgi.conditions); reviewers of the tenant; a budget's sumOf and maxSum together, and no
    # budget on a deny rule.
    "POST /api/v1/approval-rules": {"escalation", "condition", "reviewers", "budget"},
    "PUT /api/v1/approval-rules/{rule_id}": {"escalation", "condition", "reviewers", "budget"},
    "PATCH /api/v1/approval-rules/{rule_id}": {"escalation", "condition", "reviewers", "budget"},
    # since before until.
    "GET /api/v1/audit": {"until"},
    # Only an approval allows calls like it, and only of a call one person may approve; what it
    # says of the grant is held as a grant's own fields are.
    "POST /api/v1/approvals/{approval_id}/complete": {"allow"},
    # Exactly one of expiresAt and forSeconds, in the future and within KINDGI_GRANT_MAX_SECONDS;
    # a principal of the tenant with that scope, an agent with the other; sumOf a JSON pointer,
    # with maxSum; maxCalls or a sum; a condition in its language.
    "POST /api/v1/grants": {
        "expiresAt",
        "forSeconds",
        "principal",
        "agentId",
        "sumOf",
        "maxSum",
        "maxCalls",
        "condition",
    },
}


def valid_data_is_refused_only_for_rules_beyond_the_schema(ctx, response, case):
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return None
    if response.status_code != 400:
        return positive_data_acceptance(ctx, response, case)
    error = response.json()["error"]
    if error["code"] == "malformed_request" and "NUL" in error["message"]:
        # The 400 in the schema says so: a NUL anywhere in a JSON body cannot be stored.
        assert "\\u0000" in json.dumps(case.body), error
        return None
    if "cursor" in error["details"].get("fields", {}):
        # A cursor is one the API gave out (nextCursor), which no schema can generate; any other
        # string is refused, and tests/api/test_bad_requests.py holds that.
        return None
    refused = {pointer.split("/")[0] for pointer in error["details"].get("fields", {})}
    beyond = BEYOND_THE_SCHEMA.get(case.operation.label, set())
    assert refused, error
    assert refused <= beyond, (
        f"{case.operation.label} refused valid data for {sorted(refused - beyond)}: {error['message']}"
    )
    return None
