import pytest

pytestmark = pytest.mark.django_db


def test_tools(api, django_assert_max_num_queries):
    with django_assert_max_num_queries(5):
        tools = api.get("/api/v1/tools").json()["items"]
    by_id = {tool["id"]: tool for tool in tools}
    lookup = by_id["my-pack.lookup-order"]
    assert (lookup["readOnly"], lookup["mutating"], lookup["effects"]) == (
        True,
        False,
        [{"kind": "reads", "resource": "external:orders"}],
    )
    assert lookup["inputSchema"]["required"] == ["orderId"]
    assert by_id["acme-ops.post-update"]["readOnly"] is False
    assert api.get("/api/v1/tools/my-pack.lookup-order").json()["version"] == "0.1.0"
    assert api.get("/api/v1/tools/my-pack.lookup-order?version=0.1.0").status_code == 200
    missing = api.get("/api/v1/tools/my-pack.lookup-order?version=9.9.9")
    assert (missing.status_code, missing.json()["error"]["message"]) == (
        404,
        'there is no tool "my-pack.lookup-order" version 9.9.9',
    )


def test_agents_show_their_overrides(api, django_assert_max_num_queries):
    from tools.models import Agent, AgentGateOverride

    AgentGateOverride.objects.create(
        agent=Agent.objects.get(key="acme-ops.status-agent"), tool_key="acme-ops.greet", gate="always_ask"
    )
    with django_assert_max_num_queries(5):
        agents = api.get("/api/v1/agents").json()["items"]
    status_agent = next(a for a in agents if a["id"] == "acme-ops.status-agent")
    assert status_agent["overrides"] == {
        "code": {"acme-ops.post-update": "always_ask"},
        "admin": {"acme-ops.greet": "always_ask"},
        "effective": {"acme-ops.post-update": "always_ask", "acme-ops.greet": "always_ask"},
    }
    assert status_agent["tools"] == [
        {"id": "acme-ops.post-update", "version": "0.1.0"},
        {"id": "acme-ops.greet", "version": "0.1.0"},
    ]
    assert status_agent["inputSchema"]["required"] == ["userMessage"]


def test_flows(api):
    flow = api.get("/api/v1/flows/my-pack.echo-flow").json()
    assert [node["id"] for node in flow["nodes"]] == ["greet", "respond"]
    assert flow["output"] == {
        "reply": {"$ref": "#/nodes/respond/output/reply"},
        "greeting": {"$ref": "#/nodes/greet/output/greeting"},
    }
    assert api.get("/api/v1/flows/nope.nope").status_code == 404
    assert len(api.get("/api/v1/flows").json()["items"]) == 4
