"""A tenant's rules and overrides are compiled once per process and never served stale: a change
made anywhere (an action, the admin, a bulk delete, another process) moves the tenant's policy
version, and the next run compiles them again."""

import json
import os
import subprocess
import sys

import pytest
from django.db import connection

from approvals.models import ApprovalRule
from runs import policy_cache
from tenants import config
from tenants.models import Tenant
from tests.factories import default_tenant, other_tenant, principal, reviewer
from tests.live_server import ROOT, database_env
from tools.models import Agent, AgentGateOverride

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = ("acme-ops.status-agent", "0.1.0")


@pytest.fixture(autouse=True)
def empty_cache():
    config.forget()
    yield
    config.forget()


def version(tenant) -> int:
    return Tenant.objects.values_list("config_version", flat=True).get(pk=tenant.pk)


def names(tenant) -> list[str]:
    return sorted(rule.name for rule in policy_cache.tenant_rules(tenant.pk, version(tenant)))


def overrides(tenant) -> dict:
    return policy_cache.admin_overrides(*AGENT, tenant.pk, version(tenant))


def rule(tenant, name: str, **fields) -> ApprovalRule:
    fields = {"gate": "always_ask", "tool_pattern": "x.*"} | fields
    return ApprovalRule.objects.create(tenant=tenant, name=name, **fields)


def test_a_tenants_rules_are_compiled_once_while_its_version_holds(django_assert_num_queries):
    tenant = default_tenant()
    rule(tenant, "first")
    assert names(tenant) == ["first"]
    assert overrides(tenant) == {}
    at = version(tenant)
    with django_assert_num_queries(0):
        assert [r.name for r in policy_cache.tenant_rules(tenant.pk, at)] == ["first"]
        assert policy_cache.admin_overrides(*AGENT, tenant.pk, at) == {}
    assert config.compiled == {"rules": 1, "overrides": 1}


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda r: ApprovalRule.objects.filter(pk=r.pk).first().save(), id="saved again"),
        pytest.param(lambda r: setattr(r, "name", "renamed") or r.save(), id="renamed"),
        pytest.param(lambda r: r.delete(), id="deleted"),
        pytest.param(lambda r: ApprovalRule.objects.filter(pk=r.pk).delete(), id="bulk deleted"),
        pytest.param(lambda r: r.reviewers.add(reviewer("rita")), id="a reviewer named"),
    ],
)
def test_every_change_to_a_rule_moves_the_version_and_the_next_read_sees_it(change):
    tenant, elsewhere = default_tenant(), other_tenant()
    changed = rule(tenant, "first")
    names(tenant), names(elsewhere)
    before, other_before = version(tenant), version(elsewhere)
    change(changed)
    assert version(tenant) > before
    assert version(elsewhere) == other_before  # another tenant's cache stays warm
    expected = sorted(r.name for r in ApprovalRule.objects.filter(tenant=tenant, enabled=True))
    assert names(tenant) == expected


def test_the_rules_saved_through_the_action_are_seen_at_once():
    from approvals.actions.rules import check_save_rule

    tenant = default_tenant()
    assert names(tenant) == []
    check_save_rule(
        tenant=tenant,
        fields={"name": "asks", "gate": "always_ask", "tool_pattern": "x.*"},
        acting_user=None,
        surface="system",
    )
    assert names(tenant) == ["asks"]


def test_an_override_moves_its_tenants_version_and_a_site_wide_one_every_tenants():
    tenant, elsewhere = default_tenant(), other_tenant()
    agent = Agent.objects.get(key=AGENT[0], version=AGENT[1])
    assert overrides(tenant) == {}
    assert overrides(elsewhere) == {}
    mine = AgentGateOverride.objects.create(
        agent=agent, tenant=tenant, tool_key="acme-ops.greet", gate="always_ask"
    )
    assert overrides(tenant) == {"acme-ops.greet": ("always_ask", "")}
    assert overrides(elsewhere) == {}
    AgentGateOverride.objects.create(
        agent=agent, tenant=None, tool_key="acme-ops.post-update", gate="never_ask"
    )
    assert overrides(elsewhere) == {"acme-ops.post-update": ("never_ask", "")}
    assert set(overrides(tenant)) == {"acme-ops.greet", "acme-ops.post-update"}
    mine.delete()
    assert set(overrides(tenant)) == {"acme-ops.post-update"}


