"""Every configuration change is an audit entry (who, surface, what, before, after, when) written by
the door that makes it, chained per tenant; tenant admins read it in the API and the console; and
who may change what is asked of one authority, whatever the surface."""

import pytest
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from prometheus_client.parser import text_string_to_metric_families
from rest_framework.test import APIClient

from approvals.actions.rules import check_save_rule
from audit.actions import entry_hash
from audit.chain import GENESIS
from audit.models import AuditEntry, ChainHead
from tenants.tokens import do_create_token
from tests.factories import default_tenant, member, other_tenant, reviewer

pytestmark = pytest.mark.django_db(transaction=True)
SYSTEM = {"acting_user": None, "surface": "system"}


def api_of(user, *, cli: bool = False) -> APIClient:
    api = APIClient()
    headers = {"HTTP_AUTHORIZATION": f"Bearer {do_create_token(user=user)[1]}"}
    if cli:
        headers["HTTP_USER_AGENT"] = "kindgi-cli/0.1.0"
    api.credentials(**headers)
    return api


def entries(tenant=None, **filters) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(tenant=tenant or default_tenant(), **filters).order_by("sequence"))


RULE = {"name": "large refunds", "toolPattern": "my-pack.*", "gate": "always_ask", "requiredRole": "senior"}


class TestChangesAreRecordedByTheirDoor:
    def test_a_rule_made_changed_and_deleted_through_the_api_leaves_three_entries(self):
        tina = member("tina", tenant_admin=True)
        api = api_of(tina)
        made = api.post("/api/v1/approval-rules", RULE, format="json")
        assert made.status_code == 201, made.content
        rule_id = made.json()["id"]
        assert (
            api.patch(
                f"/api/v1/approval-rules/{rule_id}", {"requiredRole": "admin"}, format="json"
            ).status_code
            == 200
        )
        assert api_of(tina, cli=True).delete(f"/api/v1/approval-rules/{rule_id}").status_code == 204
        created, changed, deleted = [e for e in entries() if e.target_type == "rule"]
        assert [(e.action, e.actor_name, e.surface) for e in (created, changed, deleted)] == [
            ("rule.created", "tina", "api"),
            ("rule.changed", "tina", "api"),
            ("rule.deleted", "tina", "cli"),
        ]
        assert created.before is None
        assert created.after["required_role"] == "senior"
        assert (changed.before["required_role"], changed.after["required_role"]) == ("senior", "admin")
        assert deleted.after is None
        assert deleted.before["name"] == "large refunds"
        assert changed.target_label == "large refunds"
        assert changed.target_id == str(rule_id)

    def test_a_refused_change_changes_nothing_and_records_nothing(self):
        mo = member("mo")
        api = api_of(mo)
        before = AuditEntry.objects.count()
        refused = api.post("/api/v1/approval-rules", RULE, format="json")
        assert refused.status_code == 403
        with pytest.raises(Exception, match="only a tenant admin of acme may change this"):
            check_save_rule(
                tenant=default_tenant(), fields={"name": "x", "gate": "deny"}, acting_user=mo, surface="api"
            )
        assert AuditEntry.objects.count() == before
        from approvals.models import ApprovalRule

        assert not ApprovalRule.objects.exists()

    def test_tokens_reviewers_overrides_schedules_and_mailboxes_are_recorded(self):
        tina = member("tina", tenant_admin=True)
        api = api_of(tina)
        cora = member("cora")
        registered = api.post(
            "/api/v1/reviewers/register", {"role": "senior", "displayName": "Tina"}, format="json"
        )
        assert registered.status_code == 200, registered.content
        assert (
            api.put(
                "/api/v1/agents/acme-ops.status-agent/overrides/acme-ops.post-update",
                {"gate": "never_ask"},
                format="json",
            ).status_code
            == 200
        )
        schedule = {
            "name": "nightly",
            "flowId": "my-pack.check-order",
            "input": {"orderId": "ord_1001"},
            "cron": "0 9 * * *",
        }
        assert api_of(cora).post("/api/v1/schedules", schedule, format="json").status_code == 201
        mailbox = {"address": "help@acme.test", "owner": "cora", "agentId": "kindgi-mail.responder"}
        assert api.post("/api/v1/mailboxes", mailbox, format="json").status_code == 201
        actions = [(e.action, e.actor_name) for e in entries()]
        assert ("token.created", "") in actions  # api_of made them, as Kindgi itself
        for expected in [
            ("reviewer.registered", "tina"),
            ("override.created", "tina"),
            ("schedule.created", "cora"),
            ("mailbox.created", "tina"),
        ]:
            assert expected in actions, actions

    def test_a_secret_never_reaches_the_record(self):
        """A webhook's secret is kept as a mark that changes with it; a token never at all."""
        from approvals.actions.webhooks import check_save_webhook
        from approvals.models import Webhook

        tina = member("tina", tenant_admin=True)
        webhook = Webhook(
            tenant=default_tenant(), url="https://hooks.example/x", secret="s3cret-value-long-enough"
        )
        check_save_webhook(webhook, acting_user=tina, surface="admin")
        webhook.secret = "another-secret-value-long"
        check_save_webhook(webhook, acting_user=tina, surface="admin")
        _, token = do_create_token(user=tina)
        made, rotated = entries(target_type="webhook")
        assert rotated.action == "webhook.changed"
        assert made.after["secret"] != rotated.after["secret"]
        assert made.after["secret"].startswith("hmac:")
        text = str([(e.before, e.after, e.target_label) for e in entries()])
        for secret in (
            "s3cret-value-long-enough",
            "another-secret-value-long",
            token,
            token.split("_", 2)[2],
        ):
            assert secret not in text

    def test_each_entry_follows_the_one_before_and_the_head_moves_with_it(self):
        tina = member("tina", tenant_admin=True)
        for name in ("a", "b", "c"):
            check_save_rule(
                tenant=default_tenant(),
                fields={"name": name, "gate": "deny"},
                acting_user=tina,
                surface="api",
            )
        check_save_rule(tenant=other_tenant(), fields={"name": "z", "gate": "deny"}, **SYSTEM)
        chain = entries(action__startswith="rule.")
        ours = entries()
        assert [e.sequence for e in ours] == list(range(1, len(ours) + 1))
        assert ours[0].previous_hash == GENESIS
        assert [e.previous_hash for e in ours[1:]] == [e.hash for e in ours[:-1]]
        assert all(entry_hash(e) == e.hash for e in ours)
        head = ChainHead.objects.get(tenant=default_tenant(), chain="audit")
        assert (head.sequence, head.hash) == (ours[-1].sequence, ours[-1].hash)
        theirs = entries(other_tenant())
        assert (theirs[0].sequence, theirs[0].previous_hash) == (1, GENESIS)  # a chain of its own
        assert len(chain) == 3

    def test_an_entry_is_never_changed_or_deleted_through_the_application(self):
        from audit.models import ImmutableAuditError

        check_save_rule(tenant=default_tenant(), fields={"name": "a", "gate": "deny"}, **SYSTEM)
        [entry] = entries()
        entry.action = "rule.deleted"
        with pytest.raises(ImmutableAuditError):
            entry.save()
        with pytest.raises(ImmutableAuditError):
            entry.delete()


