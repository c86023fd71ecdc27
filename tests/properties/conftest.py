from tests.runs.conftest import probe_packs  # noqa: F401  (the sample and probe packs, for every test here)
