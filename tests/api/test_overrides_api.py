"""Tenant admins set and clear an agent's gate overrides through the API, for their tenant only,
validated as the admin validates them; they never lower what the tenant's rules ask or deny."""

import pytest

from approvals.actions.rules import check_save_rule
from runs.actions import check_start_run
from runs.models import RunStatus
from tests.api.conftest import client_for
from tests.factories import default_tenant, member, other_tenant, principal
from tools.models import AgentGateOverride

pytestmark = pytest.mark.django_db(transaction=True)
URL = "/api/v1/agents/acme-ops.status-agent/overrides"


@pytest.fixture
def admin_api(db):
    return client_for(member("tina", tenant_admin=True))


def status_run(tenant):
    return check_start_run(
        tenant=tenant,
        principal=principal(tenant),
        agent_id="acme-ops.status-agent",
        input={"userMessage": "Up."},
    )


def test_a_tenant_admin_sets_an_override_for_their_tenant_only(admin_api):
    response = admin_api.put(f"{URL}/acme-ops.post-update", {"gate": "never_ask"}, format="json")
    assert response.status_code == 200, response.content
    [item] = response.json()["items"]
    assert (item["toolId"], item["gate"], item["scope"], item["changedBy"]) == (
        "acme-ops.post-update",
        "never_ask",
        "tenant",
        "tina",
    )
    assert status_run(default_tenant()).status == RunStatus.COMPLETED  # no longer asks here
    assert status_run(other_tenant()).status == RunStatus.SUSPENDED  # other tenants: as the code says
    assert client_for(member("gus", tenant=other_tenant())).get(URL).json()["items"] == []
    agent = admin_api.get("/api/v1/agents/acme-ops.status-agent").json()
    assert agent["overrides"]["admin"] == {"acme-ops.post-update": "never_ask"}


def test_it_never_lowers_the_tenants_rules(admin_api):
    admin_api.put(f"{URL}/acme-ops.post-update", {"gate": "never_ask"}, format="json")
    check_save_rule(
        tenant=default_tenant(),
        fields={"name": "ask", "tool_pattern": "acme-ops.*", "gate": "always_ask"},
        acting_user=None,
        surface="system",
    )
    assert status_run(default_tenant()).status == RunStatus.SUSPENDED


def test_it_is_validated_as_the_admin_validates_it(admin_api):
    unknown = admin_api.put(f"{URL}/acme-ops.nope", {"gate": "always_ask"}, format="json")
    assert unknown.status_code == 400
    assert "acme-ops.nope" in unknown.json()["error"]["details"]["fields"]["toolId"]
    condition = admin_api.put(
        f"{URL}/acme-ops.post-update", {"gate": "always_ask", "condition": "amount > 1"}, format="json"
    )
    assert "is not a condition" in condition.json()["error"]["details"]["fields"]["condition"]
    gate = admin_api.put(f"{URL}/acme-ops.post-update", {"gate": "sometimes"}, format="json")
    assert list(gate.json()["error"]["details"]["fields"]) == ["gate"]
    assert not AgentGateOverride.objects.exists()


def test_only_tenant_admins_write_and_clearing_restores_the_code(admin_api, api):
    assert api.put(f"{URL}/acme-ops.post-update", {"gate": "never_ask"}, format="json").status_code == 403
    admin_api.put(
        f"{URL}/acme-ops.post-update", {"gate": "never_ask", "condition": '/message == "Up."'}, format="json"
    )
    assert api.get(URL).json()["items"][0]["condition"] == '/message == "Up."'
    assert admin_api.delete(f"{URL}/acme-ops.post-update").status_code == 200
    assert status_run(default_tenant()).status == RunStatus.SUSPENDED
    gone = admin_api.delete(f"{URL}/acme-ops.post-update")
    assert gone.status_code == 404
    assert admin_api.get("/api/v1/agents/acme-ops.nope/overrides").status_code == 404
