from django.db.models import Count, Prefetch, Q
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.pagination import ItemsCursorPagination
from core.api.permissions import IsTenantAdmin, IsTenantMember
from kindgi.naming import semver_key
from tenants.authority import surface_of
from tools.actions import check_clear_override, check_set_override
from tools.api.serializers import (
    AgentSerializer,
    FlowSerializer,
    McpServerListSerializer,
    OverrideListSerializer,
    SetOverrideSerializer,
    ToolSerializer,
)
from tools.exceptions import DefinitionNotFoundError
from tools.mcp.definitions import visible_to
from tools.models import Agent, AgentGateOverride, Flow, McpServer, Tool


class CatalogPagination(ItemsCursorPagination):
    ordering = ("key", "version")


def _queryset(model, tenant_id):
    rows = model.objects.filter(retired_at__isnull=True)
    if model is Tool:
        # A pack's tools, and the MCP tools of the servers the tenant may use.
        servers = McpServer.objects.filter(visible_to(tenant_id), enabled=True)
        rows = rows.filter(Q(mcp_server__isnull=True) | Q(mcp_server__in=servers)).select_related(
            "mcp_server"
        )
    if model is Agent:
        rows = rows.prefetch_related(Prefetch("admin_overrides", queryset=AgentGateOverride.objects.all()))
    return rows


class CatalogListApi(generics.ListAPIView):
    """Definitions in service (retired ones are left out), by id and version."""

    pagination_class = CatalogPagination
    permission_classes = [IsTenantMember]
    model = None

    def get_queryset(self):
        return _queryset(self.model, self.request.user.membership.tenant_id)

    def get_serializer_context(self):
        # The admins' overrides shown are those that gate the caller's tenant's runs.
        return super().get_serializer_context() | {"tenant_id": self.request.user.membership.tenant_id}


def _newest(model, definition_id: str, version: str | None, what: str, tenant_id):
    rows = list(_queryset(model, tenant_id).filter(key=definition_id))
    if version:
        rows = [row for row in rows if row.version == version]
    if not rows:
        raise DefinitionNotFoundError(
            f'there is no {what} "{definition_id}"' + (f" version {version}" if version else "")
        )
    return max(rows, key=lambda row: semver_key(row.version))


class CatalogDetailApi(APIView):
    """One definition: the newest version in service, or ``?version=``."""

    permission_classes = [IsTenantMember]
    model = None
    serializer_class = None
    what = ""

    def get(self, request, definition_id):
        tenant_id = request.user.membership.tenant_id
        row = _newest(self.model, definition_id, request.query_params.get("version"), self.what, tenant_id)
        context = {"tenant_id": tenant_id}
        return Response(self.serializer_class(row, context=context).data)


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


def _overrides_of(agent: Agent, tenant) -> dict:
    rows = (
        AgentGateOverride.objects.filter(agent=agent)
        .filter(Q(tenant__isnull=True) | Q(tenant=tenant))
        .select_related("changed_by")
    )
    return {"agentId": agent.key, "agentVersion": agent.version, "items": list(rows)}


@extend_schema(parameters=[VERSION])
class AgentOverridesApi(APIView):
    """The admins' gate overrides of an agent (its newest version in service, or ``?version=``)
    that gate your tenant's runs: the site's, and your tenant's own, which win."""

    permission_classes = [IsTenantMember]

    @extend_schema(responses=OverrideListSerializer)
    def get(self, request, definition_id):
        agent = _newest(Agent, definition_id, request.query_params.get("version"), "agent", None)
        return Response(OverrideListSerializer(_overrides_of(agent, request.user.membership.tenant)).data)


@extend_schema(parameters=[VERSION])
class AgentOverrideApi(APIView):
    """Set or clear your tenant's override of an agent's gate for one of its tools (tenant admins).
    It is the agent's side of the gate: it never lowers what your approval rules ask or deny."""

    permission_classes = [IsTenantAdmin]

    @extend_schema(request=SetOverrideSerializer, responses=OverrideListSerializer)
    def put(self, request, definition_id, tool_id):
        data = SetOverrideSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        agent = _newest(Agent, definition_id, request.query_params.get("version"), "agent", None)
        tenant = request.user.membership.tenant
        check_set_override(
            agent=agent,
            tenant=tenant,
            tool_id=tool_id,
            gate=data.validated_data["gate"],
            condition=data.validated_data["condition"],
            acting_user=request.user,
            surface=surface_of(request),
        )
        return Response(OverrideListSerializer(_overrides_of(agent, tenant)).data)

    @extend_schema(request=None, responses=OverrideListSerializer)
    def delete(self, request, definition_id, tool_id):
        agent = _newest(Agent, definition_id, request.query_params.get("version"), "agent", None)
        tenant = request.user.membership.tenant
        cleared = check_clear_override(
            agent=agent, tenant=tenant, tool_id=tool_id, acting_user=request.user, surface=surface_of(request)
        )
        if not cleared:
            raise DefinitionNotFoundError(f"your tenant has no override of {agent.key} for {tool_id!r}")
        return Response(OverrideListSerializer(_overrides_of(agent, tenant)).data)


class McpServerListApi(APIView):
    """The MCP servers whose tools your tenant's runs may use (every tenant's, and your own), and
    whether each answered when it was last asked for its tools."""

    permission_classes = [IsTenantMember]

    @extend_schema(responses=McpServerListSerializer)
    def get(self, request):
        tenant_id = request.user.membership.tenant_id
        in_service = Count("tools", filter=Q(tools__retired_at__isnull=True))
        servers = McpServer.objects.filter(visible_to(tenant_id)).annotate(tools_in_service=in_service)
        return Response(McpServerListSerializer({"items": servers}).data)