class TestTheAuditApi:
    def test_tenant_admins_read_their_tenants_changes_filtered_newest_first(self):
        tina = member("tina", tenant_admin=True)
        for name in ("a", "b"):
            check_save_rule(
                tenant=default_tenant(),
                fields={"name": name, "gate": "deny"},
                acting_user=tina,
                surface="api",
            )
        check_save_rule(tenant=other_tenant(), fields={"name": "globex-only", "gate": "deny"}, **SYSTEM)
        api = api_of(tina)
        page = api.get("/api/v1/audit", {"action": "rule"}).json()
        assert [item["target"]["label"] for item in page["items"]] == ["b", "a"]
        first = page["items"][1]
        assert (first["action"], first["actor"], first["surface"], first["before"]) == (
            "rule.created",
            "tina",
            "api",
            None,
        )
        assert first["after"]["name"] == "a"
        assert first["hash"].startswith("sha256:")
        assert "globex-only" not in str(api.get("/api/v1/audit").json())
        assert api.get("/api/v1/audit", {"action": "rule.deleted"}).json()["items"] == []
        assert api.get("/api/v1/audit", {"actor": "nobody"}).json()["items"] == []
        heads = api.get("/api/v1/audit/heads").json()
        assert heads["audit"] == {
            "sequence": AuditEntry.objects.filter(tenant=default_tenant()).count(),
            "hash": entries()[-1].hash,
        }
        assert heads["decisions"] == {"sequence": 0, "hash": GENESIS}

    @pytest.mark.parametrize(
        ("query", "field"),
        [
            ({"since": "yesterday"}, "since"),
            ({"surface": "fax"}, "surface"),
            ({"since": "2026-12-04", "until": "2026-12-01"}, "until"),
        ],
    )
    def test_bad_filters_are_refused_naming_the_parameter(self, query, field):
        response = api_of(member("tina", tenant_admin=True)).get("/api/v1/audit", query)
        assert response.status_code == 400
        assert field in response.json()["error"]["details"]["fields"]

    def test_members_who_are_not_tenant_admins_are_refused(self):
        for user in (member("mo"), reviewer("rita", role="admin")):
            for path in ("/api/v1/audit", "/api/v1/audit/heads"):
                response = api_of(user).get(path)
                assert response.status_code == 403, (user, path)
                assert response.json()["error"]["message"] == "only a tenant admin may do this"

    def test_the_list_reads_the_same_statements_however_long_the_chain(self):
        tina = member("tina", tenant_admin=True)
        api = api_of(tina)
        api.get("/api/v1/audit")
        for name in range(30):
            check_save_rule(tenant=default_tenant(), fields={"name": f"r{name}", "gate": "deny"}, **SYSTEM)
        with CaptureQueriesContext(connection) as few:
            api.get("/api/v1/audit", {"limit": 5})
        with CaptureQueriesContext(connection) as many:
            assert len(api.get("/api/v1/audit", {"limit": 30}).json()["items"]) == 30
        assert len(many) == len(few)


