"""The console's rules page: the tenant's rules, and a draft (new, or an edit of one) simulated
against the recorded calls before a tenant admin saves it."""

import json

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone

from approvals.actions.rules import check_save_rule
from approvals.exceptions import ApprovalInputError
from approvals.models import ApprovalRule, Reviewer
from approvals.roles import reviewer_roles
from approvals.rules import MAX_REQUIRED_APPROVALS, RULE_FIELDS, rule_errors
from approvals.simulator import OUTCOMES, WOULD, draft_rule, simulate
from audit.models import Surface
from core.bounds import SECONDS_MAX, SEQUENCE_MAX
from kindgi.effects import EffectKind
from runs.engine.budgets import Budget
from runs.engine.sequences import AFTER_KEYS, CONVERSATION, RUN, After
from tenants.authority import configure_refusal
from tenants.exceptions import ConfigurationForbiddenError

WINDOWS = {"7": 7, "30": 30, "90": 90}
NEW_RULE_ID = 2**62  # newer than any saved rule: ties of precedence go to the older


class DraftForm(forms.Form):
    """A rule's fields, checked by ``rule_errors`` as the admin and the API check them."""

    rule = forms.IntegerField(required=False, min_value=1, max_value=SEQUENCE_MAX, widget=forms.HiddenInput)
    name = forms.CharField(max_length=200)
    enabled = forms.BooleanField(required=False, initial=True)
    tool_pattern = forms.CharField(max_length=200, required=False, initial="*", help_text="e.g. acme-ops.*")
    agent_pattern = forms.CharField(max_length=200, required=False, initial="*")
    effect_kind = forms.ChoiceField(required=False)
    resource_pattern = forms.CharField(max_length=200, required=False)
    condition = forms.CharField(max_length=500, required=False, help_text="e.g. /amountCents > 10000")
    gate = forms.ChoiceField(choices=[(gate, gate) for gate in ApprovalRule.Gate.values])
    required_role = forms.ChoiceField(required=False)
    ttl_seconds = forms.IntegerField(
        required=False, min_value=1, max_value=SECONDS_MAX, label="Waits at most (seconds)"
    )
    reason = forms.CharField(max_length=500, required=False)
    required_approvals = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_REQUIRED_APPROVALS,
        initial=1,
        label="Approvals needed",
        help_text="from distinct reviewers; any one rejection rejects",
    )
    step_up = forms.BooleanField(
        required=False,
        label="Ask for a passkey",
        help_text="the reviewer confirms with their passkey before deciding; no API token or CLI decides",
    )
    escalation = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text='steps while it waits, e.g. [{"afterSeconds": 60, "raiseRole": "senior"}, '
        '{"afterSeconds": 120, "expire": true}]',
    )
    after_kind = forms.ChoiceField(
        required=False,
        label="Only after",
        choices=[
            ("", "whatever ran before"),
            ("outsideData", "a call read outside data"),
            ("effect", "a call with an effect of the kind"),
            ("toolPattern", "a call of the tools"),
        ],
    )
    after_value = forms.CharField(
        required=False,
        max_length=200,
        label="Kind or tools",
        help_text="for the last two: an effect kind (e.g. network) or a glob on tool ids (e.g. mail.*)",
    )
    after_scope = forms.ChoiceField(
        required=False,
        label="Looking back over",
        choices=[(RUN, "the run"), (CONVERSATION, "the conversation (its earlier turns too)")],
        initial=RUN,
    )
    budget = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text='a total across the calls it matches, e.g. {"scope": "run", "sumOf": "/amountCents", '
        '"maxSum": 100000, "overBudget": "always_ask"}',
    )
    days = forms.ChoiceField(
        choices=[(d, f"last {d} days") for d in WINDOWS], initial="30", label="Judge calls of the"
    )

    def __init__(self, *args, tenant, **kwargs):
        super().__init__(*args, **kwargs)
        self.tenant = tenant
        self.fields["effect_kind"].choices = [("", "any")] + [(kind.value, kind.value) for kind in EffectKind]
        self.fields["required_role"].choices = [("", "the lowest role")] + [(r, r) for r in reviewer_roles()]

    def clean_escalation(self) -> list:
        text = self.cleaned_data.get("escalation", "").strip()
        if not text:
            return []
        try:
            return json.loads(text)
        except ValueError as error:
            raise forms.ValidationError(f"not JSON: {error}") from None

    def clean_budget(self) -> dict | None:
        text = self.cleaned_data.get("budget", "").strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError as error:
            raise forms.ValidationError(f"not JSON: {error}") from None

    def clean_required_approvals(self) -> int:
        return self.cleaned_data.get("required_approvals") or 1

    def clean(self):
        data = super().clean()
        data["after"] = _after_of(data)
        fields = {name: data.get(name) for name in RULE_FIELDS}
        for field, message in rule_errors(fields, tenant=self.tenant).items():
            field = "after_kind" if field == "after" else field
            if field in self.fields and field not in self.errors:
                self.add_error(field, message)
        rule_id = data.get("rule")
        if rule_id is not None and not ApprovalRule.objects.filter(pk=rule_id, tenant=self.tenant).exists():
            self.add_error("rule", f"there is no rule {rule_id}")
        return data

    @property
    def rule_fields(self) -> dict:
        return {name: self.cleaned_data.get(name) for name in RULE_FIELDS}


