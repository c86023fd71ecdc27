"""Mailboxes in the admin (validated by the same checks as the API's), and the mail they took
and refused, to look at."""

from django import forms
from django.contrib import admin, messages

from audit.models import Surface
from core.admin import ReadOnlyAdminMixin, TenantScopedAdminMixin
from mail.actions import MAILBOX_FIELDS, check_delete_mailbox, check_save_mailbox, mailbox_errors
from mail.models import Mailbox, MailMessage, MailRefusal
from tenants.authority import ConfigurationAdminMixin

# Anyone can write any From header (and any envelope sender): only a DKIM signature proves one.
FORGEABLE_SENDERS = (
    "This mailbox lets in only the senders it lists, but does not require DKIM: the From header "
    "and the envelope sender can be forged, so anyone can send as a listed sender. Require DKIM "
    "to trust the list."
)


class MailboxForm(forms.ModelForm):
    class Meta:
        model = Mailbox
        fields = ["tenant", *MAILBOX_FIELDS]
        help_texts = {
            "allowed_senders": (
                f"{Mailbox._meta.get_field('allowed_senders').help_text} Both the From header and "
                "the envelope sender must match. Without DKIM required, either can be forged."
            ),
        }

    def clean(self):
        data = super().clean()
        tenant, owner = data.get("tenant"), data.get("owner")
        if tenant is None or owner is None:
            return data
        fields = {name: data.get(name) for name in MAILBOX_FIELDS}
        fields["owner"] = owner.get_username()
        fields["allowed_senders"] = fields["allowed_senders"] or []
        errors, _ = mailbox_errors(fields, tenant=tenant, mailbox=self.instance if self.instance.pk else None)
        if errors:
            raise forms.ValidationError(errors)
        data["address"] = data["address"].strip().lower()
        return data


@admin.register(Mailbox)
class MailboxAdmin(ConfigurationAdminMixin, admin.ModelAdmin):
    form = MailboxForm
    list_display = ["address", "tenant", "owner", "agent_key", "flow_key", "require_dkim", "enabled"]
    list_filter = ["tenant", "enabled", "require_dkim"]
    list_select_related = ["tenant", "owner"]
    search_fields = ["address"]
    autocomplete_fields = ["owner"]

    def save_model(self, request, obj, form, change):
        fields = {name: form.cleaned_data[name] for name in MAILBOX_FIELDS}
        fields["owner"] = fields["owner"].get_username()
        check_save_mailbox(
            tenant=form.cleaned_data["tenant"],
            fields=fields,
            mailbox=obj,
            acting_user=request.user,
            surface=Surface.ADMIN,
        )
        if fields["allowed_senders"] and not fields["require_dkim"]:
            self.message_user(request, FORGEABLE_SENDERS, level=messages.WARNING)

    def delete_model(self, request, obj):
        check_delete_mailbox(obj, acting_user=request.user, surface=Surface.ADMIN)

    def delete_queryset(self, request, queryset):
        for mailbox in queryset.select_related("tenant", "owner"):
            self.delete_model(request, mailbox)


@admin.register(MailMessage)
class MailMessageAdmin(TenantScopedAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["subject", "mailbox", "direction", "from_address", "run", "created_at"]
    list_filter = ["direction", "mailbox"]
    list_select_related = ["mailbox", "run"]
    search_fields = ["subject", "from_address", "message_id"]
    exclude = ["html"]


@admin.register(MailRefusal)
class MailRefusalAdmin(TenantScopedAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["mailbox", "reason", "smtp_code", "sender", "subject", "created_at"]
    list_filter = ["reason", "mailbox"]
    list_select_related = ["mailbox"]