class TestTheAuditPage:
    def test_a_tenant_admin_sees_each_change_and_what_it_changed_escaped(self):
        tina = member("tina", tenant_admin=True)
        rule = check_save_rule(
            tenant=default_tenant(),
            fields={"name": "<script>alert(1)</script>", "gate": "deny"},
            acting_user=tina,
            surface="api",
        )
        check_save_rule(
            tenant=default_tenant(),
            fields={"gate": "always_ask"},
            rule=rule,
            acting_user=tina,
            surface="console",
        )
        browser = Client()
        browser.force_login(tina)
        page = browser.get("/console/audit/").text
        assert "<script>alert(1)</script>" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        assert "rule.changed" in page
        assert "rule.created" in page
        assert "<dt>gate</dt><dd><del>deny</del><ins>always_ask</ins></dd>" in page
        assert ">Audit</a>" in page  # in the nav, for a tenant admin
        for day in ("2026-02-30", "yesterday", "2026-13-01"):
            assert browser.get("/console/audit/", {"since": day}).status_code == 200
        filtered = browser.get("/console/audit/", {"surface": "console"}).text
        assert "rule.changed" in filtered
        assert "rule.created" not in filtered

    def test_anyone_else_is_refused_and_not_offered_it(self):
        browser = Client()
        browser.force_login(reviewer("rita", role="admin"))
        refused = browser.get("/console/audit/")
        assert refused.status_code == 403
        assert "Only tenant admins see the audit" in refused.text
        assert ">Audit</a>" not in browser.get("/console/queue/").text


