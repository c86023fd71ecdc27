"""The console's Grants page: a reviewer's own grants (a tenant admin's: all), and revoking one
through the one action that revokes grants."""

import pytest
from django.urls import reverse

from approvals.actions.grants import check_create_grant
from approvals.models import Grant
from tests.factories import default_tenant, member, other_tenant, principal, reviewer

pytestmark = pytest.mark.django_db


def given_by(user) -> Grant:
    return check_create_grant(
        tenant=user.membership.tenant,
        acting_user=user,
        fields={
            "toolPattern": "acme-ops.post-update",
            "scope": "principal",
            "principal": principal(user.membership.tenant).username,
            "maxCalls": 2,
            "forSeconds": 600,
        },
        surface="api",
    )


def test_each_sees_their_own_and_an_admin_all_and_only_they_revoke(client):
    rita, sam = reviewer("rita", role="admin"), reviewer("sam", role="admin")
    ritas, sams = given_by(rita), given_by(sam)
    globex = given_by(reviewer("gil", role="admin", tenant=other_tenant()))

    client.force_login(rita)
    page = client.get(reverse("console:grants"))
    assert f'id="grant-{ritas.pk}"' in page.text
    assert f'id="grant-{sams.pk}"' not in page.text
    assert f'id="grant-{globex.pk}"' not in page.text
    client.post(reverse("console:grant-revoke", args=[sams.pk]))
    sams.refresh_from_db()
    assert sams.revoked_at is None  # not hers: nothing revoked

    client.force_login(member("tia", tenant_admin=True))
    page = client.get(reverse("console:grants"))
    assert f'id="grant-{sams.pk}"' in page.text
    assert f'id="grant-{ritas.pk}"' in page.text
    revoked = client.post(reverse("console:grant-revoke", args=[sams.pk]), follow=True)
    assert f"Revoked grant {sams.pk}" in revoked.text
    sams.refresh_from_db()
    assert sams.revoked_at is not None
    assert client.post(reverse("console:grant-revoke", args=[globex.pk]), follow=True).status_code == 200
    globex.refresh_from_db()
    assert globex.revoked_at is None  # another tenant's grant does not exist here


def test_the_grants_page_needs_a_signed_in_member(client):
    assert client.get(reverse("console:grants")).status_code == 302
    assert default_tenant()  # the page of a member with no grants says so
    client.force_login(member("nora"))
    assert 'id="no-grants"' in client.get(reverse("console:grants")).text
    assert client.get(reverse("console:grant-revoke", args=[1])).status_code == 405
