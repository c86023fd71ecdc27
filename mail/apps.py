from django.apps import AppConfig


class MailConfig(AppConfig):
    """Mailboxes whose mail starts runs, and the ready-made tools that read and answer it."""

    name = "mail"
    label = "mail"

    def ready(self):
        from mail import inbound  # noqa: F401  (receives the providers' inbound webhooks)
        from mail.runs import MailboxConnections
        from runs.connection_sources import register_connection_source

        register_connection_source(MailboxConnections())
