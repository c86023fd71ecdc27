import hmac

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from tenants.exceptions import ConfigurationForbiddenError
from tenants.models import ApiToken, Membership
from tenants.tokens import (
    check_create_token,
    do_create_token,
    do_revoke_token,
    do_service_account,
    user_for_token,
)
from tests.factories import member

pytestmark = pytest.mark.django_db


def test_only_a_prefix_and_a_hash_are_stored():
    ada = member("ada")
    record, token = do_create_token(user=ada, name="laptop")
    assert token.startswith(f"kgi_{record.prefix}_")
    stored = ApiToken.objects.filter(pk=record.pk).values().get()
    assert token not in str(stored)
    assert token.split("_", 2)[2] not in str(stored)
    assert len(record.token_hash) == 64


def test_a_token_identifies_its_user_until_revoked():
    ada = member("ada")
    record, token = do_create_token(user=ada)
    assert user_for_token(token) == ada
    record.refresh_from_db()
    assert record.last_used_at is not None
    do_revoke_token(record)
    assert user_for_token(token) is None


def test_a_tokens_user_comes_with_its_tenant_in_the_one_query(django_assert_num_queries):
    ada = member("ada")
    _, token = do_create_token(user=ada)
    user_for_token(token)  # notes the last use, once a minute at most
    with django_assert_num_queries(1):
        user = user_for_token(token)
        assert user.membership.tenant.slug == ada.membership.tenant.slug


@pytest.mark.parametrize("bad", ["", "kgi_", "kgi_nope", "Bearer x", "kgi_deadbeef_wrong"])
def test_malformed_or_unknown_tokens_identify_nobody(bad):
    do_create_token(user=member("ada"))
    assert user_for_token(bad) is None


def test_a_token_with_the_right_prefix_and_a_wrong_secret_identifies_nobody():
    record, _ = do_create_token(user=member("ada"))
    assert user_for_token(f"kgi_{record.prefix}_{'x' * 43}") is None


def test_the_commands_create_and_revoke(capsys):
    ada = member("ada")
    call_command("create_api_token", "ada", "--name", "ci")
    token = capsys.readouterr().out.strip()
    assert user_for_token(token) == ada
    call_command("revoke_api_token", token.split("_")[1])
    assert user_for_token(token) is None
    with pytest.raises(CommandError, match="there is no user 'nobody'"):
        call_command("create_api_token", "nobody")
    with pytest.raises(CommandError, match="there is no token with the prefix 'ffffffff'"):
        call_command("revoke_api_token", "ffffffff")


def test_the_admin_shows_a_new_token_once_and_never_its_hash(admin_client, admin_user):
    ada = member("ada")
    Membership.objects.create(user=admin_user, tenant=ada.membership.tenant, is_tenant_admin=True)
    nightly, _ = do_service_account(name="nightly", tenant=ada.membership.tenant)
    response = admin_client.post(
        reverse("admin:tenants_apitoken_add"),
        {"user": nightly.pk, "name": "cli", "responsible": ada.pk},  # a responsible person is not chosen
        follow=True,
    )
    record = ApiToken.objects.get(user=nightly)
    assert record.responsible == admin_user  # its runs stand on whoever made it
    shown = [str(m) for m in response.context["messages"]]
    [token] = [word for message in shown for word in message.split() if word.startswith("kgi_")]
    assert user_for_token(token) == nightly
    page = admin_client.get(reverse("admin:tenants_apitoken_change", args=[record.pk]))
    assert record.token_hash not in page.text
    assert token not in page.text
    admin_client.post(
        reverse("admin:tenants_apitoken_changelist"), {"action": "revoke", "_selected_action": [record.pk]}
    )
    assert user_for_token(token) is None


def test_the_secret_is_compared_in_constant_time(monkeypatch):
    """By hmac.compare_digest on the hashes: the time taken says nothing about how much matched."""
    from tenants import tokens

    user = member("tia")
    _, token = do_create_token(user=user)
    compared = []
    original = hmac.compare_digest

    def compare_digest(left, right):
        compared.append((left, right))
        return original(left, right)

    monkeypatch.setattr(tokens.hmac, "compare_digest", compare_digest)
    assert user_for_token(token) == user
    assert len(compared) == 1
    assert token not in compared[0]  # the hashes are compared, never the secret itself


def test_nobody_makes_a_token_of_another_persons_in_the_admin(admin_client):
    """It would let them act as that person: decide as them, start runs that stand on them."""
    ada = member("ada")
    refused = admin_client.post(reverse("admin:tenants_apitoken_add"), {"user": ada.pk, "name": "mine now"})
    assert refused.status_code == 200  # the form again, saying why
    assert "A person&#x27;s token is theirs alone to make" in refused.text
    assert not ApiToken.objects.filter(user=ada).exists()
    tina = member("tina", tenant_admin=True)
    with pytest.raises(ConfigurationForbiddenError, match="a person's token is theirs alone to make"):
        check_create_token(acting_user=tina, surface="api", user=ada)
    _, own = check_create_token(acting_user=tina, surface="admin", user=tina)
    assert user_for_token(own) == tina


def test_a_services_token_answers_to_whoever_makes_it():
    """Naming another would let its maker approve, under four-eyes, the calls of runs they start."""
    tina, carol = member("tina", tenant_admin=True), member("carol")
    nightly, _ = do_service_account(name="nightly", tenant=tina.membership.tenant)
    with pytest.raises(ConfigurationForbiddenError, match="answers to the person who makes it"):
        check_create_token(acting_user=tina, surface="api", user=nightly, responsible=carol)
    record, _ = check_create_token(acting_user=tina, surface="api", user=nightly)
    assert record.responsible == tina
    # The operator's command names one, having the machine's authority.
    record, _ = check_create_token(acting_user=None, surface="command", user=nightly, responsible=carol)
    assert record.responsible == carol
