"""The Passkeys page: a person sees and removes only their own; odd input is said, never a 500.
(Registering one takes a browser: tests/browser/test_passkey_step_up.py.)"""

import pytest
from django.test import Client

from tenants.models import Passkey
from tests.factories import member

PASSWORD = "a-long-test-password"

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_person_removes_only_their_own_passkey():
    ada, bo = member("ada"), member("bo")
    theirs = Passkey.objects.create(user=bo, name="bo's laptop", credential_id="Ym8", public_key=b"k")
    mine = Passkey.objects.create(user=ada, name="laptop", credential_id="YWRh", public_key=b"k")
    client = signed_in(ada)
    page = client.get("/console/passkeys/").text
    assert "laptop" in page
    assert "bo&#x27;s laptop" not in page
    for chosen in (str(theirs.pk), "abc", "²", "9" * 40, ""):
        answer = client.post(
            "/console/passkeys/", {"action": "remove", "passkey": chosen, "password": PASSWORD}, follow=True
        )
        assert answer.status_code == 200
        assert "You have no such passkey." in answer.text
    # A session alone (stolen, or driven by an agent) removes nothing: the password is asked again.
    for password in ("", "wrong"):
        answer = client.post(
            "/console/passkeys/",
            {"action": "remove", "passkey": str(mine.pk), "password": password},
            follow=True,
        )
        assert "Your password was not right: nothing changed." in answer.text
    assert Passkey.objects.count() == 2
    client.post("/console/passkeys/", {"action": "remove", "passkey": str(mine.pk), "password": PASSWORD})
    assert list(Passkey.objects.values_list("name", flat=True)) == ["bo's laptop"]


def test_a_registration_without_its_challenge_or_with_a_bad_answer_registers_nothing():
    client = signed_in(member("ada"))
    bare = {"action": "register", "name": "x", "credential": "{}", "password": PASSWORD}
    assert (
        "Your password was not right"
        in client.post("/console/passkeys/", bare | {"password": "x"}, follow=True).text
    )
    answer = client.post("/console/passkeys/", bare, follow=True)
    assert "Start again" in answer.text
    options = client.post("/console/passkeys/", {"action": "options"})
    assert options.status_code == 200
    assert options.json()["rp"]["id"] == "testserver"
    answer = client.post(
        "/console/passkeys/",
        {"action": "register", "name": "x", "credential": '{"id": 1}', "password": PASSWORD},
        follow=True,
    )
    assert "No passkey was registered: the passkey was not made" in answer.text
    assert client.post("/console/passkeys/", {"action": "steal"}).status_code == 400
    assert not Passkey.objects.exists()
