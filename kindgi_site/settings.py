"""Settings for the embedded profile: SQLite, immediate tasks, in-memory channel layer.

Values a deployment changes come from the environment.
"""

from pathlib import Path

from django.utils.csp import CSP

from core.conf import DEFAULTS
from core.logs import logging_config
from kindgi.gates import GateOverride
from kindgi_site.config import Environment

BASE_DIR = Path(__file__).resolve().parent.parent


ENV = Environment()

DEBUG = ENV.boolean("KINDGI_DEBUG", True)
SECRET_KEY = ENV.secret_key(debug=DEBUG)
ALLOWED_HOSTS = ENV.listing("ALLOWED_HOSTS", "127.0.0.1,localhost")

INSTALLED_APPS = [
    "daphne",
    "kindgi_site.apps.KindgiAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "django_htmx",
    "django_tasks_db",
    "kindgi_site",
    "tenants",
    "audit",
    "tools",
    "runs",
    "approvals",
    "connections",
    "anymail",
    "mail",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "core.middleware.RefuseNulMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    # Before anything reads a form: what is posted is what is stored, scrubbed of secrets.
    "core.middleware.ScrubSecretsMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

# Messages (a new API token, shown once) are kept in the session, on the server: never in a cookie.
MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"

# Scripts, styles and everything else from this site only: no inline script or style, no eval,
# no frames around it. The console and the admin need nothing more; the API docs page widens it.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

ROOT_URLCONF = "kindgi_site.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

ASGI_APPLICATION = "kindgi_site.asgi.application"

# The embedded default is a SQLite file; DATABASE_URL (e.g. postgres://user@host:5432/kindgi)
# selects another database.
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": ENV.text("KINDGI_SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
        # Writers take the lock when their transaction begins and wait their turn for it,
        # so concurrent requests and tool threads queue instead of failing with "locked".
        # Write-ahead logging: readers (the console) never wait for the engine's writes, and a
        # commit appends to the log. With synchronous=NORMAL a commit survives the process
        # dying at any point; one made in the instant before a power cut may be lost (FULL
        # syncs at every commit: KINDGI_SQLITE_SYNCHRONOUS=FULL).
        "OPTIONS": {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL;PRAGMA synchronous="
            + ENV.choice("KINDGI_SQLITE_SYNCHRONOUS", "NORMAL", ("NORMAL", "FULL")),
        },
        # Kept between requests by the thread that serves them (core.asgi.RequestThreads):
        # opening one costs more than most requests' queries.
        "CONN_MAX_AGE": ENV.integer("KINDGI_DB_CONN_MAX_AGE", 60),
        "CONN_HEALTH_CHECKS": True,
        # A file, not shared memory: tests then lock and wait as the server does.
        "TEST": {"NAME": str(BASE_DIR / "test-db.sqlite3")},
    }
}
DATABASES["default"] = ENV.database(DATABASES["default"])

# In memory for one process; REDIS_URL (redis://host:6379/0) shares events between processes.
CHANNEL_LAYERS = ENV.channel_layers()
CACHES = ENV.caches()

# Runs execute through Django's Tasks framework: at once, inside the call that starts or
# resumes them (the default), or queued for `kindgi worker` processes: in the database, or in
# Redis through RQ or Celery (docs/operations.md, "Queues").
TASKS = ENV.tasks()
KINDGI_TASK_QUEUE = ENV.task_queue()
globals().update(ENV.queue_settings())
if KINDGI_TASK_QUEUE == "rq":
    INSTALLED_APPS.append("django_rq")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

