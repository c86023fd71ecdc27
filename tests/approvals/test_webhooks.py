import base64
import hashlib
import hmac
import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from approvals.actions.decisions import check_complete_approval
from approvals.models import Webhook, WebhookDelivery
from approvals.webhooks import deliver_due_webhooks
from runs.actions import check_start_run
from tests.factories import default_tenant, other_tenant, principal, reviewer
from tests.receiver import Receiver

pytestmark = pytest.mark.django_db(transaction=True)
SECRET = "a-shared-secret-of-some-length"


@pytest.fixture
def receiver(settings):
    settings.KINDGI_WEBHOOK_BACKOFF_SECONDS = 10
    with Receiver() as server:
        Webhook.objects.create(tenant=default_tenant(), url=server.url, secret=SECRET)
        yield server


def start_status_run(tenant=None):
    return check_start_run(
        tenant=tenant or default_tenant(),
        principal=principal(tenant or default_tenant()),
        agent_id="acme-ops.status-agent",
        input={"userMessage": "Up."},
    )


def verified(message: dict) -> dict:
    expected = "sha256=" + hmac.new(SECRET.encode(), message["body"], hashlib.sha256).hexdigest()
    assert hmac.compare_digest(message["headers"]["X-Kindgi-Signature"], expected)
    return json.loads(message["body"])


def test_created_and_decided_events_are_signed_and_sent(receiver):
    run = start_status_run()
    approval = run.approvals.get()
    check_complete_approval(
        approval_id=approval.pk, acting_user=reviewer("ada"), decision="approve", rationale="ok"
    )
    created, decided = (verified(message) for message in receiver.received)
    assert created["event"] == "approval.created"
    assert created["data"]["approval"]["id"] == str(approval.pk)
    assert created["data"]["approval"]["status"] == "pending"
    assert created["data"]["approval"]["subjectRef"]["arguments"] == {"message": "Up."}
    assert decided["event"] == "approval.decided"
    assert decided["data"]["approval"]["status"] == "approved"
    assert decided["data"]["decision"]["reviewer"] == "Ada"
    assert receiver.received[0]["headers"]["X-Kindgi-Event"] == "approval.created"
    assert receiver.received[0]["headers"]["X-Kindgi-Delivery"] == created["id"]
    assert set(WebhookDelivery.objects.values_list("status", "attempts")) == {("succeeded", 1)}


def test_a_request_for_changes_is_sent_as_a_decision_and_the_new_call_as_a_new_approval(receiver):
    run = start_status_run()
    approval = run.approvals.get()
    check_complete_approval(
        approval_id=approval.pk, acting_user=reviewer("ada"), decision="request_changes", rationale="Say more"
    )
    _created, decided, created_again = (verified(message) for message in receiver.received)
    assert decided["event"] == "approval.decided"
    assert decided["data"]["approval"]["status"] == "changes_requested"
    assert decided["data"]["decision"]["decision"] == "request_changes"
    assert decided["data"]["decision"]["rationale"] == "Say more"
    assert created_again["event"] == "approval.created"
    assert created_again["data"]["approval"]["subjectRef"]["arguments"] == {"message": "Say more"}


def test_a_failed_delivery_is_retried_with_backoff_until_it_succeeds(receiver):
    receiver.statuses = [500, 502]
    start_status_run()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code, delivery.last_error) == (
        "pending",
        1,
        500,
        "HTTP 500",
    )
    first_wait = delivery.next_attempt_at - timezone.now()
    assert timedelta(seconds=5) < first_wait <= timedelta(seconds=10)
    assert deliver_due_webhooks() == 0  # not due yet
    assert deliver_due_webhooks(now=timezone.now() + timedelta(seconds=11)) == 0
    delivery.refresh_from_db()
    assert (delivery.attempts, delivery.last_status_code) == (2, 502)
    assert timedelta(seconds=15) < delivery.next_attempt_at - timezone.now() <= timedelta(seconds=20)
    assert deliver_due_webhooks(now=timezone.now() + timedelta(seconds=21)) == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("succeeded", 3)
    assert len(receiver.received) == 3
    assert len({message["headers"]["X-Kindgi-Delivery"] for message in receiver.received}) == 1


def test_a_delivery_gives_up_after_the_last_attempt(receiver, settings):
    settings.KINDGI_WEBHOOK_MAX_ATTEMPTS = 2
    receiver.statuses = [500, 500]
    start_status_run()
    deliver_due_webhooks(now=timezone.now() + timedelta(minutes=5))
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.next_attempt_at) == ("failed", 2, None)
    assert deliver_due_webhooks(now=timezone.now() + timedelta(days=1)) == 0


