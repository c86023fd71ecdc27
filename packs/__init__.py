"""Sample packs used by the docs, the tests and `make run`."""
