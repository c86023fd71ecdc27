from dataclasses import replace
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings
from django.utils import timezone
from pydantic import BaseModel

from kindgi import Effect, build_registry, define_agent, define_flow, define_pack, from_input, tool, tool_step
from tools.loading import do_load_catalog
from tools.models import Agent, AgentGateOverride, Flow, Tool

pytestmark = pytest.mark.django_db


class Text(BaseModel):
    text: str


@tool(id="shop.read", version="1.0.0", mutating=False, effects=[Effect.reads("shop:stock")])
def read_stock(query: Text) -> Text:
    """Reads the stock."""
    return query


@tool(id="shop.write", version="1.0.0", effects=[Effect.writes("shop:stock")])
def write_stock(change: Text) -> Text:
    """Writes the stock."""
    return change


clerk = define_agent(
    id="shop.clerk",
    version="1.0.0",
    name="Clerk",
    instructions="Keep the stock right.",
    tools=[read_stock, write_stock],
    conversation_policy={"hitl": {"tools": {"overrides": {"shop.write": "always_ask"}}}},
)

restock = define_flow(
    id="shop.restock",
    version="1.0.0",
    input=Text,
    nodes=[tool_step("write", write_stock, input={"text": from_input("text")})],
    output={},
)


def shop(tools=(read_stock, write_stock), agents=(clerk,), flows=(restock,)):
    return build_registry([define_pack(name="shop", tools=tools, agents=agents, flows=flows)])


def test_migrate_loaded_the_sample_packs():
    lookup = Tool.objects.get(key="my-pack.lookup-order", version="0.1.0")
    assert lookup.is_read_only
    assert lookup.effects == [{"kind": "reads", "resource": "external:orders"}]
    assert Agent.objects.get(key="acme-ops.status-agent").code_overrides == {
        "acme-ops.post-update": "always_ask"
    }
    assert set(Flow.objects.values_list("key", flat=True)) == {
        "my-pack.check-order",
        "my-pack.note-order",
        "my-pack.echo-flow",
        "acme-ops.status-flow",
    }


def test_the_first_load_creates_rows_with_every_field():
    report = do_load_catalog(shop())
    assert (report.created["tool"], report.created["agent"], report.created["flow"]) == (2, 1, 1)
    read = Tool.objects.get(key="shop.read")
    assert (read.pack, read.description, read.is_read_only, read.mutating) == (
        "shop",
        "Reads the stock.",
        True,
        False,
    )
    assert read.input_schema == Text.model_json_schema()
    write = Tool.objects.get(key="shop.write")
    assert (write.is_read_only, write.effects_text) == (False, "writes shop:stock")
    agent = Agent.objects.get(key="shop.clerk")
    assert agent.tool_refs == [
        {"id": "shop.read", "version": "1.0.0"},
        {"id": "shop.write", "version": "1.0.0"},
    ]
    assert (agent.gates_enabled, agent.code_overrides) == (True, {"shop.write": "always_ask"})
    flow = Flow.objects.get(key="shop.restock")
    assert flow.nodes == [
        {
            "id": "write",
            "kind": "tool",
            "tool": "shop.write",
            "version": "1.0.0",
            "input": {"text": {"$ref": "#/input/text"}},
        }
    ]


def test_loading_again_changes_nothing():
    do_load_catalog(shop())
    before = {(row.key, row.version): row.updated_at for row in Tool.objects.all()}
    report = do_load_catalog(shop())
    assert not report.created
    assert not report.updated
    assert not report.retired
    assert (report.unchanged["tool"], report.unchanged["agent"], report.unchanged["flow"]) == (2, 1, 1)
    assert {(row.key, row.version): row.updated_at for row in Tool.objects.all()} == before
    assert Tool.objects.filter(key__startswith="shop.").count() == 2


