from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.response import Response
from rest_framework.views import APIView

from approvals.actions.decisions import check_complete_approval, decide_each
from approvals.actions.grants import check_create_grant, check_revoke_grant, grants_visible_to
from approvals.actions.reviewers import check_register_reviewer, check_set_notifications
from approvals.actions.rules import check_delete_rule, check_save_rule
from approvals.api.serializers import (
    ApprovalRuleSerializer,
    ApprovalSerializer,
    CompleteApprovalSerializer,
    CompletionSerializer,
    CreateGrantSerializer,
    DecisionResultsSerializer,
    DecisionsSerializer,
    GrantSerializer,
    NotificationSettingsSerializer,
    RegisteredReviewerSerializer,
    RegisterReviewerSerializer,
    ReviewerSerializer,
)
from approvals.exceptions import NotAReviewerError
from approvals.models import ApprovalRule, ApprovalStatus, Reviewer
from approvals.selectors import approval_get_for_tenant, approval_list_for_tenant
from core.api.errors import domain_error
from core.api.fields import choice_param, uuid_param
from core.api.pagination import ItemsCursorPagination
from core.api.permissions import IsTenantAdmin, IsTenantMember
from core.api.representation import represent
from core.errors import DomainError
from tenants.authority import surface_of
from tenants.idempotency import PARAMETER, idempotent


class ApprovalListApi(generics.ListAPIView):
    """Your tenant's approvals, newest first."""

    serializer_class = ApprovalSerializer
    pagination_class = ItemsCursorPagination
    permission_classes = [IsTenantMember]

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=list(ApprovalStatus.values)),
            OpenApiParameter(
                "runId",
                OpenApiTypes.UUID,
                description="Only this run's approvals (a flow's: with its agent steps').",
            ),
        ]
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        return approval_list_for_tenant(
            self.request.user.membership.tenant,
            status=choice_param(self.request, "status", ApprovalStatus.values),
            run_id=uuid_param(self.request, "runId"),
        )


class ApprovalDetailApi(APIView):
    permission_classes = [IsTenantMember]

    @extend_schema(responses=ApprovalSerializer)
    def get(self, request, approval_id):
        return Response(
            represent(
                ApprovalSerializer, approval_get_for_tenant(request.user.membership.tenant, approval_id)
            )
        )


class ApprovalCompleteApi(APIView):
    """Approve or reject. The run continues in the same call with the immediate task backend."""

    permission_classes = [IsTenantMember]

    @extend_schema(request=CompleteApprovalSerializer, responses=CompletionSerializer, parameters=[PARAMETER])
    @idempotent
    def post(self, request, approval_id):
        data = CompleteApprovalSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        completion = check_complete_approval(
            approval_id=approval_id,
            acting_user=request.user,
            surface=surface_of(request),
            **data.validated_data,
        )
        return Response(represent(CompletionSerializer, completion))


class ApprovalDecisionsApi(APIView):
    """Decide several approvals at once. Each is decided on its own, as if sent alone (its own
    rights, locks and refusal); the answer says, item by item, what happened."""

    permission_classes = [IsTenantMember]

    @extend_schema(request=DecisionsSerializer, responses=DecisionResultsSerializer, parameters=[PARAMETER])
    @idempotent
    def post(self, request):
        data = DecisionsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        results = []
        for approval_id, outcome in decide_each(
            acting_user=request.user, decisions=data.validated_data["decisions"]
        ):
            if isinstance(outcome, DomainError):
                http_status, body = domain_error(outcome)
                results.append(
                    {"approvalId": approval_id, "status": "refused", "httpStatus": http_status, **body}
                )
            else:
                results.append(
                    {"approvalId": approval_id, "status": "decided", "httpStatus": 200, "completion": outcome}
                )
        return Response(DecisionResultsSerializer({"results": results}).data)


class ReviewerRegisterApi(APIView):
    """Register yourself (the token's user) as a reviewer, or update your registration."""

    permission_classes = [IsTenantMember]

    @extend_schema(request=RegisterReviewerSerializer, responses=RegisteredReviewerSerializer)
    def post(self, request):
        data = RegisterReviewerSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        reviewer = check_register_reviewer(
            acting_user=request.user,
            surface=surface_of(request),
            role=data.validated_data.get("role"),
            display_name=data.validated_data.get("displayName"),
        )
        return Response(RegisteredReviewerSerializer(reviewer).data)


