"""The console's rules page: the tenant's rules, and a draft (new, or an edit of one) simulated
against the recorded calls before a tenant admin saves it."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone

from approvals.actions.rules import check_save_rule
from approvals.escalation_steps import MAX_STEPS
from approvals.exceptions import ApprovalInputError
from approvals.models import ApprovalRule, Reviewer
from approvals.roles import reviewer_roles
from approvals.rules import MAX_REQUIRED_APPROVALS, RULE_FIELDS, rule_errors
from approvals.simulator import OUTCOMES, WOULD, draft_rule, simulate
from audit.models import Surface
from core.bounds import SECONDS_MAX, SEQUENCE_MAX
from kindgi.effects import EffectKind
from kindgi.gates import RULE_GATE_LABELS, RuleGate
from runs.engine.budgets import SCOPES, WINDOW_MAX, Budget
from runs.engine.sequences import AFTER_KEYS, CONVERSATION, RUN, After
from tenants.authority import configure_refusal
from tenants.exceptions import ConfigurationForbiddenError

WINDOWS = {"7": 7, "30": 30, "90": 90}
# The escalation steps the form offers, a row each (a rule holds at most MAX_STEPS).
ESCALATION_ROWS = MAX_STEPS
# Rows shown open; the others wait under "More steps" unless they hold one.
ESCALATION_ROWS_OPEN = 4
ESCALATION_ACTIONS = ("raiseRole", "notify", "addReviewers", "expire")
ESCALATION_CHOICES = [
    ("", "—"),
    ("raiseRole", "needs the role"),
    ("notify", "tells"),
    ("addReviewers", "adds reviewers"),
    ("expire", "expires"),
]
BUDGET_FIELDS = (
    "budget_scope",
    "budget_window",
    "budget_max_calls",
    "budget_sum_of",
    "budget_max_sum",
    "budget_over",
)
NEW_RULE_ID = 2**62  # newer than any saved rule: ties of precedence go to the older


class DraftForm(forms.Form):
    """A rule's fields, checked by ``rule_errors`` as the admin and the API check them."""

    rule = forms.IntegerField(required=False, min_value=1, max_value=SEQUENCE_MAX, widget=forms.HiddenInput)
    name = forms.CharField(max_length=200, label="Name")
    enabled = forms.BooleanField(required=False, initial=True, label="In force")
    tool_pattern = forms.CharField(
        max_length=200,
        required=False,
        initial="*",
        label="Calls of the tools",
        help_text="a glob, e.g. acme-ops.*",
    )
    agent_pattern = forms.CharField(max_length=200, required=False, initial="*", label="By the agents")
    effect_kind = forms.ChoiceField(required=False, label="That touch (effect)")
    resource_pattern = forms.CharField(
        max_length=200, required=False, label="The resource", help_text="a glob"
    )
    condition = forms.CharField(
        max_length=500,
        required=False,
        label="Only when",
        help_text="a condition on the arguments, e.g. /amountCents > 10000",
    )
    gate = forms.ChoiceField(
        choices=[(gate.value, words) for gate, words in RULE_GATE_LABELS.items()], label="Then"
    )
    required_role = forms.ChoiceField(required=False, label="Decided by")
    ttl_seconds = forms.IntegerField(
        required=False, min_value=1, max_value=SECONDS_MAX, label="Waits at most (seconds)"
    )
    reason = forms.CharField(
        max_length=500, required=False, label="Why", help_text="told to the model when it denies"
    )
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
    budget_scope = forms.ChoiceField(
        required=False,
        label="Budget: count",
        choices=[("", "no budget")] + [(scope, f"per {scope}") for scope in SCOPES],
    )
    budget_window = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=WINDOW_MAX,
        label="over the last (seconds)",
        help_text="empty: ever",
    )
    budget_max_calls = forms.IntegerField(
        required=False, min_value=1, max_value=1_000_000_000, label="at most calls"
    )
    budget_sum_of = forms.CharField(
        required=False, max_length=200, label="and a sum of", help_text="a JSON pointer, e.g. /amountCents"
    )
    budget_max_sum = forms.FloatField(required=False, min_value=0.000001, max_value=1e14, label="at most")
    budget_over = forms.ChoiceField(
        required=False,
        label="over it",
        choices=[(RuleGate.ALWAYS_ASK.value, "ask a person"), (RuleGate.DENY.value, "refuse")],
    )
    days = forms.ChoiceField(
        choices=[(d, f"last {d} days") for d in WINDOWS], initial="30", label="Judge calls of the"
    )

    def __init__(self, *args, tenant, **kwargs):
        super().__init__(*args, **kwargs)
        self.tenant = tenant
        for row in range(ESCALATION_ROWS):
            self.fields[f"esc_{row}_after"] = forms.IntegerField(
                required=False, min_value=1, max_value=SECONDS_MAX, label=f"Step {row + 1}: after (seconds)"
            )
            self.fields[f"esc_{row}_action"] = forms.ChoiceField(
                required=False, choices=ESCALATION_CHOICES, label="it"
            )
            self.fields[f"esc_{row}_value"] = forms.CharField(
                required=False, max_length=500, label="whom", help_text="a role, or usernames with commas"
            )

        self.fields["effect_kind"].choices = [("", "any")] + [(kind.value, kind.value) for kind in EffectKind]
        self.fields["required_role"].choices = [("", "the lowest role")] + [(r, r) for r in reviewer_roles()]

    def escalation_rows(self) -> list[tuple]:
        """Each escalation step's fields, a row each: those shown open."""
        return self._rows(range(ESCALATION_ROWS_OPEN))

    def more_escalation_rows(self) -> list[tuple]:
        return self._rows(range(ESCALATION_ROWS_OPEN, ESCALATION_ROWS))

    def more_steps_used(self) -> bool:
        return any(after.value() or action.value() for after, action, _ in self.more_escalation_rows())

    def _rows(self, rows) -> list[tuple]:
        return [
            (self[f"esc_{row}_after"], self[f"esc_{row}_action"], self[f"esc_{row}_value"]) for row in rows
        ]

    def budget_fields(self) -> list:
        return [self[name] for name in BUDGET_FIELDS]

    def main_fields(self) -> list:
        grouped = set(BUDGET_FIELDS) | {name for name in self.fields if name.startswith("esc_")}
        return [self[name] for name in self.fields if name not in grouped]

    def clean_required_approvals(self) -> int:
        return self.cleaned_data.get("required_approvals") or 1

    def clean(self):
        data = super().clean()
        data["after"] = _after_of(data)
        data["escalation"] = _escalation_of(data)
        data["budget"] = _budget_of(data)
        fields = {name: data.get(name) for name in RULE_FIELDS}
        for field, message in rule_errors(fields, tenant=self.tenant).items():
            field = {"after": "after_kind", "budget": "budget_scope"}.get(field, field)
            if field == "escalation":
                self.add_error(None, f"Escalation: {message}")
            elif field in self.fields and field not in self.errors:
                self.add_error(field, message)
            elif field not in self.fields:
                self.add_error(None, f"{field}: {message}")
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