def _after_of(data: dict) -> dict | None:
    """The form's three fields for ``after`` as a rule holds it (None: whatever ran before)."""
    kind = data.get("after_kind") or ""
    if not kind:
        return None
    value = True if kind == "outsideData" else (data.get("after_value") or "").strip()
    return {kind: value, "scope": data.get("after_scope") or RUN}


def _editing_initial(rule: ApprovalRule) -> dict:
    initial = {"rule": rule.pk, **{name: getattr(rule, name) for name in RULE_FIELDS if name != "after"}}
    initial["escalation"] = json.dumps(rule.escalation) if rule.escalation else ""
    initial["budget"] = json.dumps(rule.budget) if rule.budget else ""
    if rule.after:
        kind = next(key for key in AFTER_KEYS if key in rule.after)
        initial["after_kind"] = kind
        initial["after_value"] = "" if kind == "outsideData" else rule.after[kind]
        initial["after_scope"] = rule.after.get("scope", RUN)
    return initial


def described_budget(rule: ApprovalRule) -> str:
    """The rule's budget in words: "at most 100,000 of /amountCents in this run, then always_ask"."""
    if not rule.budget:
        return ""
    budget = Budget.from_json(rule.budget)
    most = []
    if budget.max_calls is not None:
        most.append(f"{budget.max_calls:,} calls")
    if budget.sum_of:
        most.append(f"{budget.max_sum:,} of {budget.sum_of}")
    return f"at most {' and '.join(most)} {budget.where()}, then {budget.over_budget}"


def described_after(rule: ApprovalRule) -> str:
    """What the rule must see run before a call, in words ("" for a rule without ``after``)."""
    return After.from_json(rule.after).describe() if rule.after else ""


@login_required
def rules_page(request: HttpRequest) -> HttpResponse:
    membership = getattr(request.user, "membership", None)
    is_reviewer = membership is not None and Reviewer.objects.filter(user=request.user).exists()
    if membership is None or not (is_reviewer or membership.is_tenant_admin):
        return render(request, "console/not_a_reviewer.html", {"membership": membership}, status=403)
    tenant = membership.tenant
    rules = list(ApprovalRule.objects.filter(tenant=tenant).order_by("name", "pk"))
    for rule in rules:
        rule.after_text = described_after(rule)
        rule.budget_text = described_budget(rule)
    data = request.POST if request.method == "POST" else (request.GET if "name" in request.GET else None)
    rule_id = (data or {}).get("rule") or request.GET.get("edit")
    editing = next((rule for rule in rules if str(rule.pk) == str(rule_id)), None)
    form = DraftForm(data, tenant=tenant, initial=_editing_initial(editing) if editing else None)
    simulation = None
    if form.is_bound and form.is_valid():
        replacing = form.cleaned_data.get("rule")
        if request.method == "POST":
            return _save(request, form, tenant, replacing, membership)
        draft = (
            draft_rule(form.rule_fields, rule_id=replacing or NEW_RULE_ID)
            if form.cleaned_data["enabled"]
            else None
        )
        simulation = simulate(
            tenant, draft, replacing=replacing, days=WINDOWS[form.cleaned_data["days"]], now=timezone.now()
        )
    context = {
        "rules": rules,
        "form": form,
        "simulation": simulation,
        "outcomes": list(OUTCOMES.values()),
        "would": list(WOULD.values()),
        "can_save": configure_refusal(request.user, tenant, surface=Surface.CONSOLE) is None,
        "editing": editing
        or next((r for r in rules if form.is_bound and str(r.pk) == str(form.data.get("rule"))), None),
    }
    return render(
        request, "console/rules.html", context, status=400 if form.is_bound and form.errors else 200
    )


def _save(request, form: DraftForm, tenant, replacing, membership) -> HttpResponse:
    rule = ApprovalRule.objects.filter(pk=replacing, tenant=tenant).first() if replacing else None
    try:
        saved = check_save_rule(
            tenant=tenant,
            fields=form.rule_fields,
            rule=rule,
            acting_user=request.user,
            surface=Surface.CONSOLE,
        )
    except ConfigurationForbiddenError:
        messages.error(request, "Only a tenant admin can save rules: nothing was saved.")
        return redirect("console:rules")
    except ApprovalInputError as error:
        messages.error(request, str(error))
        return redirect("console:rules")
    messages.success(request, f'Saved the rule "{saved.name}".')
    return redirect("console:rules")