def test_an_unreachable_receiver_is_recorded_and_retried(settings):
    Webhook.objects.create(tenant=default_tenant(), url="http://127.0.0.1:9/nothing", secret=SECRET)
    start_status_run()
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == "pending"
    assert delivery.last_error.startswith("URLError: ")
    assert "refused" in delivery.last_error.lower()


def test_only_the_tenants_own_webhook_hears_its_events(receiver):
    start_status_run(tenant=other_tenant())
    assert receiver.received == []
    assert not WebhookDelivery.objects.exists()


def test_a_disabled_webhook_is_sent_nothing(receiver):
    Webhook.objects.update(enabled=False)
    start_status_run()
    assert receiver.received == []


def test_the_command_sends_due_retries(receiver, capsys):
    receiver.statuses = [500]
    start_status_run()
    WebhookDelivery.objects.update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    call_command("deliver_webhooks")
    assert "Delivered 1 webhook(s)." in capsys.readouterr().out


def test_the_admin_never_shows_the_secret_and_lists_deliveries(admin_client, receiver):
    start_status_run()
    webhook = Webhook.objects.get()
    page = admin_client.get(reverse("admin:approvals_webhook_change", args=[webhook.pk]))
    assert SECRET not in page.text
    assert "approval.created" in page.text
    # saving without a new secret keeps the old one; a short one is refused
    form = {
        "tenant": webhook.tenant_id,
        "url": webhook.url,
        "secret": "",
        "enabled": "on",
        "deliveries-TOTAL_FORMS": "0",
        "deliveries-INITIAL_FORMS": "1",
        "deliveries-MIN_NUM_FORMS": "0",
        "deliveries-MAX_NUM_FORMS": "0",
    }
    assert (
        admin_client.post(reverse("admin:approvals_webhook_change", args=[webhook.pk]), form).status_code
        == 302
    )
    assert Webhook.objects.get().secret == SECRET
    refused = admin_client.post(
        reverse("admin:approvals_webhook_change", args=[webhook.pk]), form | {"secret": "short"}
    )
    assert "use at least 16 characters" in refused.text


def test_a_retry_the_queue_does_not_take_is_still_recorded_and_swept(receiver, monkeypatch):
    """With a queue in Redis that does not answer, the failed attempt is recorded all the same
    and the sweeps deliver the retry when it is due."""
    from approvals import webhooks

    class Unanswering:
        supports_defer = True

    def refused(*args, **kwargs):
        raise ConnectionError("Redis does not answer")

    monkeypatch.setattr(webhooks, "default_task_backend", Unanswering())
    monkeypatch.setattr(type(webhooks.deliver_webhook), "using", lambda self, **options: refused())
    receiver.statuses = [500]
    start_status_run()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("pending", 1, 500)
    monkeypatch.undo()
    assert deliver_due_webhooks(now=timezone.now() + timedelta(seconds=11)) == 1


# Standard Webhooks: what a receiver's own library verifies, and what it refuses.

# The admin's change form posts its (read-only) deliveries' inline too.
DELIVERIES_INLINE = {
    "deliveries-TOTAL_FORMS": "0",
    "deliveries-INITIAL_FORMS": "0",
    "deliveries-MIN_NUM_FORMS": "0",
    "deliveries-MAX_NUM_FORMS": "0",
}


def test_a_delivery_is_verified_by_the_standard_webhooks_library_itself(receiver):
    from standardwebhooks import Webhook as StandardWebhook

    from kindgi.webhooks import as_standard_secret

    start_status_run()
    (message,) = receiver.received
    event = StandardWebhook(as_standard_secret(SECRET)).verify(message["body"], message["headers"])
    assert event["event"] == "approval.created"
    headers = {name.lower(): value for name, value in message["headers"].items()}
    assert headers["webhook-id"] == event["id"]  # the same for every attempt of one delivery
    assert abs(int(headers["webhook-timestamp"]) - timezone.now().timestamp()) < 60


def test_a_delivery_replayed_after_six_minutes_is_refused(receiver):
    from kindgi.webhooks import WebhookVerificationError, verify

    start_status_run()
    (message,) = receiver.received
    signed_at = int({name.lower(): value for name, value in message["headers"].items()}["webhook-timestamp"])
    assert (
        verify(message["headers"], message["body"], SECRET, now=signed_at + 60)["event"] == "approval.created"
    )
    with pytest.raises(WebhookVerificationError, match="signed 360 s ago, more than 300 s: a replay"):
        verify(message["headers"], message["body"], SECRET, now=signed_at + 360)
    with pytest.raises(WebhookVerificationError, match="no signature matches"):
        verify(message["headers"], message["body"].replace(b"approval.created", b"approval.decided"), SECRET)