def test_a_changed_definition_updates_its_row():
    do_load_catalog(shop())
    reworded = replace(read_stock, description="Reads the stock, twice as fast.")
    report = do_load_catalog(shop(tools=(reworded, write_stock)))
    assert report.updated["tool"] == 1
    assert Tool.objects.get(key="shop.read").description == "Reads the stock, twice as fast."


def test_a_removed_definition_is_retired_not_deleted_and_can_return():
    report = do_load_catalog(shop())
    # the sample packs are not in this registry, so their rows retire but stay
    assert report.retired["tool"] == 9
    assert Tool.objects.filter(key__startswith="my-pack.", retired_at__isnull=False).count() == 3
    retired_at = timezone.now() - timedelta(minutes=5)
    report = do_load_catalog(shop(flows=()), now=retired_at)
    assert report.retired["flow"] == 1
    assert report.retired["tool"] == 0
    flow = Flow.objects.get(key="shop.restock")
    assert flow.retired_at == retired_at
    assert flow.is_retired

    report = do_load_catalog(shop(flows=()))
    assert report.retired["flow"] == 0
    assert Flow.objects.get(key="shop.restock").retired_at == retired_at

    report = do_load_catalog(shop())
    assert report.revived["flow"] == 1
    assert Flow.objects.get(key="shop.restock").retired_at is None


def test_admin_overrides_survive_a_reload_and_beat_the_code():
    do_load_catalog(shop())
    agent = Agent.objects.get(key="shop.clerk")
    AgentGateOverride.objects.create(agent=agent, tool_key="shop.write", gate="never_ask")
    AgentGateOverride.objects.create(agent=agent, tool_key="shop.read", gate="always_ask")

    changed = replace(clerk, instructions="Keep the stock exactly right.")
    do_load_catalog(shop(agents=(changed,)))

    agent.refresh_from_db()
    assert agent.instructions == "Keep the stock exactly right."
    assert agent.code_overrides == {"shop.write": "always_ask"}
    assert agent.effective_overrides() == {"shop.write": "never_ask", "shop.read": "always_ask"}


def test_a_new_agent_version_keeps_the_admins_overrides():
    do_load_catalog(shop())
    AgentGateOverride.objects.create(
        agent=Agent.objects.get(key="shop.clerk"), tool_key="shop.write", gate="never_ask"
    )
    newer = replace(clerk, version="1.1.0", tools=clerk.tools[1:])
    also_without_read = replace(clerk, version="1.0.1")
    report = do_load_catalog(shop(agents=(clerk, also_without_read, newer)))
    assert report.carried_overrides == 2
    assert Agent.objects.get(key="shop.clerk", version="1.1.0").effective_overrides() == {
        "shop.write": "never_ask"
    }


def test_an_override_for_a_tool_the_new_version_dropped_is_not_carried():
    do_load_catalog(shop())
    AgentGateOverride.objects.create(
        agent=Agent.objects.get(key="shop.clerk"), tool_key="shop.read", gate="always_ask"
    )
    newer = replace(clerk, version="2.0.0", tools=clerk.tools[1:], gate_overrides={})
    report = do_load_catalog(shop(agents=(clerk, newer)))
    assert report.carried_overrides == 0
    assert not AgentGateOverride.objects.filter(agent__version="2.0.0").exists()


def test_the_command_loads_the_configured_packs_and_says_what_changed(capsys):
    Tool.objects.filter(key="my-pack.greet").delete()
    call_command("load_packs")
    assert "Catalog loaded: tools: 1 created, 8 unchanged; agents: 4 unchanged; flows: 4 unchanged" in (
        capsys.readouterr().out
    )


@override_settings(KINDGI_PACKS=["tests.pack_fixtures.unknown_tool"])
def test_the_command_refuses_broken_packs_and_changes_nothing():
    before = Tool.objects.count(), Agent.objects.count()
    with pytest.raises(CommandError, match=r"references unknown tool 'fixture\.gone'"):
        call_command("load_packs")
    assert (Tool.objects.count(), Agent.objects.count()) == before
