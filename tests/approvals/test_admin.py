import pytest
from django.urls import reverse

from approvals.actions import check_complete_approval
from approvals.models import Approval, Reviewer
from runs.actions import check_start_run
from tests.factories import default_tenant, member, other_tenant, reviewer

pytestmark = pytest.mark.django_db(transaction=True)


def test_approvals_and_decisions_can_be_viewed_and_not_edited(admin_client, django_assert_max_num_queries):
    for message in ("one", "two", "three"):
        check_start_run(
            tenant=default_tenant(), agent_id="acme-ops.status-agent", input={"userMessage": message}
        )
    first = Approval.objects.order_by("created_at").first()
    check_complete_approval(approval_id=first.pk, acting_user=reviewer("ada"), decision="approve")
    with django_assert_max_num_queries(12):
        listing = admin_client.get(reverse("admin:approvals_approval_changelist"))
    assert listing.text.count("HITL review: acme-ops.post-update") == 3
    detail = admin_client.get(reverse("admin:approvals_approval_change", args=[first.pk]))
    assert "&quot;message&quot;: &quot;one&quot;" in detail.text
    assert admin_client.get(reverse("admin:approvals_decision_changelist")).status_code == 200
    assert admin_client.get(reverse("admin:approvals_approval_add")).status_code == 403


def test_a_reviewers_role_is_one_of_the_roles_and_their_tenant_is_their_users(admin_client):
    ada = member("ada")
    url = reverse("admin:approvals_reviewer_add")
    refused = admin_client.post(
        url, {"user": ada.pk, "tenant": other_tenant().pk, "role": "senior", "display_name": "Ada"}
    )
    assert "is not a member of Globex" in refused.text
    refused = admin_client.post(
        url, {"user": ada.pk, "tenant": default_tenant().pk, "role": "boss", "display_name": "Ada"}
    )
    assert "Select a valid choice" in refused.text
    assert not Reviewer.objects.exists()
    saved = admin_client.post(
        url, {"user": ada.pk, "tenant": default_tenant().pk, "role": "senior", "display_name": "Ada"}
    )
    assert saved.status_code == 302
    assert Reviewer.objects.get().role == "senior"


def test_rules_are_checked_in_the_admin_and_staff_see_only_their_tenants(client, admin_client):
    from django.contrib.auth.models import Permission

    from approvals.models import ApprovalRule

    url = reverse("admin:approvals_approvalrule_add")
    form = {
        "tenant": default_tenant().pk,
        "name": "big refunds",
        "enabled": "on",
        "tool_pattern": "acme-ops.*",
        "agent_pattern": "*",
        "effect_kind": "writes",
        "resource_pattern": "",
        "condition": "/amountCents > 10000",
        "gate": "always_ask",
        "required_role": "senior",
        "reviewers": [],
        "ttl_seconds": "",
        "reason": "",
    }
    bad = admin_client.post(
        url, form | {"condition": "amount > 1", "reviewers": [member("eve", tenant=other_tenant()).pk]}
    )
    assert "is not a condition" in bad.text
    assert "not members of Acme: eve" in bad.text
    assert admin_client.post(url, form).status_code == 302
    ApprovalRule.objects.create(tenant=other_tenant(), name="globex rule", gate="deny")

    staff = member("sid")
    staff.is_staff = True
    staff.save()
    staff.user_permissions.set(Permission.objects.filter(codename__endswith="approvalrule"))
    client.force_login(staff)
    listing = client.get(reverse("admin:approvals_approvalrule_changelist"))
    assert "big refunds" in listing.text
    assert "globex rule" not in listing.text
    other = ApprovalRule.objects.get(name="globex rule")
    assert client.get(reverse("admin:approvals_approvalrule_change", args=[other.pk])).status_code == 302
