import pytest
from django.urls import reverse

from tools.loading import do_load_catalog
from tools.models import Agent, AgentGateOverride, Flow, Tool

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("model", [Tool, Agent, Flow])
def test_list_and_detail_pages_load(admin_client, model, django_assert_max_num_queries):
    name = model._meta.model_name
    with django_assert_max_num_queries(10):
        listing = admin_client.get(reverse(f"admin:tools_{name}_changelist"))
    assert listing.status_code == 200
    for row in model.objects.all():
        detail = admin_client.get(reverse(f"admin:tools_{name}_change", args=[row.pk]))
        assert detail.status_code == 200
        assert row.key in detail.text


def test_tools_show_effects_plainly_and_the_read_only_flag(admin_client):
    listing = admin_client.get(reverse("admin:tools_tool_changelist"))
    assert "reads external:orders" in listing.text
    assert "external-side-effect external:status-page" in listing.text
    lookup = Tool.objects.get(key="my-pack.lookup-order")
    detail = admin_client.get(reverse("admin:tools_tool_change", args=[lookup.pk]))
    assert "reads external:orders" in detail.text
    assert "Read-only" in detail.text
    assert "&quot;orderId&quot;" in detail.text  # the input schema, escaped


@pytest.mark.parametrize("model", [Tool, Agent, Flow])
def test_definitions_cannot_be_added_or_deleted_in_the_admin(admin_client, model):
    name = model._meta.model_name
    row = model.objects.first()
    assert admin_client.get(reverse(f"admin:tools_{name}_add")).status_code == 403
    assert admin_client.get(reverse(f"admin:tools_{name}_delete", args=[row.pk])).status_code == 403


def test_a_tool_cannot_be_edited(admin_client):
    lookup = Tool.objects.get(key="my-pack.lookup-order")
    response = admin_client.post(reverse("admin:tools_tool_change", args=[lookup.pk]), {"mutating": "on"})
    assert response.status_code == 403
    lookup.refresh_from_db()
    assert lookup.mutating is False


def override_form(agent: Agent, tool_key: str, gate: str) -> dict[str, str]:
    return {
        "admin_overrides-TOTAL_FORMS": "1",
        "admin_overrides-INITIAL_FORMS": "0",
        "admin_overrides-MIN_NUM_FORMS": "0",
        "admin_overrides-MAX_NUM_FORMS": "1000",
        "admin_overrides-0-id": "",
        "admin_overrides-0-agent": str(agent.pk),
        "admin_overrides-0-tool_key": tool_key,
        "admin_overrides-0-gate": gate,
        "_save": "Save",
    }


def test_an_admin_override_beats_the_code_and_survives_a_reload(admin_client, admin_user):
    agent = Agent.objects.get(key="acme-ops.status-agent")
    url = reverse("admin:tools_agent_change", args=[agent.pk])
    assert "acme-ops.post-update" in admin_client.get(url).text

    response = admin_client.post(url, override_form(agent, "acme-ops.post-update", "never_ask"))
    assert response.status_code == 302

    override = AgentGateOverride.objects.get(agent=agent)
    assert (override.tool_key, override.gate, override.changed_by) == (
        "acme-ops.post-update",
        "never_ask",
        admin_user,
    )
    do_load_catalog()
    agent.refresh_from_db()
    assert agent.code_overrides == {"acme-ops.post-update": "always_ask"}
    assert agent.effective_overrides() == {"acme-ops.post-update": "never_ask"}
    assert "acme-ops.post-update: never_ask" in admin_client.get(url).text


def test_an_override_for_a_tool_the_agent_lacks_is_refused(admin_client):
    agent = Agent.objects.get(key="acme-ops.status-agent")
    url = reverse("admin:tools_agent_change", args=[agent.pk])
    response = admin_client.post(url, override_form(agent, "my-pack.add-order-note", "never_ask"))
    assert response.status_code == 200
    assert "Select a valid choice" in response.text
    assert not AgentGateOverride.objects.exists()


def test_an_override_value_other_than_the_two_gates_is_refused(admin_client):
    agent = Agent.objects.get(key="acme-ops.status-agent")
    url = reverse("admin:tools_agent_change", args=[agent.pk])
    response = admin_client.post(url, override_form(agent, "acme-ops.post-update", "ask_once"))
    assert response.status_code == 200
    assert "Select a valid choice" in response.text
    assert not AgentGateOverride.objects.exists()


def test_the_agents_own_fields_stay_read_only(admin_client):
    agent = Agent.objects.get(key="acme-ops.status-agent")
    url = reverse("admin:tools_agent_change", args=[agent.pk])
    data = override_form(agent, "acme-ops.post-update", "never_ask") | {"instructions": "Post anything."}
    admin_client.post(url, data)
    agent.refresh_from_db()
    assert agent.instructions == "Post the update the user gives you with acme-ops.post-update."


def test_the_model_refuses_an_override_for_a_foreign_tool():
    from django.core.exceptions import ValidationError

    agent = Agent.objects.get(key="acme-ops.status-agent")
    with pytest.raises(ValidationError, match=r"has no tool 'my-pack\.greet'"):
        AgentGateOverride(agent=agent, tool_key="my-pack.greet", gate="never_ask").full_clean()


def test_retired_definitions_can_be_filtered_out(admin_client):
    Tool.objects.filter(key="my-pack.greet").update(retired_at="2026-01-01T00:00:00Z")
    url = reverse("admin:tools_tool_changelist")
    in_service = admin_client.get(url, {"in_service": "yes"})
    retired = admin_client.get(url, {"in_service": "no"})
    assert "my-pack.greet" not in in_service.text
    assert "my-pack.lookup-order" in in_service.text
    assert "my-pack.greet" in retired.text
    assert "my-pack.lookup-order" not in retired.text
