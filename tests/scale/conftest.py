import socket

import pytest

from tests.ci import in_ci
from tests.runs.conftest import probe_packs  # noqa: F401  (the sample and probe packs, for every test here)


@pytest.fixture
def redis_server():
    """Redis on 127.0.0.1:6379. In CI (.ci/run starts it) its absence is an error, elsewhere a skip."""
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=2).close()
    except OSError as error:
        if in_ci():
            pytest.fail(
                f"the scale-out tests must run in CI, and Redis does not answer on 127.0.0.1:6379 ({error})"
            )
        pytest.skip("needs Redis on 127.0.0.1:6379 (CI starts it)")
