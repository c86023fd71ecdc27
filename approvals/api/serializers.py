"""Approvals, decisions, reviewers and rules on the wire (DESIGN §4 and the seeds), camelCase."""

from django.contrib.auth import get_user_model
from django.db import models
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from approvals.escalation_steps import MAX_STEPS
from approvals.models import Approval, ApprovalRule, ApprovalStatus, Decision, DecisionKind, Grant, Reviewer
from approvals.roles import reviewer_roles
from approvals.rules import MAX_REQUIRED_APPROVALS, RULE_FIELDS, rule_errors
from core.api.fields import (
    AwareDateTimeField,
    BoundedIntegerField,
    BoundedNumberField,
    JsonObjectField,
    StrictBooleanField,
    StrictCharField,
    StrictManyRelatedField,
    StrictModelSerializer,
    StrictSerializer,
    StrictUUIDField,
    column_length,
)
from core.bounds import SECONDS_MAX
from kindgi.effects import EffectKind
from runs.engine.budgets import OVER_BUDGET, WINDOW_MAX
from runs.engine.budgets import SCOPES as BUDGET_SCOPES
from runs.engine.sequences import RUN, SCOPES


class ConnectionRefSerializer(serializers.Serializer):
    app = serializers.CharField()
    owner = serializers.CharField(help_text="The connection's owner: the one person who may decide.")
    label = serializers.CharField(
        required=False, help_text="Which of the owner's it is, where that needs saying (a mailbox's address)."
    )


class SubjectRefSerializer(serializers.Serializer):
    runId = serializers.UUIDField()
    toolId = serializers.CharField()
    toolVersion = serializers.CharField()
    agentId = serializers.CharField(
        allow_null=True, help_text="The agent whose call this is; null for a flow step."
    )
    flowId = serializers.CharField(allow_null=True, help_text="For a flow's tool step: the flow.")
    nodeId = serializers.CharField(allow_null=True, help_text="For a flow's tool step: the step's node.")
    callId = serializers.CharField()
    arguments = JsonObjectField(help_text="The exact arguments the model (or the flow) chose, validated.")
    connection = ConnectionRefSerializer(
        required=False,
        help_text="Only for subjectKind connection:use: the connection the call would use, and whose.",
    )


class ProvenanceRefSerializer(serializers.Serializer):
    runId = serializers.UUIDField(
        help_text="The run that waits: the agent's own run, or the flow run whose tool step it is."
    )


class DecisionSerializer(serializers.ModelSerializer):
    decision = serializers.ChoiceField(choices=DecisionKind.choices)
    reviewer = serializers.CharField(source="reviewer_name", help_text="Empty when nobody decided (expired).")
    reviewerRoleAtDecision = serializers.CharField(source="reviewer_role_at_decision")
    decidedAt = serializers.DateTimeField(source="decided_at")
    arguments = JsonObjectField(allow_null=True, help_text="The arguments the reviewer approved, if edited.")

    class Meta:
        model = Decision
        fields = ["decision", "rationale", "reviewerRoleAtDecision", "reviewer", "decidedAt", "arguments"]
        read_only_fields = fields


class GivenApprovalSerializer(serializers.Serializer):
    reviewer = serializers.CharField()
    reviewerRoleAtDecision = serializers.CharField(source="role")
    decidedAt = serializers.DateTimeField()
    superseded = serializers.BooleanField(
        help_text="True when it no longer counts: escalation raised the required role above the role "
        "it was given in (it stays in the record)."
    )
    supersededAt = serializers.DateTimeField(
        allow_null=True, help_text="When it stopped counting (null while it counts)."
    )
    supersededReason = serializers.CharField(
        allow_null=True, help_text="Why it no longer counts (null while it counts)."
    )

    def to_representation(self, instance):
        # Kept on the approval as ISO text; shown like every other time in the API.
        return super().to_representation(
            instance
            | {
                "decidedAt": parse_datetime(instance["decidedAt"]),
                "superseded": bool(instance.get("superseded")),
                "supersededAt": parse_datetime(instance["supersededAt"])
                if instance.get("supersededAt")
                else None,
                "supersededReason": instance.get("supersededReason"),
            }
        )