LOGIN_URL = "console:login"
LOGIN_REDIRECT_URL = "console:queue"
LOGOUT_REDIRECT_URL = "console:login"

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "tenants.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["core.api.permissions.IsTenantMember"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["core.api.parsers.LimitedJSONParser"],
    "EXCEPTION_HANDLER": "kindgi_site.api.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Kindgi API",
    "DESCRIPTION": "Run agents and flows whose tools declare what they change; decide their approvals.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.api.schema.add_error_responses",
        "approvals.api.schema.state_what_a_decision_holds",
    ],
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": "runs.models.RunStatus",
        "ApprovalStatusEnum": "approvals.models.ApprovalStatus",
        # Two choice sets of fields named "gate": an admin's override of an agent's gate, and a
        # tenant rule's.
        "OverrideGateEnum": [gate.value for gate in GateOverride],
        "ApprovalRuleGateEnum": "approvals.models.ApprovalRule.Gate",
        "ConnectionStatusEnum": "connections.models.Connection.Status",
    },
}

# Python packages whose `pack` (made with kindgi.define_pack) the catalog loads.
# A model for agents that name none, e.g. "openai:gpt-4.1-mini".
KINDGI_DEFAULT_MODEL = ENV.text("KINDGI_DEFAULT_MODEL")

# Seconds an executor holds a run before another may take it over (renewed at every step, and
# by a heartbeat while a tool call runs: runs.heartbeat).
KINDGI_RUN_LEASE_SECONDS = ENV.integer("KINDGI_RUN_LEASE_SECONDS", 300)

# Limits on what clients and models send: a request body (API and console forms), how deep
# JSON may nest, and the size of one tool call's arguments as JSON.
KINDGI_MAX_REQUEST_BYTES = ENV.integer("KINDGI_MAX_REQUEST_BYTES", 1_048_576)
DATA_UPLOAD_MAX_MEMORY_SIZE = KINDGI_MAX_REQUEST_BYTES
KINDGI_MAX_JSON_DEPTH = ENV.integer("KINDGI_MAX_JSON_DEPTH", 32)
KINDGI_MAX_TOOL_ARGUMENTS_BYTES = ENV.integer("KINDGI_MAX_TOOL_ARGUMENTS_BYTES", 262_144)

# Console sign-in: failed attempts allowed per username (ten times as many per address) in a window.
KINDGI_SIGNIN_ATTEMPTS = ENV.integer("KINDGI_SIGNIN_ATTEMPTS", 5)
KINDGI_SIGNIN_WINDOW_SECONDS = ENV.integer("KINDGI_SIGNIN_WINDOW_SECONDS", 900)

# The proxies in front of the web processes (addresses and CIDRs): only a request from one of them
# is believed about the client it forwards for (X-Forwarded-For; core.addresses). None by default.
KINDGI_TRUSTED_PROXIES = ENV.networks("KINDGI_TRUSTED_PROXIES")

# How many times one agent turn may ask the model before it must answer.
KINDGI_MAX_MODEL_STEPS = ENV.integer("KINDGI_MAX_MODEL_STEPS", 25)

# Reviewer roles, lowest first: a reviewer may decide what needs their role or a lower one.
KINDGI_REVIEWER_ROLES = ["standard", "senior", "admin"]
# A reviewer's role and a rule's required role are one set of choices: one name in the API schema.
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]["ReviewerRoleEnum"] = KINDGI_REVIEWER_ROLES

# Four-eyes: a reviewer may not decide the calls of a run they started.
KINDGI_FOUR_EYES = ENV.boolean("KINDGI_FOUR_EYES", False)
KINDGI_GRANT_MAX_SECONDS = ENV.integer("KINDGI_GRANT_MAX_SECONDS", 86_400)
# How many times reviewers may send one agent turn's calls back for changes.
KINDGI_MAX_CHANGE_REQUESTS = ENV.integer("KINDGI_MAX_CHANGE_REQUESTS", 3)

# Seconds before a pending approval expires (None: never), unless its rule says otherwise.
KINDGI_APPROVAL_TTL_SECONDS = ENV.integer("KINDGI_APPROVAL_TTL_SECONDS", 0) or None

