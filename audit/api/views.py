from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.api.serializers import AuditEntrySerializer, HeadsSerializer
from audit.models import Surface
from audit.selectors import audit_list_for_tenant, chain_heads
from core.api.fields import choice_param, datetime_param
from core.api.pagination import ItemsCursorPagination
from core.api.permissions import IsTenantAdmin


class AuditListApi(generics.ListAPIView):
    """Your tenant's configuration changes, newest first (tenant admins): who changed what, from
    where, what it was and what it became. Each entry is chained to the one before it."""

    serializer_class = AuditEntrySerializer
    pagination_class = ItemsCursorPagination
    permission_classes = [IsTenantAdmin]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "action", str, description="An action (rule.created), or a noun for all of its (rule)."
            ),
            OpenApiParameter("actor", str, description="A username."),
            OpenApiParameter("surface", str, enum=list(Surface.values)),
            OpenApiParameter("targetType", str, description="rule, reviewer, token, schedule, mailbox…"),
            OpenApiParameter(
                "since", OpenApiTypes.DATETIME, description="ISO 8601: only changes at or after it."
            ),
            OpenApiParameter("until", OpenApiTypes.DATETIME, description="ISO 8601: only changes before it."),
        ]
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        params = self.request.query_params
        since, until = datetime_param(self.request, "since"), datetime_param(self.request, "until")
        if since and until and since >= until:
            raise ValidationError({"until": "must be later than since"})
        return audit_list_for_tenant(
            self.request.user.membership.tenant,
            action=params.get("action") or None,
            actor=params.get("actor") or None,
            surface=choice_param(self.request, "surface", Surface.values),
            target_type=params.get("targetType") or None,
            since=since,
            until=until,
        )


class ChainHeadsApi(APIView):
    """Where your tenant's chains end now (tenant admins): the sequence and hash of its last
    decision and its last audit entry, for an outside system to keep and compare."""

    permission_classes = [IsTenantAdmin]

    @extend_schema(responses=HeadsSerializer)
    def get(self, request):
        return Response(HeadsSerializer(chain_heads(request.user.membership.tenant)).data)
