from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.fields import choice_param, int_param
from core.api.pagination import ItemsCursorPagination
from core.api.permissions import IsTenantMember
from core.api.representation import represent
from core.bounds import SEQUENCE_MAX
from runs.actions import check_cancel_run, check_start_run
from runs.api.serializers import (
    JournalEntrySerializer,
    JournalPageSerializer,
    RunDetailSerializer,
    RunSerializer,
    SaveScheduleSerializer,
    ScheduleSerializer,
    StartRunSerializer,
)
from runs.models import RunStatus
from runs.schedules import check_delete_schedule, check_save_schedule
from runs.selectors import (
    journal_after,
    run_get_for_tenant,
    run_list_for_tenant,
    schedule_visible_to,
    schedules_visible_to,
)
from tenants.authority import surface_of
from tenants.idempotency import PARAMETER, idempotent

JOURNAL_PAGE = 500


class RunListStartApi(generics.ListAPIView):
    """Runs of your tenant, newest first; POST starts one."""

    serializer_class = RunSerializer
    pagination_class = ItemsCursorPagination
    permission_classes = [IsTenantMember]

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=list(RunStatus.values)),
            OpenApiParameter("flowId", str),
            OpenApiParameter("agentId", str),
        ]
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        params = self.request.query_params
        return run_list_for_tenant(
            self.request.user.membership.tenant,
            status=choice_param(self.request, "status", RunStatus.values),
            flow_id=params.get("flowId"),
            agent_id=params.get("agentId"),
        )

    @extend_schema(request=StartRunSerializer, responses={201: RunDetailSerializer}, parameters=[PARAMETER])
    @idempotent
    def post(self, request):
        data = StartRunSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        run = check_start_run(
            flow_id=fields.get("flowId"),
            agent_id=fields.get("agentId"),
            version=fields.get("version"),
            input=fields["input"],
            dry_run=fields["dryRun"],
            read_only=fields["readOnly"],
            conversation_id=fields.get("conversationId"),
            connections=fields.get("connections"),
            acting_user=request.user,
            token=request.auth,
        )
        return Response(represent(RunDetailSerializer, run), status=status.HTTP_201_CREATED)


class RunDetailApi(APIView):
    permission_classes = [IsTenantMember]

    @extend_schema(responses=RunDetailSerializer)
    def get(self, request, run_id):
        run = run_get_for_tenant(request.user.membership.tenant, run_id)
        return Response(represent(RunDetailSerializer, run))


class RunJournalApi(APIView):
    permission_classes = [IsTenantMember]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "after",
                {"type": "integer", "minimum": 0, "maximum": SEQUENCE_MAX},
                description="Only entries after this sequence.",
            )
        ],
        responses=JournalPageSerializer,
    )
    def get(self, request, run_id):
        run = run_get_for_tenant(request.user.membership.tenant, run_id)
        after = int_param(request, "after", low=0, high=SEQUENCE_MAX, default=0)
        entries = journal_after(run, after=after, limit=JOURNAL_PAGE + 1)
        more = len(entries) > JOURNAL_PAGE
        entries = entries[:JOURNAL_PAGE]
        next_cursor = str(entries[-1].sequence) if more else None
        return Response({"items": JournalEntrySerializer(entries, many=True).data, "nextCursor": next_cursor})


class RunCancelApi(APIView):
    permission_classes = [IsTenantMember]

    @extend_schema(request=None, responses=RunDetailSerializer)
    def post(self, request, run_id):
        check_cancel_run(
            run_id, acting_user=request.user, token=request.auth, reason="cancelled through the API"
        )
        run = run_get_for_tenant(request.user.membership.tenant, run_id)
        return Response(represent(RunDetailSerializer, run))


class ScheduleListApi(generics.ListAPIView):
    """Schedules: yours, or your tenant's all for a tenant admin; POST makes one (yours, unless a
    tenant admin names its owner)."""

    serializer_class = ScheduleSerializer
    pagination_class = ItemsCursorPagination
    permission_classes = [IsTenantMember]

    def get_queryset(self):
        return schedules_visible_to(self.request.user)

    @extend_schema(
        request=SaveScheduleSerializer, responses={201: ScheduleSerializer}, parameters=[PARAMETER]
    )
    @idempotent
    def post(self, request):
        data = SaveScheduleSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = {"owner": request.user.get_username()} | data.model_fields()
        schedule = check_save_schedule(
            tenant=request.user.membership.tenant,
            fields=fields,
            acting_user=request.user,
            surface=surface_of(request),
        )
        return Response(ScheduleSerializer(schedule).data, status=status.HTTP_201_CREATED)


class ScheduleApi(APIView):
    permission_classes = [IsTenantMember]

    @extend_schema(operation_id="schedules_retrieve", responses=ScheduleSerializer)
    def get(self, request, schedule_id):
        return Response(ScheduleSerializer(schedule_visible_to(request.user, schedule_id)).data)

    @extend_schema(request=SaveScheduleSerializer(partial=True), responses=ScheduleSerializer)
    def patch(self, request, schedule_id):
        schedule = schedule_visible_to(request.user, schedule_id)
        data = SaveScheduleSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        schedule = check_save_schedule(
            tenant=schedule.tenant,
            fields=data.model_fields(),
            schedule=schedule,
            acting_user=request.user,
            surface=surface_of(request),
        )
        return Response(ScheduleSerializer(schedule).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, schedule_id):
        check_delete_schedule(
            schedule_visible_to(request.user, schedule_id),
            acting_user=request.user,
            surface=surface_of(request),
        )
        return Response(status=status.HTTP_204_NO_CONTENT)