# Reviewers hear of approvals by mail (through KINDGI_MAILER), with one-time decision links that
# start with KINDGI_PUBLIC_URL and work for KINDGI_DECISION_LINK_HOURS at most; they are
# reminded KINDGI_REMINDER_SECONDS before an approval expires (0: no reminders).
KINDGI_PUBLIC_URL = ENV.text("KINDGI_PUBLIC_URL", "http://127.0.0.1:8000")
KINDGI_DECISION_LINK_HOURS = min(ENV.integer("KINDGI_DECISION_LINK_HOURS", 72), 72)
KINDGI_REMINDER_SECONDS = ENV.integer("KINDGI_REMINDER_SECONDS", 600)

# Expiry, webhook retries and stuck-run recovery run on their own: in kindgi dev and in every
# worker, one process at a time (runs.sweeper), every this many seconds (0: only by command).
KINDGI_SWEEP_SECONDS = ENV.integer("KINDGI_SWEEP_SECONDS", 5)
KINDGI_SWEEP_LIMIT = ENV.integer("KINDGI_SWEEP_LIMIT", 100)

KINDGI_PACKS = ENV.listing("KINDGI_PACKS", "packs.my_pack,packs.acme_ops,packs.kindgi_mail")
# Packs loaded beside those: `kindgi dev --pack PATH` names the packs it serves from folders here.
KINDGI_PACKS += [pack for pack in ENV.listing("KINDGI_EXTRA_PACKS", "") if pack not in KINDGI_PACKS]

# MCP servers whose tools every tenant's agents may use, e.g. [{"name": "files", "command":
# ["python", "server.py"]}, {"name": "tracker", "url": "http://127.0.0.1:9000/mcp", "headers":
# {"Authorization": "env:TRACKER_TOKEN"}}]. Tenants add their own in the admin.
KINDGI_MCP_SERVERS = ENV.json_list("KINDGI_MCP_SERVERS")
KINDGI_MCP_TIMEOUT_SECONDS = ENV.integer("KINDGI_MCP_TIMEOUT_SECONDS", 30)
# A tenant's server may read these names of Kindgi's environment as env:NAME (its headers'
# values): any other name is refused, so a tenant can never send Kindgi's own secrets anywhere.
KINDGI_MCP_ENV_ALLOWED = ENV.listing("KINDGI_MCP_ENV_ALLOWED", "")
# Whether a tenant's server may be on a loopback, link-local or private address (this machine,
# its network): off by default, since a tenant could otherwise reach what only Kindgi should.
KINDGI_MCP_ALLOW_PRIVATE = ENV.boolean("KINDGI_MCP_ALLOW_PRIVATE", False)
# How long a call of /mcp waits for its run before answering with where the run stands.
KINDGI_MCP_CALL_WAIT_SECONDS = ENV.integer("KINDGI_MCP_CALL_WAIT_SECONDS", 20)
# The keys that seal people's connection tokens at rest: Fernet keys, comma-separated, newest
# first (README, "Connections": rotating a key). Required in production (kindgi.E010).
KINDGI_ENCRYPTION_KEY = ENV.text("KINDGI_ENCRYPTION_KEY")
# Apps (OAuth 2 providers) every tenant's people may connect: [{"name": "tracker", "authorizeUrl":
# …, "tokenUrl": …, "scopes": [...], "clientId": …, "clientSecretEnv": "TRACKER_CLIENT_SECRET",
# "apiBaseUrl": …}]. Tenants add their own in the admin.
KINDGI_CONNECTION_APPS = ENV.json_list("KINDGI_CONNECTION_APPS")

# Outgoing mail (Django's mailers): printed to the console in development (unless KINDGI_SMTP_HOST
# is set); in production, SMTP to KINDGI_SMTP_HOST (default localhost, a local MTA), with
# KINDGI_SMTP_PORT (25), KINDGI_SMTP_USER, KINDGI_SMTP_PASSWORD and KINDGI_SMTP_TLS (STARTTLS, off).
# Kindgi's mail tools send through KINDGI_MAILER, a MAILERS alias.
if DEBUG and not ENV.text("KINDGI_SMTP_HOST"):
    MAILERS = {"default": {"BACKEND": "mail.terminal.ReadableConsoleBackend"}}
