"""Signing in: failed attempts are limited per username and per address; CSRF on every form."""

import pytest
from django.core.cache import cache
from django.test import Client

from approvals.models import Decision
from runs.models import RunStatus
from tests.factories import reviewer

PASSWORD = "a-long-test-password"
pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache(settings):
    # Fifty sign-ins with the real password hasher would take most of a minute.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    yield
    cache.clear()


def sign_in(client: Client, username: str, password: str, address: str = "10.0.0.1"):
    return client.post("/console/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def test_after_five_failures_even_the_right_password_waits():
    reviewer("ada")
    client = Client()
    for _ in range(5):
        response = sign_in(client, "ada", "wrong")
        assert response.status_code == 200
        assert "didn&#x27;t match" in response.text or "didn't match" in response.text
    locked = sign_in(client, "ada", PASSWORD)
    assert locked.status_code == 429
    assert "Too many failed sign-ins. Try again in 15 minutes." in locked.text
    assert "_auth_user_id" not in client.session


def test_an_unknown_username_is_locked_out_alike():
    client = Client()
    for _ in range(5):
        sign_in(client, "nobody", "wrong")
    assert sign_in(client, "nobody", "wrong").status_code == 429


def test_the_limit_is_per_username_and_case_does_not_escape_it():
    reviewer("ada")
    reviewer("bo")
    client = Client()
    for name in ("ada", "ADA", "Ada", "ada", "aDa"):
        sign_in(client, name, "wrong")
    assert sign_in(client, "ada", PASSWORD).status_code == 429
    assert sign_in(client, "bo", PASSWORD).status_code == 302  # bo is not held up by ada's failures


def test_a_look_alike_spelling_that_signs_in_as_the_same_user_is_counted_as_them():
    """Sign-in reads a username as Unicode NFKC: full-width or mathematical letters sign in as
    the plain name, so they are counted as it."""
    reviewer("tina")
    client = Client()
    for _ in range(5):
        sign_in(client, "tina", "wrong")
    for look_alike in ("ｔｉｎａ", "𝐭𝐢𝐧𝐚", "TINA"):
        assert sign_in(client, look_alike, PASSWORD).status_code == 429, look_alike
    assert "_auth_user_id" not in client.session


def test_one_address_trying_many_usernames_is_limited_too():
    reviewer("ada")
    client = Client()
    for number in range(50):
        sign_in(client, f"user{number}", "wrong", address="10.9.9.9")
    assert sign_in(client, "ada", PASSWORD, address="10.9.9.9").status_code == 429
    assert sign_in(client, "ada", PASSWORD, address="10.0.0.2").status_code == 302


def test_a_success_forgets_earlier_failures():
    reviewer("ada")
    client = Client()
    for _ in range(4):
        sign_in(client, "ada", "wrong")
    assert sign_in(client, "ada", PASSWORD).status_code == 302
    client.logout()
    for _ in range(4):
        sign_in(client, "ada", "wrong")
    assert sign_in(client, "ada", PASSWORD).status_code == 302


def test_the_lock_ends_with_its_window(monkeypatch):
    from tenants import signin

    clock = [1_000_000.0]
    monkeypatch.setattr(signin, "_now", lambda: clock[0])
    reviewer("ada")
    client = Client()
    for _ in range(5):
        sign_in(client, "ada", "wrong")
    clock[0] += 899
    locked = sign_in(client, "ada", PASSWORD)
    assert locked.status_code == 429
    assert "Try again in 1 minute." in locked.text
    clock[0] += 2
    assert sign_in(client, "ada", PASSWORD).status_code == 302


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("form", ["login", "logout", "approval", "bulk", "cancel"])
def test_every_console_form_needs_its_csrf_token(form):
    from tests.console.test_console import waiting

    run = waiting()
    approval = run.approvals.get()
    client = Client(enforce_csrf_checks=True)
    ada = reviewer("ada", role="admin")
    if form != "login":
        client.force_login(ada)
    path, data = {
        "login": ("/console/login/", {"username": "ada", "password": PASSWORD}),
        "logout": ("/console/logout/", {}),
        "approval": (f"/console/approvals/{approval.pk}/", {"decision": "approve"}),
        "bulk": ("/console/approvals/bulk/", {"decision": "approve", "approval": [str(approval.pk)]}),
        "cancel": (f"/console/runs/{run.pk}/cancel/", {}),
    }[form]
    response = client.post(path, data)
    assert response.status_code == 403
    assert "CSRF" in response.text
    run.refresh_from_db()
    assert run.status == RunStatus.SUSPENDED
    assert not Decision.objects.exists()


def admin_sign_in(client: Client, username: str, password: str, address: str = "10.0.0.1"):
    return client.post("/admin/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def test_the_admins_sign_in_is_limited_too_with_the_same_page():
    from tests.factories import member

    staff = member("sid")
    staff.is_staff = True
    staff.save()
    client = Client()
    for _ in range(5):
        assert admin_sign_in(client, "sid", "wrong").status_code == 200
    locked = admin_sign_in(client, "sid", PASSWORD)
    assert locked.status_code == 429
    assert "Too many failed sign-ins. Try again in 15 minutes." in locked.text
    assert "_auth_user_id" not in client.session
    # The same limiter: the console's form waits too.
    assert sign_in(Client(), "sid", PASSWORD).status_code == 429


def test_failures_on_either_form_count_together():
    reviewer("ada")
    client = Client()
    for _ in range(3):
        sign_in(client, "ada", "wrong")
    for _ in range(2):
        admin_sign_in(client, "ada", "wrong")
    assert sign_in(client, "ada", PASSWORD).status_code == 429
    assert admin_sign_in(client, "ada", PASSWORD).status_code == 429


def test_the_admins_sign_in_still_signs_staff_in_and_forgets_failures():
    from tests.factories import member

    staff = member("sid")
    staff.is_staff = True
    staff.save()
    client = Client()
    admin_sign_in(client, "sid", "wrong")
    signed = admin_sign_in(client, "sid", PASSWORD)
    assert signed.status_code == 302
    assert client.session["_auth_user_id"] == str(staff.pk)
    assert client.get("/admin/login/").status_code == 302  # already signed in: on to the admin
