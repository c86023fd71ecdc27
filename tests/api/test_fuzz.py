"""The API fuzzed against its own OpenAPI schema (schemathesis): no server errors, and every
response, success or refusal, matches the schema. Bounded here; `make fuzz` runs it longer."""

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
    # Every check but one: a request valid by the schema may still be refused, for rules no
    # schema states (exactly one of flowId and agentId; a conversation that must exist).
    case.call_and_validate(headers=headers, excluded_checks=[positive_data_acceptance])
