import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

pytestmark = pytest.mark.django_db


@override_settings(DEBUG=True)
def test_creates_the_admin_once_and_prints_the_password_once(capsys, client):
    call_command("create_dev_admin")
    first = capsys.readouterr().out
    password = first.split("with password '")[1].split("'")[0]
    assert client.login(username="admin", password=password)
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser
    assert (admin.membership.tenant.slug, admin.membership.is_tenant_admin) == ("default", True)
    assert admin.email == "admin@localhost"  # notifications of approvals reach them

    call_command("create_dev_admin")
    second = capsys.readouterr().out
    assert "already exists" in second
    assert password not in second
    assert get_user_model().objects.filter(username="admin").count() == 1


@override_settings(DEBUG=False)
def test_refuses_outside_development():
    with pytest.raises(CommandError, match="development only"):
        call_command("create_dev_admin")
    assert not get_user_model().objects.exists()
