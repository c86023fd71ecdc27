import pytest

from packs.acme_ops.status_page import STATUS_PAGE
from packs.my_pack.order_book import ORDER_BOOK


@pytest.fixture(autouse=True)
def _fresh_sample_systems():
    """The sample packs' stand-in outside systems start every test as seeded."""
    ORDER_BOOK.reset()
    STATUS_PAGE.reset()
    return