class ApprovalSerializer(serializers.ModelSerializer):
    subjectKind = serializers.CharField(source="subject_kind")
    subjectRef = SubjectRefSerializer(source="subject_ref")
    requiredRole = serializers.CharField(source="required_role")
    status = serializers.ChoiceField(choices=ApprovalStatus.choices)
    provenanceRef = ProvenanceRefSerializer(source="provenance_ref")
    createdAt = serializers.DateTimeField(source="created_at")
    decidedAt = serializers.DateTimeField(source="decided_at", allow_null=True)
    expiresAt = serializers.DateTimeField(source="expires_at", allow_null=True)
    decision = DecisionSerializer(
        allow_null=True, read_only=True, help_text="Null until decided; then who decided, how and why."
    )
    requiredApprovals = serializers.IntegerField(
        source="required_approvals",
        help_text="How many distinct reviewers must approve before the call runs (1 unless a rule "
        "asks more).",
    )
    approvalsGiven = GivenApprovalSerializer(
        source="approvals_given",
        many=True,
        help_text="The approvals given so far, in order: with requiredApprovals, e.g. 1 of 2. Those "
        "marked superseded no longer count.",
    )
    approvalsMissing = serializers.IntegerField(
        source="approvals_missing",
        help_text="How many more approvals the call needs before it runs: requiredApprovals less the "
        "approvals given that still count (0 once approved).",
    )
    reason = serializers.SerializerMethodField(
        help_text='Why the gate asks, e.g. \'rule "payments" (never_ask); over budget: 99,999 of 100,000 '
        "used in this run; this call 99,999'."
    )
    summary = serializers.CharField(
        source="said",
        help_text="The call in a sentence, from its tool's summary: 'Post \"Checkout is back\" to the public "
        "status page'. What people read first; title keeps the seeds' heading.",
    )
    why = serializers.CharField(
        help_text="Why the gate asks, in words: 'This agent's code asks before every call of this tool'.",
    )
    stepUp = serializers.SerializerMethodField(
        help_text="Whether a decision needs the reviewer's passkey (its rule's stepUp): then it is decided "
        "in the console or from its mail link, and an API token is refused."
    )

    class Meta:
        model = Approval
        fields = [
            "id",
            "subjectKind",
            "subjectRef",
            "requiredRole",
            "status",
            "title",
            "summary",
            "why",
            "stepUp",
            "provenanceRef",
            "createdAt",
            "decidedAt",
            "expiresAt",
            "decision",
            "requiredApprovals",
            "approvalsGiven",
            "approvalsMissing",
            "reason",
        ]
        read_only_fields = fields

    def get_stepUp(self, approval: Approval) -> bool:  # noqa: N802  (the wire's name)
        return bool((approval.gate or {}).get("stepUp"))

    def get_reason(self, approval: Approval) -> str:
        return (approval.gate or {}).get("reason", "")


class CompletionSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=["terminal", "partial"],
        help_text="terminal: the approval is settled and the run goes on; partial: an approval given "
        "toward the several the call needs, which still waits (waitpointResolved false).",
    )
    approval = ApprovalSerializer()
    decision = DecisionSerializer()
    waitpointResolved = serializers.BooleanField(source="waitpoint_resolved")


class AllowSerializer(StrictSerializer):
    """A standing grant given with an approval: calls like the approved one (its tool, agent and
    principal) run without asking, as long and as often as this says."""

    forSeconds = BoundedIntegerField(required=False, min_value=1, max_value=SECONDS_MAX)
    expiresAt = AwareDateTimeField(required=False)
    maxCalls = BoundedIntegerField(required=False, min_value=1, max_value=1_000_000_000)
    sumOf = StrictCharField(required=False, max_length=200)
    maxSum = BoundedNumberField(required=False, above=0, most=1e14)
    condition = StrictCharField(required=False, allow_blank=True, max_length=500)


class CompleteApprovalSerializer(StrictSerializer):
    decision = serializers.ChoiceField(choices=DecisionKind.choices)
    rationale = StrictCharField(required=False, allow_blank=True, default="")
    arguments = JsonObjectField(required=False, help_text="Approve with these arguments instead.")
    allow = AllowSerializer(
        required=False,
        help_text="Approve, and allow calls like this one (the same tool, agent and principal) to run "
        'without asking: e.g. {"forSeconds": 7200, "maxCalls": 3}. A standing grant in your name.',
    )


