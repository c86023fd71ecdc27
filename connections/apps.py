from django.apps import AppConfig


class ConnectionsConfig(AppConfig):
    """People's connections to outside apps (OAuth 2): each one its owner's, its tokens sealed."""

    name = "connections"

    def ready(self):
        from django.db.models.signals import post_migrate

        from connections import checks  # noqa: F401  (registers the encryption key's check)
        from connections.runs import ConnectionsOfOwners, ConnectionWaitpoints
        from runs import waitpoints
        from runs.connection_sources import register_connection_source
        from runs.engine.waitpoints import CONNECTION

        post_migrate.connect(_sync_settings_apps, sender=self)
        waitpoints.register(CONNECTION, ConnectionWaitpoints())
        register_connection_source(ConnectionsOfOwners())


def _sync_settings_apps(*, using: str, verbosity: int = 1, **kwargs) -> None:
    """After every ``migrate``, the apps of ``KINDGI_CONNECTION_APPS`` are rows to connect to."""
    from django.db import connections

    from connections.actions import do_sync_settings_apps
    from connections.models import App

    if App._meta.db_table not in connections[using].introspection.table_names():
        return
    listed = do_sync_settings_apps()
    if verbosity >= 1 and listed:
        print(f"  Apps people may connect, from KINDGI_CONNECTION_APPS: {listed}")
