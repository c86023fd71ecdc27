"""Reviewers are managed here; approvals are shown and decided (never edited); decisions are shown."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import JSONField, OuterRef, Subquery
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Substr
from django.template.response import TemplateResponse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.text import Truncator

from approvals.actions.decisions import CompletionKind, decide_each
from approvals.actions.reviewers import check_remove_reviewer, check_save_reviewer
from approvals.actions.rules import check_delete_rule, check_save_rule
from approvals.actions.webhooks import check_delete_webhook, check_save_webhook
from approvals.models import (
    Approval,
    ApprovalRule,
    Decision,
    DecisionKind,
    Reviewer,
    Webhook,
    WebhookDelivery,
)
from approvals.roles import reviewer_roles
from approvals.rules import RULE_FIELDS, rule_errors
from audit.models import Surface
from core.admin import ReadOnlyAdminMixin, TenantScopedAdminMixin, pretty_json
from core.display import effect_words, json_summary
from core.errors import DomainError
from kindgi.effects import EffectKind
from kindgi.webhooks import SECRET_PREFIX, WebhookVerificationError, secret_key
from tenants.authority import ConfigurationAdminMixin
from tools.models import Tool


class ReviewerForm(forms.ModelForm):
    class Meta:
        model = Reviewer
        fields = ["user", "tenant", "role", "display_name"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["role"] = forms.ChoiceField(choices=[(r, r) for r in reviewer_roles()])

    def clean(self):
        data = super().clean()
        user, tenant = data.get("user"), data.get("tenant")
        membership = getattr(user, "membership", None) if user else None
        if user and tenant and (membership is None or membership.tenant_id != tenant.pk):
            self.add_error("tenant", f"{user} is not a member of {tenant}")
        return data


@admin.register(Reviewer)
class ReviewerAdmin(ConfigurationAdminMixin, admin.ModelAdmin):
    """Reviewers and their roles: a tenant admin's to change, through the same door as the API's
    registration (``check_save_reviewer``), each change an audit entry."""

    form = ReviewerForm
    list_display = ["display_name", "user", "tenant", "role", "updated_at"]
    list_filter = ["tenant", "role"]
    list_select_related = ["user", "tenant"]
    search_fields = ["display_name", "user__username"]
    autocomplete_fields = ["user"]

    def get_readonly_fields(self, request, obj=None):
        return ["user", "tenant"] if obj is not None else []  # a registration is one person's

    def save_model(self, request, obj, form, change):
        saved = check_save_reviewer(
            tenant=obj.tenant,
            user=obj.user,
            role=obj.role,
            display_name=obj.display_name,
            acting_user=request.user,
            surface=Surface.ADMIN,
        )
        obj.pk = saved.pk

    def delete_model(self, request, obj):
        check_remove_reviewer(obj, acting_user=request.user, surface=Surface.ADMIN)

    def delete_queryset(self, request, queryset):
        for reviewer in queryset.select_related("user", "tenant"):
            self.delete_model(request, reviewer)


class DecideForm(forms.Form):
    rationale = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        required=False,
        help_text="Recorded with each decision. A rejection needs one.",
    )


@admin.register(Approval)
class ApprovalAdmin(TenantScopedAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    """A review console too: each row says what the call does and why it waits, and the approve
    and reject actions decide through ``decide_each``, the same door and decision rights as the
    console, the API and the CLI. A staff user who is no reviewer, or whose role is too low, is
    refused here exactly as there. Staff see their own tenant's approvals; superusers every one."""

    list_display = [
        "the_call",
        "touches",
        "for_whom",
        "why_it_waits",
        "status",
        "required_role",
        "tenant",
        "created_at",
    ]
    list_filter = ["status", "tenant", "required_role", "tool_key"]
    list_select_related = ["tenant"]
    search_fields = ["id", "tool_key", "agent_key"]
    actions = ["approve_selected", "reject_selected"]
    fields = [
        "id",
        "tenant",
        "run",
        "call_id",
        "tool_key",
        "tool_version",
        "agent_key",
        "agent_version",
        "arguments_pretty",
        "required_role",
        "required_approvals",
        "approvals_given",
        "status",
        "gate_pretty",
        "expires_at",
        "created_at",
        "decided_at",
    ]
    readonly_fields = fields

    def get_list_display(self, request):
        """Staff see one tenant's approvals: no need to say whose each is."""
        columns = super().get_list_display(request)
        return columns if request.user.is_superuser else [c for c in columns if c != "tenant"]

    def get_queryset(self, request):
        tool_effects = Tool.objects.filter(key=OuterRef("tool_key"), version=OuterRef("tool_version"))
        return (
            super()
            .get_queryset(request)
            .annotate(
                first_message=Substr(KeyTextTransform("userMessage", "run__input"), 1, 2001),
                tool_effects=Subquery(tool_effects.values("effects")[:1], output_field=JSONField()),
            )
        )

    @admin.display(description="the call", ordering="tool_key")
    def the_call(self, obj: Approval) -> str:
        return format_html("<code>{}</code><br><code>{}</code>", obj.tool_key, json_summary(obj.arguments))

    @admin.display(description="what it touches")
    def touches(self, obj: Approval) -> str:
        words = effect_words(getattr(obj, "tool_effects", None) or ())
        return format_html_join(mark_safe("<br>"), "{}", ((sentence,) for sentence in words)) or "-"

    @admin.display(description="for")
    def for_whom(self, obj: Approval) -> str:
        who = obj.agent_key or f"flow {obj.flow_key}, step {obj.node_id}"
        asked = getattr(obj, "first_message", None)
        if not asked:
            return who
        return format_html("{}<br>“{}”", who, Truncator(asked).chars(80))

    @admin.display(description="why it waits")
    def why_it_waits(self, obj: Approval) -> str:
        return (obj.gate or {}).get("reason", "")

    @admin.display(description="arguments")
    def arguments_pretty(self, obj: Approval) -> str:
        return pretty_json(obj.arguments)

    @admin.display(description="gate")
    def gate_pretty(self, obj: Approval) -> str:
        return pretty_json(obj.gate)

    @admin.action(description="Approve selected approvals…")
    def approve_selected(self, request, queryset):
        return self._decide(request, queryset, DecisionKind.APPROVE)

    @admin.action(description="Reject selected approvals…")
    def reject_selected(self, request, queryset):
        return self._decide(request, queryset, DecisionKind.REJECT)

    def _decide(self, request, queryset, decision: str):
        """First a page that lists exactly the calls to decide, with their arguments, and asks for
        a rationale; on its submission, each is decided on its own."""
        chosen = list(queryset.order_by("-created_at"))
        form = DecideForm(request.POST if "decide" in request.POST else None)
        if form.is_bound and form.is_valid():
            outcomes = decide_each(
                acting_user=request.user,
                decisions=[
                    {"approvalId": a.pk, "decision": decision, "rationale": form.cleaned_data["rationale"]}
                    for a in chosen
                ],
            )
            refused = [(pk, outcome) for pk, outcome in outcomes if isinstance(outcome, DomainError)]
            if decided := len(outcomes) - len(refused):
                word = "Approved" if decision == DecisionKind.APPROVE else "Rejected"
                waiting = sum(
                    1
                    for _, outcome in outcomes
                    if not isinstance(outcome, DomainError) and outcome.kind == CompletionKind.PARTIAL
                )
                still = f" ({waiting} still need another reviewer's approval)" if waiting else ""
                self.message_user(request, f"{word} {decided} approval(s){still}.", messages.SUCCESS)
            for pk, error in refused:
                self.message_user(request, f"{pk}: {error}", messages.ERROR)
            return None  # back to the list
        verb = "Approve" if decision == DecisionKind.APPROVE else "Reject"
        context = {
            **self.admin_site.each_context(request),
            "title": f"{verb} {len(chosen)} approval(s)?",
            "opts": self.model._meta,
            "decision": decision,
            "action": f"{decision}_selected",
            "chosen": [(a, json_summary(a.arguments)) for a in chosen],
            "form": form,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/approvals/approval/decide.html", context)


@admin.register(Decision)
class DecisionAdmin(TenantScopedAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["approval", "decision", "reviewer_name", "reviewer_role_at_decision", "decided_at"]
    list_filter = ["decision"]
    list_select_related = ["approval"]
    fields = [
        "approval",
        "decision",
        "rationale",
        "reviewer_name",
        "reviewer_role_at_decision",
        "arguments",
        "decided_at",
    ]
    readonly_fields = fields


class ApprovalRuleForm(forms.ModelForm):
    class Meta:
        model = ApprovalRule
        fields = ["tenant", *RULE_FIELDS, "reviewers"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        kinds = [("", "any")] + [(kind.value, kind.value) for kind in EffectKind]
        self.fields["effect_kind"] = forms.ChoiceField(choices=kinds, required=False)
        roles = [("", "the lowest role")] + [(r, r) for r in reviewer_roles()]
        self.fields["required_role"] = forms.ChoiceField(choices=roles, required=False)

    def clean(self):
        data = super().clean()
        tenant = data.get("tenant")
        if tenant is not None:
            fields = {name: data.get(name) for name in RULE_FIELDS}
            for field, message in rule_errors(fields, tenant=tenant, reviewers=data.get("reviewers")).items():
                if field in self.fields and field not in self.errors:
                    self.add_error(field, message)
        return data


@admin.register(ApprovalRule)
class ApprovalRuleAdmin(ConfigurationAdminMixin, admin.ModelAdmin):
    """Superusers see every tenant's rules; other staff only their own tenant's, and only a tenant
    admin changes them."""

    form = ApprovalRuleForm
    list_display = [
        "name",
        "tenant",
        "tool_pattern",
        "agent_pattern",
        "effect_kind",
        "resource_pattern",
        "condition",
        "gate",
        "required_role",
        "enabled",
    ]
    list_filter = ["tenant", "gate", "enabled"]
    list_select_related = ["tenant"]
    search_fields = ["name", "tool_pattern", "agent_pattern"]
    filter_horizontal = ["reviewers"]

    def save_model(self, request, obj, form, change):
        """Through the one action that writes rules, as the API does."""
        data = form.cleaned_data
        check_save_rule(
            tenant=data["tenant"],
            fields={name: data.get(name) for name in RULE_FIELDS},
            reviewers=data.get("reviewers", []),
            rule=obj,  # the form's instance: new (unsaved) when adding
            acting_user=request.user,
            surface=Surface.ADMIN,
        )

    def delete_model(self, request, obj):
        check_delete_rule(obj, acting_user=request.user, surface=Surface.ADMIN)

    def delete_queryset(self, request, queryset):
        for rule in queryset.select_related("tenant"):
            self.delete_model(request, rule)

    def save_related(self, request, form, formsets, change):
        # The reviewers were saved with the rule; only inlines (none today) remain.
        for formset in formsets:
            self.save_formset(request, form, formset, change=change)


class WebhookForm(forms.ModelForm):
    secret = forms.CharField(
        widget=forms.PasswordInput(render_value=False),
        required=False,
        help_text=(
            "Shared with the receiver to verify signatures: whsec_ and the base64 of 24 to 64 random "
            "bytes, as Standard Webhooks writes them (or any text of 16 characters or more). Leave "
            "empty to keep the current one. A new one replaces it gradually: deliveries carry both "
            "signatures until you forget the previous one."
        ),
    )
    forget_previous_secret = forms.BooleanField(
        label="Forget the previous secret",
        required=False,
        help_text="Stop signing with the secret that was replaced: every receiver uses the new one now.",
    )

    class Meta:
        model = Webhook
        fields = ["tenant", "url", "secret", "forget_previous_secret", "enabled"]

    def clean_secret(self):
        secret = self.cleaned_data.get("secret", "")
        if not secret and self.instance.pk:
            return self.instance.secret
        if secret.startswith(SECRET_PREFIX):
            try:
                key = secret_key(secret)
            except WebhookVerificationError:
                raise forms.ValidationError("after whsec_ comes base64") from None
            if not 24 <= len(key) <= 64:
                raise forms.ValidationError(f"a whsec_ key is 24 to 64 bytes; this one is {len(key)}")
        elif len(secret) < 16:
            raise forms.ValidationError("use at least 16 characters")
        return secret

    def clean(self):
        cleaned = super().clean()
        kept = self.instance.previous_secret if self.instance.pk else ""
        new = bool(self.data.get("secret"))
        if new and cleaned.get("forget_previous_secret"):
            raise forms.ValidationError(
                "Set a new secret, or forget the previous one, not both at once: the receivers need "
                "time to move to a new secret, and while they do deliveries carry both signatures."
            )
        if new and kept:
            raise forms.ValidationError(
                "A secret is being replaced already: forget the previous one first (when every "
                "receiver uses the current one), then set a new one."
            )
        return cleaned

    def save(self, commit=True):
        webhook = super().save(commit=False)
        before = Webhook.objects.filter(pk=webhook.pk).values_list("secret", flat=True).first()
        if before and before != webhook.secret:
            webhook.previous_secret = before  # signed with too, until it is forgotten
        if self.cleaned_data.get("forget_previous_secret"):
            webhook.previous_secret = ""
        if commit:
            webhook.save()
        return webhook


DELIVERY_FIELDS = [
    "event",
    "status",
    "attempts",
    "last_status_code",
    "last_error",
    "next_attempt_at",
    "created_at",
    "delivered_at",
]


class DeliveryInline(TenantScopedAdminMixin, admin.TabularInline):
    model = WebhookDelivery
    fields = DELIVERY_FIELDS
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    ordering = ["-created_at"]


@admin.register(Webhook)
class WebhookAdmin(ConfigurationAdminMixin, admin.ModelAdmin):
    form = WebhookForm
    list_display = ["tenant", "url", "enabled", "updated_at"]
    list_select_related = ["tenant"]
    inlines = [DeliveryInline]

    def save_model(self, request, obj, form, change):
        check_save_webhook(obj, acting_user=request.user, surface=Surface.ADMIN)

    def delete_model(self, request, obj):
        check_delete_webhook(obj, acting_user=request.user, surface=Surface.ADMIN)

    def delete_queryset(self, request, queryset):
        for webhook in queryset.select_related("tenant"):
            self.delete_model(request, webhook)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(TenantScopedAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = [
        "event",
        "webhook",
        "status",
        "attempts",
        "last_status_code",
        "created_at",
        "delivered_at",
    ]
    list_filter = ["status", "event"]
    list_select_related = ["webhook__tenant"]
    fields = ["webhook", "payload", *DELIVERY_FIELDS]
    readonly_fields = fields
