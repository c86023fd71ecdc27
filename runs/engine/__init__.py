"""The run engine: plain Python that executes flows and agent turns step by step.

It reads the journal to know what is done, calls models and tools outside any
transaction, and records every step through ``runs.actions``. Nothing here
knows about HTTP, the API or WebSockets.
"""
