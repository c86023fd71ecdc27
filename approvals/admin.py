"""Reviewers are managed here; approvals and decisions are shown, never edited."""

from django import forms
from django.contrib import admin

from approvals.models import Approval, Decision, Reviewer
from approvals.roles import reviewer_roles
from kindgi_site.display import pretty_json


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


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Approval)
class ApprovalAdmin(ReadOnlyAdmin):
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
class DecisionAdmin(ReadOnlyAdmin):
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
