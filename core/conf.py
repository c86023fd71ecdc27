"""Kindgi's settings, each with its default, read in one place.

``kindgi_site.settings`` sets most of them from the environment; a site (or a test) that leaves
one out gets the default here, so no module keeps a default of its own.
"""

from typing import Any

from django.conf import settings

DEFAULTS: dict[str, Any] = {
    # Seconds an executor holds a run before another may take it over.
    "KINDGI_RUN_LEASE_SECONDS": 300,
    # How many times one agent turn may ask the model before it must answer.
    "KINDGI_MAX_MODEL_STEPS": 25,
    "KINDGI_MODEL_ATTEMPTS": 3,
    "KINDGI_MODEL_RETRY_DELAY_SECONDS": 0.5,
    "KINDGI_MODEL_TIMEOUT_SECONDS": 60,
    "KINDGI_DEFAULT_MODEL": "",
    # The environment variables that hold provider keys: redacted, never shown or journaled.
    "KINDGI_PROVIDER_KEY_VARIABLES": (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GROQ_API_KEY",
        "MISTRAL_API_KEY",
        "GOOGLE_API_KEY",
        "KINDGI_OPENAI_COMPATIBLE_API_KEY",
    ),
    "KINDGI_MAX_REQUEST_BYTES": 1_048_576,
    "KINDGI_MAX_JSON_DEPTH": 32,
    "KINDGI_MAX_TOOL_ARGUMENTS_BYTES": 262_144,
    # Reviewer roles, lowest first.
    "KINDGI_REVIEWER_ROLES": ("standard", "senior", "admin"),
    "KINDGI_FOUR_EYES": False,
    # How many times reviewers may send one agent turn's calls back for changes; after that, the
    # next call is approved or rejected.
    "KINDGI_MAX_CHANGE_REQUESTS": 3,
    # The longest a standing grant may last, in seconds.
    "KINDGI_GRANT_MAX_SECONDS": 86_400,
    # Seconds before a pending approval expires (None: never), unless its rule says otherwise.
    "KINDGI_APPROVAL_TTL_SECONDS": None,
    # Reviewers are reminded of an approval this many seconds before it expires (0: never).
    "KINDGI_REMINDER_SECONDS": 600,
    # A decision link in a notification works for at most this many hours.
    "KINDGI_DECISION_LINK_HOURS": 72,
    # Where people reach this server: the start of the links in notification mails.
    "KINDGI_PUBLIC_URL": "http://127.0.0.1:8000",
    # How often open WebSockets' access is checked again (all of a process's at once): a socket
    # whose token is revoked closes within this (and the check's own time).
    "KINDGI_SOCKET_RECHECK_SECONDS": 2,
    "KINDGI_WEBHOOK_TIMEOUT_SECONDS": 5,
    "KINDGI_WEBHOOK_MAX_ATTEMPTS": 6,
    "KINDGI_WEBHOOK_BACKOFF_SECONDS": 30,
    # MCP servers for every tenant (a JSON list; tenants add their own in the admin), how long a
    # call or a listing may take, and how often listings are refreshed.
    "KINDGI_ENCRYPTION_KEY": "",
    # Apps people may connect, for every tenant (a JSON list; tenants add their own in the admin).
    "KINDGI_CONNECTION_APPS": (),
    "KINDGI_MCP_SERVERS": (),
    "KINDGI_MCP_TIMEOUT_SECONDS": 30,
    # The environment variables a tenant's MCP server may read as env:NAME, and whether it may be
    # on a loopback, link-local or private address.
    "KINDGI_MCP_ENV_ALLOWED": (),
    "KINDGI_MCP_ALLOW_PRIVATE": False,
    "KINDGI_MCP_REFRESH_SECONDS": 300,
    # How long a call of Kindgi's /mcp endpoint waits for its run before answering with where the
    # run stands (waiting for an approval, still running).
    "KINDGI_MCP_CALL_WAIT_SECONDS": 20,
    # DKIM public keys known ahead of DNS: {"<selector>._domainkey.<domain>": "v=DKIM1; …"}.
    "KINDGI_MAIL_DKIM_KEYS": {},
    # The SMTP receiver's limits: the largest mail it takes (each mailbox may take less), open
    # connections at once, recipients per mail, and seconds a quiet connection is kept.
    "KINDGI_MAIL_MAX_BYTES": 26_214_400,
    "KINDGI_MAIL_MAX_CONNECTIONS": 50,
    "KINDGI_MAIL_MAX_RECIPIENTS": 20,
    "KINDGI_MAIL_TIMEOUT_SECONDS": 60,
    # How often a sweeper (kindgi dev's, each worker's) runs the periodic sweeps (0: never), and
    # how many items each sweep handles a round.
    "KINDGI_SWEEP_SECONDS": 5,
    # Which queue runs go through (KINDGI_TASKS): immediate, db, rq or celery.
    "KINDGI_TASK_QUEUE": "immediate",
    "KINDGI_SWEEP_LIMIT": 100,
    # The proxies (addresses, CIDRs) whose X-Forwarded-For is believed (core.addresses).
    "KINDGI_TRUSTED_PROXIES": (),
    # The mailer (a MAILERS alias) that Kindgi's mail tools send through.
    "KINDGI_MAILER": "default",
    # Traces (core.tracing): the OTLP/HTTP collector they go to (unset: none are made), and
    # whether spans carry content (messages, tool arguments and results, rationales).
    "KINDGI_OTEL_ENDPOINT": "",
    "KINDGI_OTEL_CAPTURE_CONTENT": False,
}


def setting(name: str) -> Any:
    """The site's value of ``name``, or its default. An unknown name is a bug: KeyError."""
    return getattr(settings, name, DEFAULTS[name])