class DecisionItemSerializer(StrictSerializer):
    approvalId = StrictUUIDField()
    decision = serializers.ChoiceField(choices=DecisionKind.choices)
    rationale = StrictCharField(required=False, allow_blank=True, default="")
    arguments = JsonObjectField(required=False, help_text="Approve with these arguments instead.")


class DecisionsSerializer(StrictSerializer):
    # A list field, not many=True: the schema then states the bounds the API holds.
    decisions = serializers.ListField(child=DecisionItemSerializer(), min_length=1, max_length=100)


class ItemErrorSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    details = JsonObjectField()


class DecisionResultSerializer(serializers.Serializer):
    approvalId = serializers.UUIDField()
    status = serializers.ChoiceField(choices=["decided", "refused"])
    httpStatus = serializers.IntegerField(help_text="What deciding this one alone would have answered.")
    completion = CompletionSerializer(required=False, help_text="When decided.")
    error = ItemErrorSerializer(required=False, help_text="When refused: why, as the single decision says.")


class DecisionResultsSerializer(serializers.Serializer):
    results = DecisionResultSerializer(many=True)


class ReviewerSerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="user.username")
    displayName = serializers.CharField(source="display_name")
    tenant = serializers.CharField(source="tenant.slug")
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")
    notify = serializers.ChoiceField(
        choices=Reviewer.Notify.values,
        help_text="How they hear of approvals they may decide: a mail each (immediately), a digest, or none.",
    )
    digestMinutes = serializers.IntegerField(source="digest_minutes", help_text="How often a digest comes.")

    class Meta:
        model = Reviewer
        fields = [
            "user",
            "role",
            "displayName",
            "tenant",
            "notify",
            "digestMinutes",
            "createdAt",
            "updatedAt",
        ]
        read_only_fields = fields


class RegisteredReviewerSerializer(ReviewerSerializer):
    """The registration as it stands, and why the role is not the one asked for, if it is not."""

    note = serializers.CharField(
        source="registration_note",
        help_text="Empty for a new reviewer; for one registering again, what changed (or that nothing "
        "did), and why the role kept is not the one asked for (a role is a tenant admin's).",
    )

    class Meta(ReviewerSerializer.Meta):
        fields = [*ReviewerSerializer.Meta.fields, "note"]
        read_only_fields = fields


ROLE_CHOICES = ", ".join(reviewer_roles())


class NotificationSettingsSerializer(StrictSerializer):
    notify = serializers.ChoiceField(choices=Reviewer.Notify.values, required=False)
    digestMinutes = BoundedIntegerField(required=False, min_value=1, max_value=1440)


class RegisterReviewerSerializer(StrictSerializer):
    """A new reviewer names both; one registering again only what changes."""

    role = serializers.ChoiceField(
        required=False,
        choices=reviewer_roles(),
        error_messages={
            "invalid_choice": f"'{{input}}' is not a reviewer role (valid roles: {ROLE_CHOICES})"
        },
    )
    displayName = StrictCharField(
        required=False,
        max_length=200,
        error_messages=dict.fromkeys(["blank", "required"], "a display name is required"),
    )


def _escalation_step(action: str, value: dict) -> dict:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["afterSeconds", action],
        "properties": {
            "afterSeconds": {"type": "integer", "minimum": 1, "maximum": SECONDS_MAX},
            action: value,
        },
    }


_USERNAMES = {"type": "array", "minItems": 1, "items": {"type": "string"}}


@extend_schema_field(
    {
        "type": "array",
        "maxItems": MAX_STEPS,
        "items": {
            "oneOf": [
                _escalation_step("raiseRole", {"type": "string", "enum": reviewer_roles()}),
                _escalation_step("notify", _USERNAMES),
                _escalation_step("addReviewers", _USERNAMES),
                _escalation_step("expire", {"type": "boolean", "enum": [True]}),
            ]
        },
    }
)
class EscalationField(serializers.JSONField):
    """A rule's escalation steps, checked by ``approvals.escalation_steps`` (which says more than
    a schema can: steps come later each, expire is last, usernames are the tenant's)."""


_SCOPE = {"type": "string", "enum": list(SCOPES), "default": RUN}


