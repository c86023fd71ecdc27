from django.urls import path

from core import converters  # noqa: F401  (registers <anyuuid:…>)
from mail.api import views

urlpatterns = [
    path("mailboxes", views.MailboxListApi.as_view(), name="mailboxes"),
    path("mailboxes/<anyuuid:mailbox_id>", views.MailboxApi.as_view(), name="mailbox"),
    path(
        "mailboxes/<anyuuid:mailbox_id>/messages", views.MailboxMessagesApi.as_view(), name="mailbox-messages"
    ),
    path(
        "mailboxes/<anyuuid:mailbox_id>/refusals", views.MailboxRefusalsApi.as_view(), name="mailbox-refusals"
    ),
]
