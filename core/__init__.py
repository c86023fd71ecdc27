"""The floor every app stands on: JSON limits, logs, secrets and redaction, channel sends,
socket authentication, the API's shared parts, and Kindgi's settings with their defaults.

Nothing here imports an app above it (tools, runs, approvals) or the site's roof.
"""
