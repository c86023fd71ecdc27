from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from connections.actions import check_start_connection, do_remove_connection
from connections.api.serializers import (
    AppListSerializer,
    ConnectionListSerializer,
    ConnectionSerializer,
    StartConnectionSerializer,
    StartedConnectionSerializer,
)
from connections.selectors import apps_for_tenant, connection_of, connections_of
from core.api.permissions import IsTenantMember


class AppListApi(APIView):
    """The apps you may connect: the site's, and your tenant's own."""

    permission_classes = [IsTenantMember]

    @extend_schema(responses=AppListSerializer)
    def get(self, request):
        apps = apps_for_tenant(request.user.membership.tenant_id)
        return Response(AppListSerializer({"items": apps}).data)


class ConnectionListStartApi(APIView):
    """Your connections, newest first (nobody else's, ever); POST starts one."""

    permission_classes = [IsTenantMember]

    @extend_schema(operation_id="connections_list", responses=ConnectionListSerializer)
    def get(self, request):
        return Response(ConnectionListSerializer({"items": connections_of(request.user)}).data)

    @extend_schema(request=StartConnectionSerializer, responses={201: StartedConnectionSerializer})
    def post(self, request):
        data = StartConnectionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        connection, url = check_start_connection(
            user=request.user,
            tenant=request.user.membership.tenant,
            app_name=data.validated_data["app"],
            redirect_uri=request.build_absolute_uri(reverse("console:connection-callback")),
        )
        body = StartedConnectionSerializer(connection, context={"authorize_url": url}).data
        return Response(body, status=status.HTTP_201_CREATED)


class ConnectionApi(APIView):
    """One of your connections; DELETE disconnects it (its tokens are forgotten at once)."""

    permission_classes = [IsTenantMember]

    @extend_schema(operation_id="connections_retrieve", responses=ConnectionSerializer)
    def get(self, request, connection_id):
        return Response(ConnectionSerializer(connection_of(request.user, connection_id)).data)

    @extend_schema(request=None, responses=ConnectionSerializer)
    def delete(self, request, connection_id):
        connection = do_remove_connection(user=request.user, connection_id=connection_id)
        return Response(ConnectionSerializer(connection).data)