def test_a_run_is_gated_by_the_rule_changed_since_the_last_run():
    from runs.actions import check_start_run
    from runs.models import RunStatus

    tenant = default_tenant()
    asking = rule(tenant, "greetings ask", tool_pattern="my-pack.greet")
    run = check_start_run(
        tenant=tenant, principal=principal(tenant), flow_id="my-pack.echo-flow", input={"name": "Ada"}
    )
    assert run.status == RunStatus.SUSPENDED  # the rule asks before the greeting
    asking.gate = "never_ask"
    asking.save()
    run = check_start_run(
        tenant=tenant, principal=principal(tenant), flow_id="my-pack.echo-flow", input={"name": "Ada"}
    )
    assert run.status == RunStatus.COMPLETED


PROBE = """
import json, sys, django
django.setup()
from runs import policy_cache
from tenants import config
from tenants.models import Tenant
print("ready", flush=True)
for line in sys.stdin:
    tenant = Tenant.objects.get(pk=line.strip())
    rules = policy_cache.tenant_rules(tenant.pk, tenant.config_version)
    found = policy_cache.admin_overrides("acme-ops.status-agent", "0.1.0", tenant.pk, tenant.config_version)
    print(json.dumps({"rules": sorted(r.name for r in rules), "overrides": sorted(found),
                      "compiled": config.compiled}), flush=True)
"""


class Probe:
    """Another process with a cache of its own, asked what it would gate a run of ``tenant`` by."""

    def __init__(self):
        env = os.environ | database_env(connection) | {"DJANGO_SETTINGS_MODULE": "kindgi_site.settings"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", PROBE],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout.readline().strip() == "ready"

    def ask(self, tenant) -> dict:
        self.process.stdin.write(f"{tenant.pk}\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


def test_another_process_never_serves_a_stale_rule_or_override():
    tenant = default_tenant()
    agent = Agent.objects.get(key=AGENT[0], version=AGENT[1])
    first = rule(tenant, "first")
    probe = Probe()
    try:
        seen = probe.ask(tenant)
        assert (seen["rules"], seen["overrides"], seen["compiled"]) == (
            ["first"],
            [],
            {"rules": 1, "overrides": 1},
        )
        # Unchanged: served from that process's cache, nothing compiled again.
        assert probe.ask(tenant)["compiled"] == {"rules": 1, "overrides": 1}

        first.name = "renamed"
        first.save()  # in this process
        seen = probe.ask(tenant)
        assert (seen["rules"], seen["compiled"]["rules"]) == (["renamed"], 2)

        first.delete()
        assert probe.ask(tenant)["rules"] == []

        override = AgentGateOverride.objects.create(
            agent=agent, tenant=tenant, tool_key="acme-ops.greet", gate="never_ask"
        )
        assert probe.ask(tenant)["overrides"] == ["acme-ops.greet"]
        override.delete()
        assert probe.ask(tenant)["overrides"] == []
    finally:
        probe.close()


def test_a_rules_escalation_is_read_once_per_version_and_follows_a_change(django_assert_num_queries):
    from approvals.escalation_steps import approval_escalation

    tenant = default_tenant()
    asking = rule(tenant, "asks", escalation=[{"afterSeconds": 60, "raiseRole": "senior"}])
    at = version(tenant)
    assert approval_escalation(tenant.pk, asking.pk, config_version=at) == [
        {"afterSeconds": 60, "raiseRole": "senior"}
    ]
    with django_assert_num_queries(0):
        approval_escalation(tenant.pk, asking.pk, config_version=at)
    asking.escalation = [{"afterSeconds": 30, "expire": True}]
    asking.save()
    assert approval_escalation(tenant.pk, asking.pk, config_version=version(tenant)) == [
        {"afterSeconds": 30, "expire": True}
    ]
