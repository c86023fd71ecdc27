"""A module in KINDGI_PACKS that forgot to define `pack`."""
