"""A real daphne process serving the test database, for tests that talk HTTP and WebSocket."""

import sys

from bench.servers import ROOT, Daphne, free_port

__all__ = ["ROOT", "KindgiServe", "LiveServer", "database_env", "free_port"]


class LiveServer(Daphne):
    """A daphne process on the test database (``database_env``), loading the sample packs unless
    ``environment`` names others."""

    def __init__(self, environment: dict[str, str]):
        super().__init__({"KINDGI_PACKS": "packs.my_pack,packs.acme_ops"} | environment)


class KindgiServe(LiveServer):
    """``kindgi serve`` itself: daphne as the production command starts it, with its flags."""

    def command(self) -> list[str]:
        return [sys.executable, "-m", "kindgi.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port)]


def database_env(connection) -> dict[str, str]:
    """Point another process at the database this test process created."""
    database = connection.settings_dict
    if connection.vendor == "sqlite":
        return {"KINDGI_SQLITE_PATH": database["NAME"]}
    credentials = database["USER"] + (f":{database['PASSWORD']}" if database["PASSWORD"] else "")
    return {
        "DATABASE_URL": f"postgresql://{credentials}@{database['HOST']}:{database['PORT']}/{database['NAME']}"
    }