@extend_schema_field(
    {
        "type": "object",
        "nullable": True,
        "properties": {
            "scope": {"type": "string", "enum": list(BUDGET_SCOPES)},
            "windowSeconds": {"type": "integer", "minimum": 1, "maximum": WINDOW_MAX},
            "maxCalls": {"type": "integer", "minimum": 1, "maximum": 1_000_000_000},
            "sumOf": {"type": "string", "pattern": "^/", "maxLength": 200},
            "maxSum": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 1e14},
            "overBudget": {"type": "string", "enum": list(OVER_BUDGET), "default": "always_ask"},
        },
        "required": ["scope"],
        "anyOf": [{"required": ["maxCalls"]}, {"required": ["sumOf", "maxSum"]}],
        "additionalProperties": False,
    }
)
class BudgetField(serializers.JSONField):
    """A total across the calls a rule matches, checked by ``runs.engine.budgets.Budget``."""


@extend_schema_field(
    {
        "type": "object",
        "nullable": True,
        "oneOf": [
            {
                "type": "object",
                "properties": {
                    "toolPattern": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": r"\S"},
                    "scope": _SCOPE,
                },
                "required": ["toolPattern"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"effect": {"type": "string", "enum": list(EffectKind)}, "scope": _SCOPE},
                "required": ["effect"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"outsideData": {"type": "boolean", "enum": [True]}, "scope": _SCOPE},
                "required": ["outsideData"],
                "additionalProperties": False,
            },
        ],
    }
)
class AfterField(serializers.JSONField):
    """What must have run before a call for the rule to match, checked by
    ``runs.engine.sequences.After``."""


@extend_schema_field({"type": "string", "enum": ["", *EffectKind]})
class EffectKindField(StrictCharField):
    """An effect kind, or blank for any (``approvals.rules`` says which are)."""


@extend_schema_field({"type": "string", "enum": ["", *reviewer_roles()]})
class RequiredRoleField(StrictCharField):
    """A reviewer role, or blank for any."""


class ApprovalRuleSerializer(StrictModelSerializer):
    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.CharField: StrictCharField,
        models.TextField: StrictCharField,
    }
    toolPattern = StrictCharField(
        source="tool_pattern", default="*", max_length=column_length(ApprovalRule, "tool_pattern")
    )
    agentPattern = StrictCharField(
        source="agent_pattern", default="*", max_length=column_length(ApprovalRule, "agent_pattern")
    )
    effectKind = EffectKindField(
        source="effect_kind",
        allow_blank=True,
        default="",
        max_length=column_length(ApprovalRule, "effect_kind"),
    )
    resourcePattern = StrictCharField(
        source="resource_pattern",
        allow_blank=True,
        default="",
        max_length=column_length(ApprovalRule, "resource_pattern"),
    )
    condition = StrictCharField(
        allow_blank=True, default="", max_length=column_length(ApprovalRule, "condition")
    )
    gate = serializers.ChoiceField(choices=ApprovalRule.Gate.choices)
    requiredRole = RequiredRoleField(
        source="required_role",
        allow_blank=True,
        default="",
        max_length=column_length(ApprovalRule, "required_role"),
    )
    reviewers = StrictManyRelatedField(
        child_relation=serializers.SlugRelatedField(
            slug_field="username", queryset=get_user_model().objects.all()
        ),
        required=False,
    )
    ttlSeconds = BoundedIntegerField(
        source="ttl_seconds",
        allow_null=True,
        required=False,
        min_value=1,
        max_value=SECONDS_MAX,
        help_text="Seconds until its approvals expire (null: the site's default).",
    )
    reason = StrictCharField(allow_blank=True, default="", max_length=column_length(ApprovalRule, "reason"))
    requiredApprovals = BoundedIntegerField(
        source="required_approvals",
        default=1,
        min_value=1,
        max_value=MAX_REQUIRED_APPROVALS,
        help_text="How many distinct reviewers must approve a call before it runs; any rejection rejects.",
    )
    stepUp = StrictBooleanField(
        source="step_up",
        default=False,
        help_text="A decision on its approvals needs the reviewer's passkey first: they decide in the "
        "console or a mail link, never with an API token or the CLI.",
    )
    escalation = EscalationField(
        required=False,
        default=list,
        help_text='Steps while an approval waits, e.g. [{"afterSeconds": 60, "raiseRole": "senior"}, '
        '{"afterSeconds": 120, "expire": true}]; also notify and addReviewers (usernames). Steps come '
        "later each, and expire is the last.",
    )
    after = AfterField(
        required=False,
        allow_null=True,
        default=None,
        help_text='Match only after this ran before the call in the run (or, with "scope": '
        '"conversation", in the conversation): {"outsideData": true}, {"effect": "network"} or '
        '{"toolPattern": "mail.*"}. Null: whatever ran before.',
    )
    budget = BudgetField(
        required=False,
        allow_null=True,
        default=None,
        help_text='A total across the calls it matches, e.g. {"scope": "run", "sumOf": "/amountCents", '
        '"maxSum": 100000, "overBudget": "always_ask"}: a call that would go over it takes overBudget '
        "instead of the rule's gate. Null: no budget.",
    )
    enabled = StrictBooleanField(default=True)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)

    class Meta:
        model = ApprovalRule
        fields = [
            "id",
            "name",
            "toolPattern",
            "agentPattern",
            "effectKind",
            "resourcePattern",
            "condition",
            "gate",
            "requiredRole",
            "reviewers",
            "ttlSeconds",
            "reason",
            "requiredApprovals",
            "stepUp",
            "escalation",
            "after",
            "budget",
            "enabled",
            "createdAt",
        ]
        read_only_fields = ["id", "createdAt"]

    def validate(self, data):
        """The rule as it would be saved, checked by the one validator rules have."""
        current = {name: getattr(self.instance, name) for name in RULE_FIELDS} if self.instance else {}
        fields = current | {name: value for name, value in data.items() if name != "reviewers"}
        reviewers = data.get("reviewers")
        if reviewers is None and self.instance is not None:
            reviewers = list(self.instance.reviewers.all())
        errors = rule_errors(fields, tenant=self.context["tenant"], reviewers=reviewers)
        if errors:
            raise serializers.ValidationError(
                {_CAMEL.get(field, field): message for field, message in errors.items()}
            )
        return data


