"""Writing a tenant's webhook, by whoever may change its configuration."""

from typing import Any

from approvals.models import (
    Webhook,
)
from audit.actions import SettingKind, do_delete_setting, do_save_setting
from core.secrets import fingerprint, redact_url
from tenants.authority import check_may_configure

THE_WEBHOOK = "{tenant}'s webhook"


def webhook_snapshot(webhook: Webhook) -> dict[str, Any]:
    """Its URL and whether it is on; of its secrets, only marks that change when they change."""
    snapshot = {
        "url": redact_url(webhook.url),
        "enabled": webhook.enabled,
        "secret": fingerprint(webhook.secret),
    }
    if webhook.previous_secret:
        snapshot["previousSecret"] = fingerprint(webhook.previous_secret)
    return snapshot


WEBHOOK = SettingKind(
    noun="webhook", snapshot=webhook_snapshot, label=lambda webhook: redact_url(webhook.url)
)


def check_save_webhook(webhook: Webhook, *, acting_user, surface: str) -> Webhook:
    """Save a tenant's webhook (valid, as its form checked it), by whoever may change the
    tenant's configuration."""
    tenant = webhook.tenant
    check_may_configure(acting_user, tenant, what=THE_WEBHOOK.format(tenant=tenant.slug), surface=surface)
    return do_save_setting(webhook, kind=WEBHOOK, tenant=tenant, acting_user=acting_user, surface=surface)


def check_delete_webhook(webhook: Webhook, *, acting_user, surface: str) -> None:
    tenant = webhook.tenant
    check_may_configure(acting_user, tenant, what=THE_WEBHOOK.format(tenant=tenant.slug), surface=surface)
    do_delete_setting(webhook, kind=WEBHOOK, tenant=tenant, acting_user=acting_user, surface=surface)
