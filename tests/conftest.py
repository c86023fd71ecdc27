import pytest

from packs.acme_ops.status_page import STATUS_PAGE
from packs.my_pack.order_book import ORDER_BOOK


@pytest.fixture(autouse=True)
def _fresh_sample_systems():
    """The sample packs' stand-in outside systems start every test as seeded."""
    ORDER_BOOK.reset()
    STATUS_PAGE.reset()
    return


def pytest_collection_modifyitems(config, items):
    """Outside PostgreSQL, the tests that need it skip with a reason; `make test` runs them there."""
    from django.conf import settings

    if "postgresql" in settings.DATABASES["default"]["ENGINE"]:
        return
    needs_postgres = pytest.mark.skip(reason="needs PostgreSQL: make test runs it with DATABASE_URL set")
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(needs_postgres)
