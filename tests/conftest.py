import pytest
from django.conf import settings

from packs.acme_ops.status_page import STATUS_PAGE
from packs.my_pack.order_book import ORDER_BOOK
from tests.ci import in_ci

# pytest-django turns DEBUG off, and a site without DEBUG must seal connections with a key of its
# own (kindgi.E010): the tests' own, unless the environment gives one.
TEST_ENCRYPTION_KEY = "dGVzdHMtb25seS1rZXktdGhhdC1pcy0zMi1ieXRlcyE="
if not settings.KINDGI_ENCRYPTION_KEY:
    settings.KINDGI_ENCRYPTION_KEY = TEST_ENCRYPTION_KEY

# MCP servers are listed when a test asks. Importing the ASGI application (the socket tests do)
# would otherwise start the process's refresher thread, which lists every server on its own
# schedule, in the middle of whichever test runs then: once, a listing raced an MCP fixture's
# own and wrote the same tool twice.
settings.KINDGI_MCP_REFRESH_SECONDS = 0


@pytest.fixture(autouse=True)
def _fresh_sample_systems():
    """The sample packs' stand-in outside systems start every test as seeded."""
    ORDER_BOOK.reset()
    STATUS_PAGE.reset()
    return


@pytest.fixture(autouse=True)
def _postgres_tests_run_on_postgres(request):
    """A test marked `postgres` needs PostgreSQL: `make test` runs it in its PostgreSQL pass.
    Elsewhere on SQLite it skips with the reason; in CI that would hide it, so it fails."""
    from django.conf import settings

    if request.node.get_closest_marker("postgres") is None:
        return
    if "postgresql" in settings.DATABASES["default"]["ENGINE"]:
        return
    if in_ci():
        pytest.fail("this test needs PostgreSQL, and in CI it must run: use make test (its PostgreSQL pass)")
    pytest.skip("needs PostgreSQL: make test runs it with DATABASE_URL set")