def test_metrics_carry_every_tenants_chain_heads(client):
    check_save_rule(tenant=default_tenant(), fields={"name": "a", "gate": "deny"}, **SYSTEM)
    [entry] = entries()
    other_tenant()
    with override_settings(KINDGI_METRICS_TOKEN="t"):
        body = client.get("/metrics", HTTP_AUTHORIZATION="Bearer t").content.decode()
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(body)
        for sample in family.samples
    }
    assert samples[("kindgi_chain_head_sequence", (("chain", "audit"), ("tenant", "acme")))] == 1
    assert samples[("kindgi_chain_head_sequence", (("chain", "decisions"), ("tenant", "globex")))] == 0
    assert (
        samples[("kindgi_chain_head_info", (("chain", "audit"), ("hash", entry.hash), ("tenant", "acme")))]
        == 1
    )


def test_in_the_admin_only_tenant_admins_read_the_audit(client):
    from django.contrib.auth.models import Permission

    check_save_rule(tenant=default_tenant(), fields={"name": "a", "gate": "deny"}, **SYSTEM)
    for username, admin_of_tenant, allowed in (("evan", False, False), ("tina", True, True)):
        staff = member(username, tenant_admin=admin_of_tenant)
        staff.is_staff = True
        staff.save()
        staff.user_permissions.set(Permission.objects.all())
        client.force_login(staff)
        listing = client.get("/admin/audit/auditentry/")
        assert (listing.status_code == 200) is allowed, (username, listing.status_code)


def test_who_belongs_to_a_tenant_and_who_is_its_admin_is_recorded(admin_client):
    tenant = default_tenant()
    mallory = member("mallory")
    membership = mallory.membership
    form = {
        "name": tenant.name,
        "slug": tenant.slug,
        "memberships-TOTAL_FORMS": "1",
        "memberships-INITIAL_FORMS": "1",
        "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1000",
        "memberships-0-id": str(membership.pk),
        "memberships-0-tenant": str(tenant.pk),
        "memberships-0-user": str(mallory.pk),
        "memberships-0-is_tenant_admin": "on",
    }
    saved = admin_client.post(f"/admin/tenants/tenant/{tenant.pk}/change/", form)
    assert saved.status_code == 302, saved.content
    mallory.membership.refresh_from_db()
    assert mallory.membership.is_tenant_admin
    [entry] = entries(action="membership.changed")
    assert (entry.actor_name, entry.surface, entry.target_label) == ("admin", "admin", "mallory")
    assert (entry.before["tenantAdmin"], entry.after["tenantAdmin"]) == (False, True)


def test_a_url_with_a_password_or_a_token_is_recorded_without_them():
    from approvals.actions.webhooks import check_save_webhook
    from approvals.models import Webhook

    url = "https://hookuser:Sup3rS3cretPass@hooks.example/in?token=abcSECRETdef"
    check_save_webhook(
        Webhook(tenant=default_tenant(), url=url, secret="s" * 20),
        acting_user=member("tina", tenant_admin=True),
        surface="admin",
    )
    [entry] = entries(target_type="webhook")
    assert entry.after["url"] == "https://hookuser:[REDACTED]@hooks.example/in?token=[REDACTED]"
    assert "Sup3rS3cretPass" not in entry.target_label
    assert "abcSECRETdef" not in str(entry.after)


def test_a_servers_header_values_are_recorded_as_marks_that_change_with_them():
    from tools.mcp.catalog import mcp_server_snapshot
    from tools.models import McpServer

    server = McpServer(
        name="x",
        transport="http",
        url="https://93.184.216.34/mcp",
        headers={"A": "env:TOKEN", "B": "literal-1"},
    )
    before = mcp_server_snapshot(server)
    server.headers = {"A": "env:OTHER", "B": "literal-2"}
    after = mcp_server_snapshot(server)
    assert (before["headers"]["A"], after["headers"]["A"]) == ("env:TOKEN", "env:OTHER")
    assert before["headers"]["B"].startswith("hmac:")
    assert before["headers"]["B"] != after["headers"]["B"]
    assert "literal" not in str((before, after))
