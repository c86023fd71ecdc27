import pytest
from django.test import override_settings

from tests.runs.conftest import PACKS


@pytest.fixture(autouse=True)
def probe_packs():
    from tests.pack_fixtures.probes import LEDGER, SCRIPT, TIMELINE

    SCRIPT.reset()
    TIMELINE.reset()
    LEDGER.reset()
    with override_settings(KINDGI_PACKS=PACKS):
        yield