_CAMEL = {
    "effect_kind": "effectKind",
    "required_role": "requiredRole",
    "tool_pattern": "toolPattern",
    "required_approvals": "requiredApprovals",
    "step_up": "stepUp",
}


class GrantSerializer(serializers.ModelSerializer):
    granter = serializers.CharField(source="granter.username")
    toolPattern = serializers.CharField(source="tool_pattern")
    agentPattern = serializers.CharField(source="agent_pattern")
    principal = serializers.CharField(source="principal.username", allow_null=True, default=None)
    agentId = serializers.CharField(source="agent_id")
    maxCalls = serializers.IntegerField(source="max_calls", allow_null=True)
    sumOf = serializers.CharField(source="sum_of")
    maxSum = serializers.FloatField(source="max_sum", allow_null=True)
    expiresAt = serializers.DateTimeField(source="expires_at")
    approvalId = serializers.UUIDField(source="approval_id", allow_null=True)
    usedSum = serializers.FloatField(source="used_sum")
    revokedAt = serializers.DateTimeField(source="revoked_at", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")
    status = serializers.SerializerMethodField(help_text="active, used up, expired or revoked")

    class Meta:
        model = Grant
        fields = [
            "id",
            "granter",
            "toolPattern",
            "agentPattern",
            "condition",
            "scope",
            "principal",
            "agentId",
            "maxCalls",
            "sumOf",
            "maxSum",
            "expiresAt",
            "approvalId",
            "uses",
            "usedSum",
            "status",
            "revokedAt",
            "createdAt",
        ]
        read_only_fields = fields

    def get_status(self, grant: Grant) -> str:
        return grant.status_at(timezone.now())


class CreateGrantSerializer(StrictSerializer):
    toolPattern = StrictCharField(max_length=200, help_text="Glob on the tool id, e.g. shop.refund.")
    agentPattern = StrictCharField(required=False, max_length=200, default="*")
    condition = StrictCharField(
        required=False, allow_blank=True, max_length=500, help_text="e.g. /amountCents <= 5000"
    )
    scope = serializers.ChoiceField(choices=Grant.Scope.choices)
    principal = StrictCharField(required=False, max_length=150, help_text="With scope principal: whose runs.")
    agentId = StrictCharField(
        required=False, max_length=200, help_text="With scope agent: which agent's calls."
    )
    maxCalls = BoundedIntegerField(required=False, min_value=1, max_value=1_000_000_000)
    sumOf = StrictCharField(required=False, max_length=200)
    maxSum = BoundedNumberField(required=False, above=0, most=1e14)
    forSeconds = BoundedIntegerField(required=False, min_value=1, max_value=SECONDS_MAX)
    expiresAt = AwareDateTimeField(required=False)
