"""Every environment variable Kindgi's server reads, and the table of them in docs/operations.md.

The names and their defaults come from the code that reads them (found by reading its syntax, so
that a variable read only in production, or only with a database, is found too); what each one
does is said here. A name read and not said here, or said and no longer read, is an error, and
the documentation's table must be the one this prints (``tests/test_settings_reference.py``):

    .venv/bin/python -m kindgi_site.settings_reference           # print the table
    .venv/bin/python -m kindgi_site.settings_reference --write   # update docs/operations.md
"""

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The server's code: not the CLI (its variables are in docs/api.md), not the tests.
SERVER_PACKAGES = (
    "kindgi_site",
    "core",
    "runs",
    "approvals",
    "tenants",
    "tools",
    "connections",
    "mail",
    "audit",
)
# ``kindgi_site.config.Environment``'s readers: the second argument, when given, is the default.
READERS = {"text", "boolean", "integer", "json_list", "json_object", "listing", "networks", "choice"}
DOCUMENT = ROOT / "docs" / "operations.md"
START, END = "<!-- settings table: generated, do not edit -->", "<!-- end of the settings table -->"

# What each does. A default the code computes is said in words (DEFAULT_IN_WORDS).
SAID: dict[str, str] = {
    # The deployment
    "KINDGI_DEBUG": "`false` in production: secure cookies, HSTS, the HTTPS redirect, JSON logs; "
    "`SECRET_KEY` and `KINDGI_ENCRYPTION_KEY` required; no development admin",
    "SECRET_KEY": "Django's secret key: required in production, at least 50 random characters",
    "ALLOWED_HOSTS": "the host names this server answers to, comma-separated",
    "KINDGI_SSL_REDIRECT": "in production, redirect plain HTTP to HTTPS (the proxy says which it was "
    "in `X-Forwarded-Proto`); `false` only to try production settings over plain HTTP on one machine",
    "KINDGI_HSTS_SECONDS": "in production, how long browsers keep to HTTPS (`Strict-Transport-Security`)",
    "KINDGI_HSTS_INCLUDE_SUBDOMAINS": "in production, whether HSTS covers subdomains",
    "KINDGI_HSTS_PRELOAD": "in production, whether HSTS asks to be preloaded",
    "KINDGI_TRUSTED_PROXIES": "the proxies in front of the web processes, as addresses and CIDRs, "
    "comma-separated (`10.0.0.0/8,127.0.0.1`): only a request whose TCP peer is one of them is "
    "believed about the client it forwards for (the right-most `X-Forwarded-For` entry that is not a "
    "trusted proxy), which the sign-in limits count",
    "KINDGI_PUBLIC_URL": "where people reach this server: the start of the links in mails",
    "KINDGI_DEV_SERVER": "set by `kindgi dev` (with `KINDGI_DEBUG` on): `/metrics` answers this "
    "machine without a token; ignored in production",
    # Data, queue, events
    "DATABASE_URL": "PostgreSQL (`postgres://user@host:5432/kindgi`), in place of the SQLite file",
    "KINDGI_SQLITE_PATH": "the SQLite file, when there is no `DATABASE_URL`",
    "KINDGI_SQLITE_SYNCHRONOUS": "SQLite's sync in WAL mode: with `NORMAL` a commit survives the "
    "process dying at any moment, and one made just before a power cut may be lost; `FULL` syncs at "
    "every commit",
    "KINDGI_DB_POOL_SIZE": "PostgreSQL connections per process, in a pool (`0`: no pool)",
    "KINDGI_DB_CONN_MAX_AGE": "without a pool (SQLite, or a pool size of 0), how many seconds a "
    "thread keeps its database connection between requests (`0`: a new one each request)",
    "REDIS_URL": "Redis: live events between processes (publish/subscribe) and the cache that counts "
    "failed sign-ins, and the queue of `KINDGI_TASKS=rq` or `celery`; unset, events and counts stay in "
    "each process",
    "KINDGI_TASKS": "where runs execute: `immediate`, inside the call that starts or resumes them; "
    "`db`, queued in the database for `kindgi worker` processes; `rq` or `celery`, queued in Redis "
    "(`REDIS_URL`) for `kindgi worker --backend rq|celery` and a `kindgi sweeper` (the `rq` or "
    "`celery` extra)",
    "KINDGI_RUN_LEASE_SECONDS": "how long an executor holds a run before another may take it over "
    "(renewed at every step, and while a tool call runs)",
    "KINDGI_SWEEP_SECONDS": "how often the sweeps (recovery, schedules, escalation, expiry, webhooks, "
    "reminders, notification mail) run in `kindgi dev` and the workers (`0`: only by command)",
    "KINDGI_SWEEP_LIMIT": "how many items one sweep handles a round",
    # Packs and models
    "KINDGI_PACKS": "the packs the catalog loads (Python packages), comma-separated",
    "KINDGI_EXTRA_PACKS": "packs loaded beside those (`kindgi dev --pack` sets it)",
    "KINDGI_DEFAULT_MODEL": "the model of agents that name none (`openai:gpt-4.1-mini`, "
    "`openai-compatible:llama3.2@http://127.0.0.1:11434/v1`)",
    "OPENAI_API_KEY": "the key for `openai:` models (read from the environment only, never shown)",
    "ANTHROPIC_API_KEY": "the key for `anthropic:` models (read from the environment only, never shown)",
    "ANTHROPIC_BASE_URL": "where `anthropic:` models are asked (a proxy, or a server that speaks it)",
    "KINDGI_OPENAI_COMPATIBLE_API_KEY": "the key for `openai-compatible:` models, if their server needs one",
    "KINDGI_MAX_MODEL_STEPS": "how many times one agent turn may ask the model before it must answer",
    # Limits on input
    "KINDGI_MAX_REQUEST_BYTES": "the largest request body (API and console forms)",
    "KINDGI_MAX_JSON_DEPTH": "how deep JSON may nest",
    "KINDGI_MAX_TOOL_ARGUMENTS_BYTES": "the largest one tool call's arguments may be, as JSON",
    "KINDGI_SIGNIN_ATTEMPTS": "failed console sign-ins allowed per username in a window (ten times "
    "as many per address)",
    "KINDGI_SIGNIN_WINDOW_SECONDS": "that window",
    # Approvals
    "KINDGI_FOUR_EYES": "nobody decides the calls of a run they started",
    "KINDGI_GRANT_MAX_SECONDS": "the longest a standing grant may last",
    "KINDGI_MAX_CHANGE_REQUESTS": "how many times reviewers may send one agent turn's calls back for changes",
    "KINDGI_APPROVAL_TTL_SECONDS": "seconds before a pending approval expires, unless its rule says "
    "otherwise (`0`: never)",
    "KINDGI_DECISION_LINK_HOURS": "how long a decision link in a mail works at most (72 is the ceiling)",
    "KINDGI_REMINDER_SECONDS": "how long before expiry reviewers are reminded (`0`: never)",
    # MCP and connections
    "KINDGI_MCP_SERVERS": "MCP servers whose tools every tenant's agents may use (a JSON list; "
    "tenants add their own in the admin)",
    "KINDGI_MCP_TIMEOUT_SECONDS": "how long an MCP call or listing may take",
    "KINDGI_MCP_REFRESH_SECONDS": "how often MCP servers are listed again (`0`: only on demand)",
    "KINDGI_MCP_ENV_ALLOWED": "the names of Kindgi's environment a tenant's MCP server may read as "
    "`env:NAME` in its headers, comma-separated: any other is refused",
    "KINDGI_MCP_ALLOW_PRIVATE": "`true` lets a tenant's MCP server be on a loopback, link-local or "
    "private address (checked on the address its name resolves to, at each connection)",
    "KINDGI_MCP_CALL_WAIT_SECONDS": "how long a call of `/mcp` waits for its run before answering "
    "with where the run stands",
    "KINDGI_ENCRYPTION_KEY": "required in production: the Fernet keys that seal people's connection "
    "tokens at rest, comma-separated, newest first",
    "KINDGI_CONNECTION_APPS": "apps (OAuth 2 providers) every tenant's people may connect (a JSON list)",
    # Mail
    "KINDGI_SMTP_HOST": "outgoing mail's SMTP server; in development, mail is printed to the "
    "terminal unless this is set",
    "KINDGI_SMTP_PORT": "its port",
    "KINDGI_SMTP_USER": "its user, if it needs one",
    "KINDGI_SMTP_PASSWORD": "its password (never shown)",
    "KINDGI_SMTP_TLS": "STARTTLS to it",
    "KINDGI_MAILER": "the `MAILERS` alias notifications go through",
    "KINDGI_MAIL_FROM": "the sender of Kindgi's mail",
    "KINDGI_MAILGUN_WEBHOOK_SIGNING_KEY": "turns on Mailgun's inbound webhook, whose requests are "
    "checked against it",
    "KINDGI_MAIL_DKIM_KEYS": "DKIM public keys known ahead of DNS (a JSON object)",
    "KINDGI_MAIL_MAX_BYTES": "the SMTP receiver's largest message",
    "KINDGI_MAIL_MAX_CONNECTIONS": "the SMTP receiver's connections at once",
    "KINDGI_MAIL_MAX_RECIPIENTS": "the SMTP receiver's recipients per message",
    "KINDGI_MAIL_TIMEOUT_SECONDS": "how long the SMTP receiver waits on a silent client",
    # Watching it
    "KINDGI_METRICS_TOKEN": "the bearer token Prometheus scrapes `/metrics` with (unset: no metrics, "
    "but from `kindgi dev` to this machine)",
    "KINDGI_LOG_FORMAT": "`json` lines or `text`",
    "KINDGI_LOG_LEVEL": "`DEBUG`, `INFO`, `WARNING` or `ERROR`",
    "OTEL_EXPORTER_OTLP_ENDPOINT": "turns traces on: the OpenTelemetry collector spans go to over "
    "OTLP/HTTP (`http://127.0.0.1:4318`; `/v1/traces` is added); the exporter's other `OTEL_EXPORTER_"
    "OTLP_*` variables (headers, timeout) apply too (section Traces)",
    "OTEL_SERVICE_NAME": "the service name traces carry",
    "KINDGI_OTEL_CAPTURE_CONTENT": "spans carry content too: messages, tool arguments and results, a "
    "reviewer's rationale and edits (`false`: names, ids, timings, tokens and decisions only)",
}

