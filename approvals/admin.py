"""Reviewers are managed here; approvals and decisions are shown, never edited."""

from django import forms
from django.contrib import admin

from approvals.actions import check_save_rule
from approvals.models import Approval, ApprovalRule, Decision, Reviewer, Webhook, WebhookDelivery
from approvals.roles import reviewer_roles
from approvals.rules import RULE_FIELDS, rule_errors
from core.admin import ReadOnlyAdminMixin, pretty_json
from kindgi.effects import EffectKind
from tenants.models import Tenant


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
class ReviewerAdmin(admin.ModelAdmin):
    form = ReviewerForm
    list_display = ["display_name", "user", "tenant", "role", "updated_at"]
    list_filter = ["tenant", "role"]
    search_fields = ["display_name", "user__username"]
    autocomplete_fields = ["user"]


@admin.register(Approval)
class ApprovalAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["title", "tenant", "agent_key", "status", "required_role", "created_at", "decided_at"]
    list_filter = ["status", "tenant", "required_role", "tool_key"]
    list_select_related = ["tenant"]
    search_fields = ["id", "tool_key", "agent_key"]
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
        "status",
        "gate_pretty",
        "expires_at",
        "created_at",
        "decided_at",
    ]
    readonly_fields = fields

    @admin.display(description="arguments")
    def arguments_pretty(self, obj: Approval) -> str:
        return pretty_json(obj.arguments)

    @admin.display(description="gate")
    def gate_pretty(self, obj: Approval) -> str:
        return pretty_json(obj.gate)


@admin.register(Decision)
class DecisionAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
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
class ApprovalRuleAdmin(admin.ModelAdmin):
    """Superusers see every tenant's rules; other staff only their own tenant's."""

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
        )

    def save_related(self, request, form, formsets, change):
        # The reviewers were saved with the rule; only inlines (none today) remain.
        for formset in formsets:
            self.save_formset(request, form, formset, change=change)

    def get_queryset(self, request):
        rules = super().get_queryset(request)
        if request.user.is_superuser:
            return rules
        membership = getattr(request.user, "membership", None)
        return rules.filter(tenant=membership.tenant) if membership else rules.none()

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "tenant" and not request.user.is_superuser:
            membership = getattr(request.user, "membership", None)
            kwargs["queryset"] = Tenant.objects.filter(pk=membership.tenant_id if membership else None)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class WebhookForm(forms.ModelForm):
    secret = forms.CharField(
        widget=forms.PasswordInput(render_value=False),
        required=False,
        help_text="Shared with the receiver to verify signatures. Leave empty to keep the current one.",
    )

    class Meta:
        model = Webhook
        fields = ["tenant", "url", "secret", "enabled"]

    def clean_secret(self):
        secret = self.cleaned_data.get("secret", "")
        if not secret and self.instance.pk:
            return self.instance.secret
        if len(secret) < 16:
            raise forms.ValidationError("use at least 16 characters")
        return secret


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


class DeliveryInline(admin.TabularInline):
    model = WebhookDelivery
    fields = DELIVERY_FIELDS
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    ordering = ["-created_at"]


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    form = WebhookForm
    list_display = ["tenant", "url", "enabled", "updated_at"]
    inlines = [DeliveryInline]


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
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
