"""`manage.py create_tenant`: a production site's first tenant, its admin and reviewer, in one
command that works with KINDGI_DEBUG off."""

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from approvals.models import Reviewer
from audit.models import AuditEntry
from tenants.models import Membership, Tenant

pytestmark = pytest.mark.django_db


def create_tenant(*arguments: str) -> str:
    out = io.StringIO()
    call_command("create_tenant", *arguments, stdout=out)
    return out.getvalue()


def test_a_tenant_its_admin_and_reviewer_and_a_token_every_call_accepts(settings, client):
    settings.DEBUG = False
    settings.KINDGI_PUBLIC_URL = "https://kindgi.acme.example"
    said = create_tenant("acme", "--name", "Acme", "--admin", "ada", "--email", "ada@acme.example")
    password = re.search(r"with password '([^']+)' \(shown only this once\)", said).group(1)
    assert "Sign in at https://kindgi.acme.example/console/login/ as 'ada'" in said

    ada = get_user_model().objects.get(username="ada")
    assert ada.check_password(password)
    assert (ada.email, ada.is_staff, ada.is_superuser) == ("ada@acme.example", True, False)
    tenant = Tenant.objects.get(slug="acme")
    assert tenant.name == "Acme"
    assert Membership.objects.get(user=ada).is_tenant_admin
    reviewer = Reviewer.objects.get(user=ada)
    assert (reviewer.tenant, reviewer.role, reviewer.display_name) == (tenant, "admin", "ada")
    assert list(
        AuditEntry.objects.filter(tenant=tenant).order_by("sequence").values_list("action", "surface")
    ) == [
        ("tenant.created", "command"),
        ("membership.created", "command"),
        ("reviewer.registered", "command"),
    ]

    token = io.StringIO()
    call_command("create_api_token", "ada", stdout=token, stderr=io.StringIO())
    me = client.get(
        "/api/v1/reviewers/me", HTTP_AUTHORIZATION=f"Bearer {token.getvalue().strip()}", secure=True
    )
    assert me.status_code == 200, me.content
    assert (me.json()["tenant"], me.json()["role"]) == ("acme", "admin")


def test_an_existing_user_of_no_tenant_becomes_its_admin_keeping_their_password():
    boss = get_user_model().objects.create_superuser(username="root", password="correct horse battery")
    said = create_tenant("acme", "--admin", "root", "--display-name", "The Boss")
    assert "with their password" in said
    assert "shown only this once" not in said
    boss.refresh_from_db()
    assert boss.check_password("correct horse battery")
    assert Membership.objects.get(user=boss).tenant.slug == "acme"
    assert Reviewer.objects.get(user=boss).display_name == "The Boss"
    assert Tenant.objects.get(slug="acme").name == "acme"


def test_a_mail_address_given_for_an_existing_user_is_said_to_be_unused():
    get_user_model().objects.create_superuser(username="root", email="root@acme.test", password="x" * 20)
    said = create_tenant("acme", "--admin", "root", "--email", "boss@acme.test")
    assert "--email was left unused: 'root' existed, with the address 'root@acme.test'" in said
    assert get_user_model().objects.get(username="root").email == "root@acme.test"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("acme", "--admin", "ada"), "there is a tenant 'acme' already"),
        (("beta", "--admin", "olga"), "'olga' belongs to the tenant 'globex' already"),
        (("not a slug", "--admin", "ada"), "TENANT 'not a slug' is not a slug"),
        (("beta", "--admin", "ada", "--email", "nope"), "--email 'nope' is not a mail address"),
        (("beta", "--admin", "ada", "--display-name", " "), "--display-name must be 1 to 200 characters"),
        (("beta", "--admin", ""), "--admin '' is not a username"),
        (("beta", "--admin", "a" * 151), "is not a username (1 to 150 letters"),
        (("beta", "--admin", "ada lovelace"), "--admin 'ada lovelace' is not a username"),
        (("beta", "--admin", "ada", "--name", "N" * 201), "--name must be 1 to 200 characters"),
    ],
)
def test_what_is_wrong_is_named_and_nothing_is_written(arguments, message):
    from tests.factories import member, other_tenant

    Tenant.objects.create(slug="acme", name="Acme")
    member("olga", tenant=other_tenant())
    before = (Tenant.objects.count(), get_user_model().objects.count(), Reviewer.objects.count())
    with pytest.raises(CommandError, match=re.escape(message)):
        create_tenant(*arguments)
    assert (Tenant.objects.count(), get_user_model().objects.count(), Reviewer.objects.count()) == before
    assert not AuditEntry.objects.exists()
