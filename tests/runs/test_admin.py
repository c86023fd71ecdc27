import pytest
from django.urls import reverse

from runs.actions import check_start_run
from runs.models import Run
from tests.factories import default_tenant, principal

pytestmark = pytest.mark.django_db(transaction=True)


def test_runs_can_be_viewed_with_their_journal_and_not_edited(admin_client, django_assert_max_num_queries):
    for order in ("ord_1001", "ord_1002", "ord_1003"):
        check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            flow_id="my-pack.check-order",
            input={"orderId": order},
        )
    flow = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="acme-ops.status-flow",
        input={"userMessage": "<script>alert(1)</script>"},
    )
    with django_assert_max_num_queries(12):
        listing = admin_client.get(reverse("admin:runs_run_changelist"))
    assert listing.status_code == 200
    assert listing.text.count("my-pack.check-order") >= 3

    child = flow.children.get()
    detail = admin_client.get(reverse("admin:runs_run_change", args=[child.pk]))
    assert detail.status_code == 200
    assert "wait.suspended" in detail.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in detail.text
    assert "<script>alert(1)</script>" not in detail.text

    assert (
        admin_client.post(
            reverse("admin:runs_run_change", args=[child.pk]), {"status": "completed"}
        ).status_code
        == 403
    )
    assert Run.objects.get(pk=child.pk).status == "suspended"
    assert admin_client.get(reverse("admin:runs_run_add")).status_code == 403
