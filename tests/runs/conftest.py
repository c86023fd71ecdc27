import pytest
from django.test import override_settings

from tests.pack_fixtures.probes import LEDGER, SCRIPT, TIMELINE

PACKS = ["packs.my_pack", "packs.acme_ops", "tests.pack_fixtures.probes"]


@pytest.fixture(autouse=True)
def probe_packs():
    """The sample packs and the probe pack; a fresh script and timeline for each test."""
    SCRIPT.reset()
    TIMELINE.reset()
    LEDGER.reset()
    with override_settings(KINDGI_PACKS=PACKS, KINDGI_MODEL_RETRY_DELAY_SECONDS=0):
        yield