else:
    MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {
                "host": ENV.text("KINDGI_SMTP_HOST", "localhost"),
                "port": ENV.integer("KINDGI_SMTP_PORT", 25),
                "username": ENV.text("KINDGI_SMTP_USER"),
                "password": ENV.text("KINDGI_SMTP_PASSWORD"),
                "use_tls": ENV.boolean("KINDGI_SMTP_TLS", False),
                "timeout": 30,
            },
        }
    }
KINDGI_MAILER = ENV.text("KINDGI_MAILER", "default")
DEFAULT_FROM_EMAIL = ENV.text("KINDGI_MAIL_FROM", "kindgi@localhost")
# Inbound mail from a provider (django-anymail): Mailgun's webhook signing key turns on
# /mail/inbound/mailgun/inbound/, whose requests anymail checks against it.
ANYMAIL = {"MAILGUN_WEBHOOK_SIGNING_KEY": ENV.text("KINDGI_MAILGUN_WEBHOOK_SIGNING_KEY")}
# DKIM public keys known ahead of DNS (a JSON object), and the SMTP receiver's limits.
KINDGI_MAIL_DKIM_KEYS = ENV.json_object("KINDGI_MAIL_DKIM_KEYS")
KINDGI_MAIL_MAX_BYTES = ENV.integer("KINDGI_MAIL_MAX_BYTES", 26_214_400)
KINDGI_MAIL_MAX_CONNECTIONS = ENV.integer("KINDGI_MAIL_MAX_CONNECTIONS", 50)
KINDGI_MAIL_MAX_RECIPIENTS = ENV.integer("KINDGI_MAIL_MAX_RECIPIENTS", 20)
KINDGI_MAIL_TIMEOUT_SECONDS = ENV.integer("KINDGI_MAIL_TIMEOUT_SECONDS", 60)

# Web and worker processes list the servers again this often (seconds; 0: only on demand).
KINDGI_MCP_REFRESH_SECONDS = ENV.integer("KINDGI_MCP_REFRESH_SECONDS", 300)

# Production logs are JSON lines, each line about a run carrying its id (core.logs).
LOGGING = logging_config(
    log_format=ENV.choice("KINDGI_LOG_FORMAT", "text" if DEBUG else "json", ("text", "json")),
    level=ENV.choice("KINDGI_LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR")),
)

# --- Traces (core.tracing; docs/operations.md, "Traces") ---
# OpenTelemetry spans over OTLP/HTTP to this collector; unset, traces are off and cost nothing.
KINDGI_OTEL_ENDPOINT = ENV.text("OTEL_EXPORTER_OTLP_ENDPOINT")
# Spans carry what was said and done (messages, tool arguments and results, a reviewer's
# rationale) only when this opts in.
KINDGI_OTEL_CAPTURE_CONTENT = ENV.boolean("KINDGI_OTEL_CAPTURE_CONTENT", False)
# --- end of traces ---

# Who may read /metrics: a scraper sending this bearer token. Unset, only `kindgi dev` serves it,
# and only to this machine (KINDGI_DEV_SERVER, which `kindgi dev` sets, with DEBUG on).
KINDGI_METRICS_TOKEN = ENV.text("KINDGI_METRICS_TOKEN")
KINDGI_DEV_SERVER = DEBUG and ENV.boolean("KINDGI_DEV_SERVER", False)

if not DEBUG:
    # Production behind HTTPS: cookies only over it, HSTS, and the proxy's word on the scheme.
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = True
    SESSION_COOKIE_HTTPONLY = True
    SECURE_SSL_REDIRECT = ENV.boolean("KINDGI_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = ENV.integer("KINDGI_HSTS_SECONDS", 31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = ENV.boolean("KINDGI_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = ENV.boolean("KINDGI_HSTS_PRELOAD", False)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    # The ready and health probes come from the load balancer over plain HTTP.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]

# Every Kindgi setting this file leaves out, at its default: a read (core.conf.setting) is then a
# cached attribute, not a miss that falls back on the default each time (1.4 µs, on every step).
for _name, _default in DEFAULTS.items():
    globals().setdefault(_name, _default)
