"""Benchmarks: Kindgi's own cost per tool call, per approval cycle, per page and per event,
with scripted models and no-op tools. Run `make bench`, or `python -m bench --help`."""