def _escalation_of(data: dict) -> list[dict]:
    """The form's step rows as a rule holds its escalation (rows left empty are no steps)."""
    steps = []
    for row in range(ESCALATION_ROWS):
        action = data.get(f"esc_{row}_action") or ""
        after = data.get(f"esc_{row}_after")
        if not action and after is None:
            continue
        value: object = True
        text = (data.get(f"esc_{row}_value") or "").strip()
        if action in ("notify", "addReviewers"):
            value = [name.strip() for name in text.split(",") if name.strip()]
        elif action == "raiseRole":
            value = text
        steps.append({"afterSeconds": after, action or "expire": value})
    return steps


def _budget_of(data: dict) -> dict | None:
    """The form's budget fields as a rule holds its budget (None: no budget)."""
    if not data.get("budget_scope"):
        return None
    budget: dict = {"scope": data["budget_scope"], "overBudget": data.get("budget_over") or "always_ask"}
    optional = {
        "windowSeconds": data.get("budget_window"),
        "maxCalls": data.get("budget_max_calls"),
        "sumOf": (data.get("budget_sum_of") or "").strip() or None,
        "maxSum": data.get("budget_max_sum"),
    }
    return budget | {key: value for key, value in optional.items() if value is not None}


def _editing_initial(rule: ApprovalRule) -> dict:
    initial = {
        "rule": rule.pk,
        **{
            name: getattr(rule, name) for name in RULE_FIELDS if name not in ("after", "escalation", "budget")
        },
    }
    for row, step in enumerate(rule.escalation[:ESCALATION_ROWS]):
        action = next((name for name in ESCALATION_ACTIONS if name in step), "expire")
        value = step.get(action)
        initial[f"esc_{row}_after"] = step.get("afterSeconds")
        initial[f"esc_{row}_action"] = action
        initial[f"esc_{row}_value"] = (
            ", ".join(value) if isinstance(value, list) else ("" if value is True else value)
        )
    if rule.budget:
        budget = rule.budget
        initial |= {
            "budget_scope": budget.get("scope"),
            "budget_window": budget.get("windowSeconds"),
            "budget_max_calls": budget.get("maxCalls"),
            "budget_sum_of": budget.get("sumOf", ""),
            "budget_max_sum": budget.get("maxSum"),
            "budget_over": budget.get("overBudget", "always_ask"),
        }
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
    over = "refuse" if budget.over_budget == RuleGate.DENY else "ask a person"
    return f"at most {' and '.join(most)} {budget.where()}, then {over}"


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
