import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from approvals.models import Reviewer
from tenants.tokens import user_for_token

pytestmark = pytest.mark.django_db


@override_settings(DEBUG=True)
def test_a_token_for_the_dev_admin_who_becomes_a_reviewer_and_reuse_keeps_it(capsys):
    call_command("create_dev_admin")
    capsys.readouterr()
    call_command("dev_token")
    token = capsys.readouterr().out.strip()
    assert user_for_token(token).username == "admin"
    assert Reviewer.objects.get(user__username="admin").role == "admin"
    call_command("dev_token", "--reuse", token)
    assert capsys.readouterr().out.strip() == token
    call_command("dev_token", "--reuse", "kgi_stale_token")
    fresh = capsys.readouterr().out.strip()
    assert fresh != token
    assert user_for_token(fresh).username == "admin"


@override_settings(DEBUG=True)
def test_it_needs_the_dev_admin():
    with pytest.raises(CommandError, match="run create_dev_admin first"):
        call_command("dev_token")


def test_it_refuses_outside_development():
    with pytest.raises(CommandError, match="development only"):
        call_command("dev_token")
