"""`Idempotency-Key`: a POST sent again with its key (its answer lost to the network) gets the
first answer, and nothing is done twice."""

import threading
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone

from approvals.models import Decision
from runs.models import Run
from tenants.idempotency import forget_old_keys
from tenants.models import IdempotencyKey
from tests.factories import reviewer

from .conftest import client_for

START = {"agentId": "acme-ops.status-agent", "input": {"userMessage": "Checkout is back to normal."}}


def start(api, key, body=START):
    return api.post("/api/v1/runs", body, format="json", HTTP_IDEMPOTENCY_KEY=key)


@pytest.mark.django_db(transaction=True)
def test_a_start_sent_twice_with_one_key_starts_one_run_and_answers_the_same(api):
    first = start(api, "start-1")
    again = start(api, "start-1")
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert Run.objects.count() == 1
    assert start(api, "start-2").json()["id"] != first.json()["id"]  # a new key, a new run


@pytest.mark.django_db(transaction=True)
def test_another_request_with_a_used_key_is_409_and_does_nothing(api):
    start(api, "start-1")
    other = start(api, "start-1", {**START, "input": {"userMessage": "Something else."}})
    assert other.status_code == 409
    assert other.json()["error"]["code"] == "conflict"
    assert "'start-1' was sent with another request in the last 24 hours" in other.json()["error"]["message"]
    assert Run.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_decision_sent_twice_with_one_key_decides_once_and_answers_the_same(api):
    start(api, "start-1")
    approval_id = api.get("/api/v1/approvals?status=pending").json()["items"][0]["id"]
    decide = {"decision": "approve", "rationale": "Fine."}
    url = f"/api/v1/approvals/{approval_id}/complete"
    first = api.post(url, decide, format="json", HTTP_IDEMPOTENCY_KEY="decide-1")
    again = api.post(url, decide, format="json", HTTP_IDEMPOTENCY_KEY="decide-1")
    assert (first.status_code, again.status_code) == (200, 200)
    assert again.json() == first.json()
    assert Decision.objects.count() == 1
    # Without the key, deciding again is refused: the key is what made the retry safe.
    assert api.post(url, decide, format="json").status_code == 409


@pytest.mark.django_db(transaction=True)
def test_a_refused_request_lets_its_key_go(api):
    refused = start(api, "start-1", {"agentId": "acme-ops.status-agent", "input": {}})
    assert refused.status_code == 400
    assert not IdempotencyKey.objects.exists()
    assert start(api, "start-1").status_code == 201


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("key", ["", "x" * 256, "clé", "two words"])
def test_a_key_that_is_not_one_is_named(api, key):
    answer = api.post("/api/v1/runs", START, format="json", HTTP_IDEMPOTENCY_KEY=key)
    assert answer.status_code == 400
    assert "Idempotency-Key: 1 to 255 visible ASCII characters" in answer.json()["error"]["message"]
    assert not Run.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_keys_are_each_persons_own_and_forgotten_after_a_day(api):
    mine = start(api, "shared-name")
    theirs = start(client_for(reviewer("bob")), "shared-name")
    assert mine.json()["id"] != theirs.json()["id"]
    assert forget_old_keys().done == []
    assert len(forget_old_keys(now=timezone.now() + timedelta(hours=25)).done) == 2
    assert start(api, "shared-name").json()["id"] != mine.json()["id"]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_requests_at_once_with_one_key_start_one_run_and_get_one_answer():
    assert connection.vendor == "postgresql"
    from rest_framework.test import APIClient

    from tenants.tokens import do_create_token

    _, token = do_create_token(user=reviewer("ada"))  # one client's token, its two connections
    clients = [APIClient(), APIClient()]
    for api in clients:
        api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    together = threading.Barrier(2)
    answers = []

    def send(api):
        try:
            together.wait()
            answers.append(start(api, "at-once"))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=send, args=(api,)) for api in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert [answer.status_code for answer in answers] == [201, 201]
    assert answers[0].json() == answers[1].json()
    assert Run.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_key_is_its_tokens_own_another_token_of_the_same_account_is_refused():
    """Two tokens of one account may stand for different people: one's answer is not the other's."""
    ada = reviewer("ada")
    first = start(client_for(ada), "shared")
    other = start(client_for(ada), "shared")
    assert first.status_code == 201
    assert other.status_code == 409
    assert Run.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_first_request_not_answered_yet_is_never_taken_over(api, monkeypatch):
    """Its work may still be going on (a run executing within the request): a retry is told to
    come back, however old the first is, and nothing is started twice."""
    from tenants import idempotency

    monkeypatch.setattr(idempotency, "WAIT_SECONDS", 0.2)
    start(api, "busy")
    IdempotencyKey.objects.update(
        status_code=None, response=None, created_at=timezone.now() - timedelta(hours=1)
    )
    again = start(api, "busy")
    assert (again.status_code, again.json()["error"]["code"]) == (409, "idempotency_key_in_use")
    assert "the first request with 'busy' is still being answered" in again.json()["error"]["message"]
    assert Run.objects.count() == 1
