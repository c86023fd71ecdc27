import pytest
from django.urls import reverse

from approvals.actions.decisions import check_complete_approval
from approvals.models import Approval, Reviewer
from runs.actions import check_start_run
from tests.factories import default_tenant, member, other_tenant, principal, reviewer

pytestmark = pytest.mark.django_db(transaction=True)


def test_approvals_and_decisions_can_be_viewed_and_not_edited(admin_client, django_assert_max_num_queries):
    for message in ("one", "two", "three"):
        check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            agent_id="acme-ops.status-agent",
            input={"userMessage": message},
        )
    first = Approval.objects.order_by("created_at").first()
    check_complete_approval(approval_id=first.pk, acting_user=reviewer("ada"), decision="approve")
    with django_assert_max_num_queries(12):
        listing = admin_client.get(reverse("admin:approvals_approval_changelist"))
    assert listing.text.count("<code>acme-ops.post-update</code>") == 3
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
        "required_approvals": "1",
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


LIST = "admin:approvals_approval_changelist"


def staff(user):
    """``user`` with the admin's door open to them: staff, allowed to view approvals."""
    from django.contrib.auth.models import Permission

    user.is_staff = True
    user.save()
    user.user_permissions.set(Permission.objects.filter(codename="view_approval"))
    return user


def waiting(message: str = "Checkout is back to normal.", tenant=None) -> Approval:
    run = check_start_run(
        tenant=tenant or default_tenant(),
        principal=principal(tenant or default_tenant()),
        agent_id="acme-ops.status-agent",
        input={"userMessage": message},
    )
    return Approval.objects.get(run=run)


def test_the_approval_list_says_what_each_call_does_with_the_same_queries_for_10_and_100_rows(
    client, django_assert_max_num_queries
):
    client.force_login(staff(reviewer("ada")))
    waiting("A <b>bold</b> update")
    waiting(tenant=other_tenant())
    listing = client.get(reverse(LIST))
    # The call with its arguments, the effect in plain words, the run's message, why it waits.
    assert "{&quot;message&quot;: &quot;A &lt;b&gt;bold&lt;/b&gt; update&quot;}" in listing.text
    assert "acts outside Kindgi, on external:status-page (an external side effect)" in listing.text
    assert "“A &lt;b&gt;bold&lt;/b&gt; update”" in listing.text
    assert "override always_ask (agent code)" in listing.text
    assert listing.text.count("<code>acme-ops.post-update</code>") == 1  # not Globex's
    for count in (10, 100):
        while Approval.objects.filter(tenant=default_tenant()).count() < count:
            waiting()
        with django_assert_max_num_queries(14) as captured:
            client.get(reverse(LIST))
        if count == 10:
            queries_at_10 = len(captured)
    assert len(captured) == queries_at_10


def test_approving_in_the_admin_asks_first_then_decides_through_the_one_door(client):
    client.force_login(staff(reviewer("ada")))
    first, second = waiting("one"), waiting("two")
    asked = client.post(
        reverse(LIST), {"action": "approve_selected", "_selected_action": [first.pk, second.pk]}
    )
    # The confirmation lists exactly the calls, with their arguments; nothing is decided yet.
    assert asked.status_code == 200
    assert "Approve 2 approval(s)?" in asked.text
    assert "{&quot;message&quot;: &quot;one&quot;}" in asked.text
    assert "{&quot;message&quot;: &quot;two&quot;}" in asked.text
    assert Approval.objects.filter(status="pending").count() == 2

    done = client.post(
        reverse(LIST),
        {
            "action": "approve_selected",
            "_selected_action": [first.pk],
            "decide": "yes",
            "rationale": "Looks right",
        },
        follow=True,
    )
    assert "Approved 1 approval(s)." in done.text
    first.refresh_from_db()
    assert (first.status, first.decision.reviewer_name, first.decision.rationale) == (
        "approved",
        "Ada",
        "Looks right",
    )
    assert first.run.status == "completed"  # resumed, as from the console
    assert Approval.objects.get(pk=second.pk).status == "pending"


def test_rejecting_in_the_admin_needs_a_rationale(client):
    client.force_login(staff(reviewer("ada")))
    approval = waiting()
    form = {"action": "reject_selected", "_selected_action": [approval.pk], "decide": "yes", "rationale": ""}
    refused = client.post(reverse(LIST), form, follow=True)
    assert "a rejection needs a rationale" in refused.text
    assert Approval.objects.get(pk=approval.pk).status == "pending"
    client.post(reverse(LIST), form | {"rationale": "Not yet"}, follow=True)
    assert Approval.objects.get(pk=approval.pk).status == "rejected"


# What the console and the API say to the same people: the same action says it.
REFUSALS = {
    "staff member, no reviewer": "sid is not a reviewer; register as one to decide approvals",
    "reviewer whose role is too low": (
        "this approval needs a reviewer with the role 'senior' or higher; Ada is 'standard'"
    ),
    "superuser": "user admin belongs to no tenant; ask an admin to add them to one",
}


@pytest.mark.parametrize("who", ["staff member, no reviewer", "reviewer whose role is too low", "superuser"])
def test_the_admin_refuses_whom_the_console_refuses(client, admin_user, who):
    from approvals.actions.rules import check_save_rule

    check_save_rule(
        tenant=default_tenant(),
        fields={
            "name": "seniors only",
            "tool_pattern": "acme-ops.post-update",
            "gate": "always_ask",
            "required_role": "senior",
        },
        acting_user=None,
        surface="system",
    )
    approval = waiting()
    assert approval.required_role == "senior"
    user = {
        "staff member, no reviewer": lambda: staff(member("sid")),
        "reviewer whose role is too low": lambda: staff(reviewer("ada", role="standard")),
        "superuser": lambda: admin_user,  # sees every tenant, yet is no reviewer of any
    }[who]()
    client.force_login(user)
    form = {
        "action": "approve_selected",
        "_selected_action": [approval.pk],
        "decide": "yes",
        "rationale": "ok",
    }
    refused = client.post(reverse(LIST), form, follow=True)
    assert "Approved 1" not in refused.text
    reasons = [str(message) for message in refused.context["messages"]]
    assert reasons == [f"{approval.pk}: {REFUSALS[who]}"]
    assert Approval.objects.get(pk=approval.pk).status == "pending"