DEFAULT_IN_WORDS = {
    "SECRET_KEY": "a development key (refused in production)",
    "KINDGI_SQLITE_PATH": "`db.sqlite3` beside `manage.py`",
    "KINDGI_LOG_FORMAT": "`text` in development, `json` in production",
    "DATABASE_URL": "none: the SQLite file",
    "REDIS_URL": "none",
    "KINDGI_SMTP_HOST": "`localhost` in production; none in development",
}


@dataclass(frozen=True)
class Read:
    name: str
    default: str  # as the table shows it
    where: str  # the first file that reads it, for errors


def names_read() -> dict[str, Read]:
    """Each environment variable the server's code reads, with the default it gives."""
    found: dict[str, Read] = {}
    for package in SERVER_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts or path.name == Path(__file__).name:
                continue
            for name, default in _reads_in(ast.parse(path.read_text(), str(path))):
                if name not in found or (found[name].default == "" and default):
                    found[name] = Read(name, default, str(path.relative_to(ROOT)))
    return found


def _reads_in(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and _is_name(node.args[0]):
            name, function = node.args[0].value, node.func
            read_by_environment = (
                isinstance(function, ast.Attribute) and function.attr in READERS and _on_environment(function)
            )
            if read_by_environment or _is_environ(function, "get"):
                yield name, _default(node.args[1] if len(node.args) > 1 else None)
        elif isinstance(node, ast.Subscript) and _is_environ(node.value) and _is_name(node.slice):
            yield node.slice.value, ""


def _is_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isupper()


def _on_environment(function: ast.Attribute) -> bool:
    """``ENV.text(…)`` in the settings, ``self.text(…)`` in ``Environment`` itself."""
    return isinstance(function.value, ast.Name) and function.value.id in {"ENV", "self"}


def _is_environ(node: ast.AST, method: str | None = None) -> bool:
    if method is not None:
        if not (isinstance(node, ast.Attribute) and node.attr == method):
            return False
        node = node.value
    return isinstance(node, ast.Attribute) and node.attr == "environ"


def _default(node: ast.AST | None) -> str:
    if node is None:
        return ""
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return ""
    if value in ("", None):
        return ""
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def problems() -> list[str]:
    read = names_read()
    unsaid = [f"{name} (read in {read[name].where}) is not in SAID" for name in sorted(read.keys() - SAID)]
    unread = [f"{name} is in SAID but nothing reads it" for name in sorted(SAID.keys() - read.keys())]
    return unsaid + unread


def table() -> str:
    read = names_read()
    rows = ["| setting | default | what it does |", "| --- | --- | --- |"]
    for name in SAID:  # in the order they are said: grouped by what they are about
        if name in read:
            default = DEFAULT_IN_WORDS.get(name) or read[name].default or "unset"
            rows.append(f"| `{name}` | {default} | {SAID[name]} |")
    return "\n".join(rows)


def documented() -> str:
    """The table as docs/operations.md has it now."""
    text = DOCUMENT.read_text()
    return text.split(START, 1)[1].split(END, 1)[0].strip()


def write() -> None:
    text = DOCUMENT.read_text()
    before, rest = text.split(START, 1)
    after = rest.split(END, 1)[1]
    DOCUMENT.write_text(f"{before}{START}\n{table()}\n{END}{after}")


def main(arguments: list[str]) -> int:
    wrong = problems()
    if wrong:
        print("\n".join(wrong), file=sys.stderr)
        return 1
    if arguments == ["--write"]:
        write()
        print(f"Wrote the settings table in {DOCUMENT.relative_to(ROOT)}")
    else:
        print(table())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
