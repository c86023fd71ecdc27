"""What mailboxes are to runs: the "connection" a mail tool acts through is its owner's own
mailboxes (for ``runs.connection_sources``); in a run a mail started, the one that received it."""

from collections.abc import Mapping
from functools import partial

from django.contrib.auth import get_user_model

from kindgi import ToolConnection
from mail.access import MailboxAccess
from mail.actions import MAILBOX_APP
from runs.models import Run, Trigger


class MailboxConnections:
    built_in_apps = (MAILBOX_APP,)

    def connections(self, run: Run, owners: Mapping[str, str]) -> dict[str, ToolConnection]:
        owner_id = owners.get(MAILBOX_APP)
        if owner_id is None:
            return {}
        owner = get_user_model().objects.filter(pk=owner_id, is_active=True).first()
        if owner is None:
            return {}
        mail = (run.input or {}).get("mail") if run.trigger == Trigger.MAIL else None
        address = mail.get("mailbox") if isinstance(mail, dict) else None
        access = partial(
            MailboxAccess, owner_id=owner.pk, tenant_id=run.tenant_id, run_id=run.pk, address=address
        )
        return {MAILBOX_APP: ToolConnection(app=MAILBOX_APP, owner=owner.get_username(), open_client=access)}

    def app_names(self, tenant_id) -> list[str]:
        return [MAILBOX_APP]