class ReviewerMeApi(APIView):
    permission_classes = [IsTenantMember]

    @extend_schema(responses=ReviewerSerializer)
    def get(self, request):
        reviewer = Reviewer.objects.filter(user=request.user).select_related("user", "tenant").first()
        if reviewer is None:
            raise NotAReviewerError(f"{request.user.get_username()} is not a reviewer; register as one")
        return Response(ReviewerSerializer(reviewer).data)

    @extend_schema(request=NotificationSettingsSerializer, responses=ReviewerSerializer)
    def patch(self, request):
        """Choose how you hear of approvals: ``notify`` immediately, digest or none, and
        ``digestMinutes``."""
        data = NotificationSettingsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        reviewer = check_set_notifications(
            acting_user=request.user,
            notify=data.validated_data.get("notify"),
            digest_minutes=data.validated_data.get("digestMinutes"),
        )
        return Response(ReviewerSerializer(reviewer).data)


class ReviewerListApi(generics.ListAPIView):
    serializer_class = ReviewerSerializer
    pagination_class = ItemsCursorPagination
    permission_classes = [IsTenantMember]

    def get_queryset(self):
        return Reviewer.objects.filter(tenant=self.request.user.membership.tenant).select_related(
            "user", "tenant"
        )


class RuleListCreateApi(generics.ListCreateAPIView):
    """Your tenant's approval rules (tenant admins)."""

    serializer_class = ApprovalRuleSerializer
    pagination_class = ItemsCursorPagination
    permission_classes = [IsTenantAdmin]

    def get_queryset(self):
        return ApprovalRule.objects.filter(tenant=self.request.user.membership.tenant).prefetch_related(
            "reviewers"
        )

    def get_serializer_context(self):
        return super().get_serializer_context() | {"tenant": self.request.user.membership.tenant}

    @extend_schema(parameters=[PARAMETER])
    @idempotent
    def post(self, request, *args, **kwargs):
        return super().post(request, *args, **kwargs)

    def perform_create(self, serializer):
        serializer.instance = _save_rule(serializer, request=self.request)


def _save_rule(serializer, *, request) -> ApprovalRule:
    """Through the one action that writes rules, as the admin and the console do."""
    data = dict(serializer.validated_data)
    reviewers = data.pop("reviewers", None)
    return check_save_rule(
        tenant=request.user.membership.tenant,
        fields=data,
        reviewers=reviewers,
        rule=serializer.instance,
        acting_user=request.user,
        surface=surface_of(request),
    )


class RuleDetailApi(generics.RetrieveUpdateDestroyAPIView):
    serializer_class = ApprovalRuleSerializer
    permission_classes = [IsTenantAdmin]
    lookup_url_kwarg = "rule_id"
    http_method_names = ["get", "put", "patch", "delete"]

    def get_queryset(self):
        return ApprovalRule.objects.filter(tenant=self.request.user.membership.tenant).prefetch_related(
            "reviewers"
        )

    def get_serializer_context(self):
        return super().get_serializer_context() | {"tenant": self.request.user.membership.tenant}

    def perform_update(self, serializer):
        serializer.instance = _save_rule(serializer, request=self.request)

    def perform_destroy(self, instance):
        check_delete_rule(instance, acting_user=self.request.user, surface=surface_of(self.request))


class GrantListCreateApi(generics.ListCreateAPIView):
    """Standing grants, newest first: every grant of your tenant for a tenant admin, your own
    otherwise. A reviewer gives one in their own name; it covers only calls they could approve."""

    serializer_class = GrantSerializer
    pagination_class = ItemsCursorPagination
    permission_classes = [IsTenantMember]

    def get_queryset(self):
        return grants_visible_to(self.request.user, self.request.user.membership.tenant)

    @extend_schema(request=CreateGrantSerializer, responses={201: GrantSerializer}, parameters=[PARAMETER])
    @idempotent
    def post(self, request):
        data = CreateGrantSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        if "expiresAt" in fields:
            fields["expiresAt"] = fields["expiresAt"].isoformat()
        grant = check_create_grant(
            tenant=request.user.membership.tenant,
            acting_user=request.user,
            fields=fields,
            surface=surface_of(request),
        )
        return Response(represent(GrantSerializer, grant), status=201)


class GrantRevokeApi(APIView):
    """Revoke a grant: yours, or any of your tenant's as a tenant admin. It covers no call from
    the next one on."""

    permission_classes = [IsTenantMember]

    @extend_schema(request=None, responses=GrantSerializer)
    def post(self, request, grant_id):
        grant = check_revoke_grant(
            grant_id=grant_id,
            tenant=request.user.membership.tenant,
            acting_user=request.user,
            surface=surface_of(request),
        )
        return Response(represent(GrantSerializer, grant))