def test_while_a_secret_is_replaced_deliveries_carry_both_signatures(receiver, admin_client):
    from standardwebhooks import Webhook as StandardWebhook
    from standardwebhooks import WebhookVerificationError as StandardRefusal

    from kindgi.webhooks import as_standard_secret

    webhook = Webhook.objects.get()
    new_secret = "whsec_" + base64.b64encode(b"k" * 32).decode()
    change = reverse("admin:approvals_webhook_change", args=[webhook.pk])
    form = {
        "tenant": webhook.tenant_id,
        "url": webhook.url,
        "secret": new_secret,
        "enabled": "on",
        **DELIVERIES_INLINE,
    }
    assert admin_client.post(change, form).status_code == 302
    start_status_run()
    (message,) = receiver.received
    headers = {name.lower(): value for name, value in message["headers"].items()}
    assert len(headers["webhook-signature"].split()) == 2
    for secret in (new_secret, as_standard_secret(SECRET)):  # a receiver on either verifies
        assert (
            StandardWebhook(secret).verify(message["body"], message["headers"])["event"] == "approval.created"
        )

    form = {**form, "secret": "", "forget_previous_secret": "on"}
    assert admin_client.post(change, form).status_code == 302
    receiver.received.clear()
    start_status_run()
    (message,) = receiver.received
    assert StandardWebhook(new_secret).verify(message["body"], message["headers"])
    with pytest.raises(StandardRefusal):
        StandardWebhook(as_standard_secret(SECRET)).verify(message["body"], message["headers"])


@pytest.mark.parametrize(
    ("secret", "said"),
    [
        ("whsec_not base64!", "after whsec_ comes base64"),
        ("whsec_" + base64.b64encode(b"short").decode(), "a whsec_ key is 24 to 64 bytes; this one is 5"),
        ("too-short", "use at least 16 characters"),
    ],
)
def test_a_secret_that_is_not_one_is_named_and_nothing_changes(receiver, admin_client, secret, said):
    webhook = Webhook.objects.get()
    change = reverse("admin:approvals_webhook_change", args=[webhook.pk])
    answer = admin_client.post(
        change, {"tenant": webhook.tenant_id, "url": webhook.url, "secret": secret, **DELIVERIES_INLINE}
    )
    assert answer.status_code == 200
    assert said in answer.content.decode()
    webhook.refresh_from_db()
    assert (webhook.secret, webhook.previous_secret) == (SECRET, "")


def test_a_secret_saved_before_secrets_were_checked_fails_its_delivery_and_holds_up_no_other(receiver):
    Webhook.objects.update(secret="whsec_not base64 at all!")
    start_status_run()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("pending", 1)
    assert delivery.last_error.startswith("the webhook's secret: ")
    assert receiver.received == []


@pytest.mark.parametrize(
    ("previous", "posted", "said"),
    [
        ("", {"forget_previous_secret": "on"}, "Set a new secret, or forget the previous one, not both"),
        ("an-older-secret-of-some-length", {}, "A secret is being replaced already"),
    ],
)
def test_a_rotation_that_would_drop_a_secret_receivers_use_is_refused(
    receiver, admin_client, previous, posted, said
):
    webhook = Webhook.objects.get()
    Webhook.objects.update(previous_secret=previous)
    change = reverse("admin:approvals_webhook_change", args=[webhook.pk])
    form = {
        "tenant": webhook.tenant_id,
        "url": webhook.url,
        "secret": "whsec_" + base64.b64encode(b"n" * 32).decode(),
        **DELIVERIES_INLINE,
        **posted,
    }
    answer = admin_client.post(change, form)
    assert answer.status_code == 200
    assert said in answer.content.decode()
    webhook.refresh_from_db()
    assert (webhook.secret, webhook.previous_secret) == (SECRET, previous)


def test_the_deprecated_signature_is_keyed_with_the_secrets_text_as_before(receiver):
    new_secret = "whsec_" + base64.b64encode(b"k" * 32).decode()
    Webhook.objects.update(secret=new_secret)
    start_status_run()
    (message,) = receiver.received
    expected = "sha256=" + hmac.new(new_secret.encode(), message["body"], hashlib.sha256).hexdigest()
    assert message["headers"]["X-Kindgi-Signature"] == expected
