"""Mail from a provider's inbound webhook (django-anymail: Mailgun, its signature checked by
anymail before this runs), taken through the same door as the SMTP receiver's."""

import logging

from anymail.signals import inbound
from anymail.webhooks.mailgun import MailgunInboundWebhookView
from django.conf import settings
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from core.api.errors import error_body
from mail.actions import receive_mail

logger = logging.getLogger("kindgi.mail")


@receiver(inbound, dispatch_uid="kindgi-mail-inbound")
def take_inbound_mail(sender, event, esp_name, **kwargs) -> None:
    message = event.message
    recipients = (
        [message.envelope_recipient] if message.envelope_recipient else [a.addr_spec for a in message.to]
    )
    raw = message.as_bytes()
    for recipient in recipients:
        answer = receive_mail(raw, recipient=recipient, envelope_sender=message.envelope_sender)
        logger.info("inbound mail from %s to %s: %s", esp_name, recipient, answer)


@csrf_exempt
def mailgun_inbound(request: HttpRequest) -> HttpResponse:
    """Mailgun's inbound route ("forward" to this URL, raw MIME or parsed): there only when its
    webhook signing key is set (KINDGI_MAILGUN_WEBHOOK_SIGNING_KEY); anymail refuses a request
    whose signature does not match it, with 400."""
    if not settings.ANYMAIL.get("MAILGUN_WEBHOOK_SIGNING_KEY"):
        return JsonResponse(
            error_body("not_found", "inbound mail from Mailgun is not set up here"), status=404
        )
    return MailgunInboundWebhookView.as_view()(request)
