from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.pagination import ItemsCursorPagination
from core.api.permissions import IsTenantMember
from mail.actions import check_delete_mailbox, check_save_mailbox
from mail.api.serializers import (
    MailboxSerializer,
    MailMessageSerializer,
    MailRefusalSerializer,
    SaveMailboxSerializer,
)
from mail.selectors import mailbox_visible_to, mailboxes_visible_to, messages_of, refusals_of
from tenants.authority import surface_of


class MailboxListApi(generics.ListAPIView):
    """Mailboxes: yours, or your tenant's all for a tenant admin; POST makes one (tenant admins)."""

    serializer_class = MailboxSerializer
    pagination_class = ItemsCursorPagination
    permission_classes = [IsTenantMember]

    def get_queryset(self):
        return mailboxes_visible_to(self.request.user)

    @extend_schema(request=SaveMailboxSerializer, responses={201: MailboxSerializer})
    def post(self, request):
        tenant = request.user.membership.tenant
        data = SaveMailboxSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        mailbox = check_save_mailbox(
            tenant=tenant, fields=data.model_fields(), acting_user=request.user, surface=surface_of(request)
        )
        return Response(MailboxSerializer(mailbox).data, status=status.HTTP_201_CREATED)


class MailboxApi(APIView):
    permission_classes = [IsTenantMember]

    @extend_schema(operation_id="mailboxes_retrieve", responses=MailboxSerializer)
    def get(self, request, mailbox_id):
        return Response(MailboxSerializer(mailbox_visible_to(request.user, mailbox_id)).data)

    @extend_schema(request=SaveMailboxSerializer(partial=True), responses=MailboxSerializer)
    def patch(self, request, mailbox_id):
        mailbox = mailbox_visible_to(request.user, mailbox_id)
        data = SaveMailboxSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        mailbox = check_save_mailbox(
            tenant=mailbox.tenant,
            fields=data.model_fields(),
            mailbox=mailbox,
            acting_user=request.user,
            surface=surface_of(request),
        )
        return Response(MailboxSerializer(mailbox).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, mailbox_id):
        mailbox = mailbox_visible_to(request.user, mailbox_id)
        check_delete_mailbox(mailbox, acting_user=request.user, surface=surface_of(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class MailboxMessagesApi(generics.ListAPIView):
    """A mailbox's mail, received and sent, newest first: each with the run it started."""

    serializer_class = MailMessageSerializer
    pagination_class = ItemsCursorPagination
    permission_classes = [IsTenantMember]

    def get_queryset(self):
        return messages_of(mailbox_visible_to(self.request.user, self.kwargs["mailbox_id"]))


class MailboxRefusalsApi(generics.ListAPIView):
    """The mail a mailbox took without starting anything, or refused, and why, newest first."""

    serializer_class = MailRefusalSerializer
    pagination_class = ItemsCursorPagination
    permission_classes = [IsTenantMember]

    def get_queryset(self):
        return refusals_of(mailbox_visible_to(self.request.user, self.kwargs["mailbox_id"]))
