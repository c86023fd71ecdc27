from django.db.models import Prefetch
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.pagination import ItemsCursorPagination
from core.api.permissions import IsTenantMember
from kindgi.naming import semver_key
from tools.api.serializers import AgentSerializer, FlowSerializer, ToolSerializer
from tools.models import Agent, AgentGateOverride, Flow, Tool


class CatalogPagination(ItemsCursorPagination):
    ordering = ("key", "version")


def _queryset(model):
    rows = model.objects.filter(retired_at__isnull=True)
    if model is Agent:
        rows = rows.prefetch_related(Prefetch("admin_overrides", queryset=AgentGateOverride.objects.all()))
    return rows


class CatalogListApi(generics.ListAPIView):
    """Definitions in service (retired ones are left out), by id and version."""

    pagination_class = CatalogPagination
    permission_classes = [IsTenantMember]
    model = None

    def get_queryset(self):
        return _queryset(self.model)


class CatalogDetailApi(APIView):
    """One definition: the newest version in service, or ``?version=``."""

    permission_classes = [IsTenantMember]
    model = None
    serializer_class = None
    what = ""

    def get(self, request, definition_id):
        rows = list(_queryset(self.model).filter(key=definition_id))
        version = request.query_params.get("version")
        if version:
            rows = [row for row in rows if row.version == version]
        if not rows:
            raise NotFound(
                f'there is no {self.what} "{definition_id}"' + (f" version {version}" if version else "")
            )
        return Response(self.serializer_class(max(rows, key=lambda row: semver_key(row.version))).data)


VERSION = OpenApiParameter("version", str, description="By default, the newest version in service.")


class ToolListApi(CatalogListApi):
    model, serializer_class = Tool, ToolSerializer


@extend_schema(parameters=[VERSION], responses=ToolSerializer)
class ToolDetailApi(CatalogDetailApi):
    model, serializer_class, what = Tool, ToolSerializer, "tool"


class AgentListApi(CatalogListApi):
    model, serializer_class = Agent, AgentSerializer


@extend_schema(parameters=[VERSION], responses=AgentSerializer)
class AgentDetailApi(CatalogDetailApi):
    model, serializer_class, what = Agent, AgentSerializer, "agent"


class FlowListApi(CatalogListApi):
    model, serializer_class = Flow, FlowSerializer


@extend_schema(parameters=[VERSION], responses=FlowSerializer)
class FlowDetailApi(CatalogDetailApi):
    model, serializer_class, what = Flow, FlowSerializer, "flow"
