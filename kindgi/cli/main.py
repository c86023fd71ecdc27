"""kindgi: drive a Kindgi server from a terminal.

Exit codes: 0 success; 1 an API error, or a run that failed; 2 a usage error.
"""

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from kindgi.cli import commands
from kindgi.cli.client import explain
from kindgi.cli.errors import API_ERROR, OK, USAGE_ERROR, CliError
from kindgi.cli.output import plain
from kindgi.client import ClientError, InvalidIdError
from kindgi.client.config import resolve


class Parser(argparse.ArgumentParser):
    def error(self, message: str):
        self.print_usage(sys.stderr)
        raise CliError(f"{self.prog}: {message}", USAGE_ERROR)


def app_and_username(text: str) -> tuple[str, str]:
    """An argparse type for --use-connection: ``<app>:<username>``."""
    app, _, username = text.partition(":")
    if not app or not username:
        raise CliError(f"--use-connection takes APP:USERNAME, like github:ada; not {text!r}", USAGE_ERROR)
    return app, username


def json_object(flag: str) -> Callable[[str], dict[str, Any]]:
    """An argparse type: a JSON object, or an error naming where the JSON goes wrong."""

    def parse(text: str) -> dict[str, Any]:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            raise CliError(
                f"{flag} is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno} "
                f"(character {error.pos})",
                USAGE_ERROR,
            ) from None
        except RecursionError:
            raise CliError(f"{flag} is nested too deeply to read", USAGE_ERROR) from None
        if not isinstance(value, dict):
            raise CliError(f'{flag} must be a JSON object, like \'{{"name": "Ada"}}\'', USAGE_ERROR)
        return value

    return parse


def _common_options() -> argparse.ArgumentParser:
    """--url, --token and --output, accepted after a command as well as before it."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--url", default=argparse.SUPPRESS, help="the server, e.g. http://127.0.0.1:8000")
    common.add_argument("--token", default=argparse.SUPPRESS, help="an API token (kgi_…)")
    common.add_argument(
        "--output", choices=["json", "table"], default=argparse.SUPPRESS, help="lists as JSON or a table"
    )
    return common


COMMON = _common_options()


def _command(group, name: str, handler, help_text: str, example: str) -> argparse.ArgumentParser:
    parser = group.add_parser(
        name,
        help=help_text,
        description=help_text,
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[COMMON],
    )
    parser.set_defaults(handler=handler)
    return parser


def _group(areas, name: str, help_text: str, example: str):
    parser = areas.add_parser(
        name,
        help=help_text,
        description=help_text,
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    actions.required = True
    return actions


def build_parser() -> Parser:
    parser = Parser(
        prog="kindgi",
        description="Drive a Kindgi server: start runs, watch them, decide approvals.",
        epilog="Exit codes: 0 success, 1 an API error or a failed run, 2 a usage error.\n"
        "The server and token come from --url/--token, KINDGI_URL/KINDGI_TOKEN, or what `kindgi dev` saved.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--url", help="the server, e.g. http://127.0.0.1:8000")
    parser.add_argument("--token", help="an API token (kgi_…)")
    parser.add_argument(
        "--output", choices=["json", "table"], default="json", help="lists as JSON (default) or a table"
    )
    areas = parser.add_subparsers(dest="area", metavar="COMMAND", parser_class=Parser)
    areas.required = True

    dev = _command(
        areas,
        "dev",
        commands.dev,
        "Run a local server, ready to use: migrate, load the packs, save a token, serve (and receive "
        "mail over SMTP on 127.0.0.1:2525).",
        "kindgi dev",
    )
    dev.add_argument("--host", default="127.0.0.1")
    dev.add_argument("--port", type=int, default=8000)
    dev.add_argument("--mail-port", type=int, default=2525, help="the SMTP receiver's port (0: none)")
    dev.add_argument(
        "--pack",
        action="append",
        metavar="PATH",
        help="also load the pack in this folder, and reload the catalog when its files change (repeatable)",
    )
    init = areas.add_parser(
        "init",
        help="Start a new pack: tools, an agent, a flow, tests, and skills for coding agents.",
        description="Start a new pack in a folder of its own: a read-only tool, a tool that changes "
        "something (gated), an agent with a scripted model, a flow, pytest tests, a README, and "
        "AGENTS.md with skills/ for coding agents. It loads, and passes its tests, as written.",
        epilog="example:\n  kindgi init my-notes --dir ~/code",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    init.add_argument(
        "pack_name", metavar="PACK-NAME", help="lowercase letters, digits and dashes, e.g. my-notes"
    )
    init.add_argument("--dir", help="where to put the pack's folder (default: here)")
    init.set_defaults(handler=commands.init)
    test = areas.add_parser(
        "test",
        help="Run a pack's tests with the pytest installed beside Kindgi.",
        description="Run the tests of the pack in PATH (a folder `kindgi init` made, or any pack "
        "with tests) with the pytest that `make run` installed, as `kindgi dev --pack` imports "
        "the pack. Arguments after PATH go to pytest. Exit 0 when they pass, 1 when one fails.",
        epilog="example:\n  kindgi test ~/code/my_notes -k approve",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    test.add_argument("path", metavar="PATH", help="the pack's folder")
    test.add_argument("pytest_arguments", nargs=argparse.REMAINDER, help="passed to pytest")
    test.set_defaults(handler=commands.test)
    serve = _command(
        areas,
        "serve",
        commands.serve,
        "Serve HTTP and WebSockets in production (one process; run several behind a proxy).",
        "KINDGI_DEBUG=false DATABASE_URL=postgres://… REDIS_URL=redis://… KINDGI_TASKS=db \\\n"
        "    kindgi serve --port 8001",
    )
    serve.add_argument("--host", default="0.0.0.0")
    serve.add_argument("--port", type=int, default=8000)
    worker = _command(
        areas,
        "worker",
        commands.worker,
        "Execute and resume queued runs (one process; run several): from the database queue, "
        "or from Redis with RQ's or Celery's own worker.",
        "KINDGI_TASKS=db DATABASE_URL=postgres://… REDIS_URL=redis://… kindgi worker\n"
        "  KINDGI_TASKS=rq DATABASE_URL=postgres://… REDIS_URL=redis://… kindgi worker  # + kindgi sweeper",
    )
    worker.add_argument(
        "--backend",
        choices=("db", "rq", "celery"),
        help="the queue to serve (default: KINDGI_TASKS's; the two must agree)",
    )
    worker.add_argument("--queue", default="default")
    worker.add_argument(
        "--metrics-port", type=int, help="serve this worker's metrics for Prometheus on this port"
    )
    _command(
        areas,
        "sweeper",
        commands.sweeper,
        "Run the sweeps (expiry, escalation, notifications, schedules, recovery of stuck runs) "
        "for ever: for RQ and Celery, whose workers do not (a database-queue worker sweeps too). "
        "Run one or several: one at a time holds the sweep lease.",
        "KINDGI_TASKS=rq DATABASE_URL=postgres://… REDIS_URL=redis://… kindgi sweeper",
    )

    runs = _group(
        areas, "runs", "start, inspect, watch and cancel runs", "kindgi runs list --status=suspended"
    )
    start = _command(
        runs,
        "start",
        commands.runs_start,
        "Start a run of a flow, or one turn of an agent.",
        'kindgi runs start --flow=my-pack.check-order --input=\'{"orderId":"ord_1001"}\' --dry-run',
    )
    target = start.add_mutually_exclusive_group(required=True)
    target.add_argument("--flow", help="the flow's id")
    target.add_argument("--agent", help="the agent's id")
    start.add_argument(
        "--input", required=True, type=json_object("--input"), help="the input, as a JSON object"
    )
    start.add_argument("--version", help="a version other than the newest")
    start.add_argument("--dry-run", action="store_true", help="run only read-only tools; skip model calls")
    start.add_argument("--read-only", action="store_true", help="hide and refuse tools that change things")
    start.add_argument("--conversation", help="continue this agent conversation (its id)")
    start.add_argument(
        "--use-connection",
        action="append",
        type=app_and_username,
        default=[],
        metavar="APP:USERNAME",
        help="with a service account's token: use USERNAME's connection to APP (each use first "
        "waits for their yes); repeat for more apps",
    )
    _command(
        runs, "get", commands.runs_get, "Show a run.", "kindgi runs get 0c01376f-1566-4a0d-ba6f-95f4efff4758"
    ).add_argument("id")
    listing = _command(
        runs, "list", commands.runs_list, "List runs, newest first.", "kindgi runs list --status=suspended"
    )
    listing.add_argument(
        "--status", choices=["queued", "running", "suspended", "completed", "failed", "cancelled"]
    )
    listing.add_argument("--flow")
    listing.add_argument("--agent")
    journal = _command(
        runs,
        "journal",
        commands.runs_journal,
        "Show a run's journal.",
        "kindgi runs journal 0c01376f-1566-4a0d-ba6f-95f4efff4758",
    )
    journal.add_argument("id")
    journal.add_argument("--after", type=int, default=0, help="only entries after this sequence")
    watch = _command(
        runs,
        "watch",
        commands.runs_watch,
        "Follow a run's journal live until it completes, fails or waits.",
        "kindgi runs watch 0c01376f-1566-4a0d-ba6f-95f4efff4758",
    )
    watch.add_argument("id")
    _command(
        runs,
        "cancel",
        commands.runs_cancel,
        "Cancel a run and the runs below it.",
        "kindgi runs cancel 0c01376f-1566-4a0d-ba6f-95f4efff4758",
    ).add_argument("id")

    approvals = _group(
        areas, "approvals", "list and decide approvals", "kindgi approvals list --status=pending"
    )
    approvals_list = _command(
        approvals,
        "list",
        commands.approvals_list,
        "List approvals, newest first.",
        "kindgi approvals list --status=pending",
    )
    approvals_list.add_argument(
        "--status", choices=["pending", "approved", "rejected", "changes_requested", "expired", "cancelled"]
    )
    _command(
        approvals,
        "get",
        commands.approvals_get,
        "Show an approval.",
        "kindgi approvals get 416c22ba-73f9-45b7-999d-c1d5938758f7",
    ).add_argument("id")
    complete = _command(
        approvals,
        "complete",
        commands.approvals_complete,
        "Approve, reject or request changes to waiting tool calls: one, or several at once (each "
        "decided on its own). Requesting changes, the call does not run and the model reads your "
        "rationale as its result, then may propose another call.",
        "kindgi approvals complete 416c22ba-73f9-45b7-999d-c1d5938758f7 --decision=approve \\\n"
        '    --rationale="Confirmed with the on-call engineer"\n'
        "kindgi approvals complete 416c22ba-73f9-45b7-999d-c1d5938758f7 --decision=request_changes \\\n"
        '    --rationale="Say when the next update comes"',
    )
    complete.add_argument("ids", nargs="+", metavar="ID")
    complete.add_argument("--decision", required=True, choices=["approve", "reject", "request_changes"])
    complete.add_argument(
        "--rationale", default="", help="why (required to reject; to request changes, what to change)"
    )
    complete.add_argument(
        "--arguments", type=json_object("--arguments"), help="approve these arguments instead (JSON)"
    )
    complete.add_argument(
        "--allow",
        type=json_object("--allow"),
        help='approve, and allow calls like it: {"forSeconds": 7200, "maxCalls": 3, "condition"?}',
    )

    reviewers = _group(areas, "reviewers", "register as a reviewer", "kindgi reviewers me")
    register = _command(
        reviewers,
        "register",
        commands.reviewers_register,
        "Register yourself (the token's user) as a reviewer.",
        'kindgi reviewers register --spec=\'{"role":"standard","displayName":"Ada Lovelace"}\'',
    )
    register.add_argument(
        "--spec", required=True, type=json_object("--spec"), help='{"role": …, "displayName": …}'
    )
    _command(
        reviewers, "me", commands.reviewers_me, "Show your reviewer registration.", "kindgi reviewers me"
    )
    _command(
        reviewers,
        "list",
        commands.reviewers_list,
        "List your tenant's reviewers.",
        "kindgi reviewers list --output=table",
    )

    connections = _group(
        areas, "connections", "your connections to outside apps", "kindgi connections connect tracker"
    )
    connect = _command(
        connections,
        "connect",
        commands.connections_connect,
        "Connect an app: prints the address to open, then waits until you have allowed access there.",
        "kindgi connections connect tracker",
    )
    connect.add_argument("app", help="the app's name (GET /api/v1/connection-apps lists them)")
    connect.add_argument("--wait", type=float, default=300, help="seconds to wait for the app (default 300)")
    _command(
        connections,
        "list",
        commands.connections_list,
        "List your connections, newest first.",
        "kindgi connections list --output=table",
    )
    _command(
        connections,
        "remove",
        commands.connections_remove,
        "Disconnect: the connection's tokens are forgotten at once.",
        "kindgi connections remove 5d7c0a8e-3c1f-4f8e-9a53-1f0d6f3b2a11",
    ).add_argument("id")

    schedules = _group(
        areas,
        "schedules",
        "run agents and flows on a cron expression",
        "kindgi schedules list --output=table",
    )
    _command(
        schedules,
        "list",
        commands.schedules_list,
        "List your schedules (a tenant admin: the tenant's).",
        "kindgi schedules list --output=table",
    )
    create = _command(
        schedules,
        "create",
        commands.schedules_create,
        "Make a schedule: its runs start on the cron's ticks (UTC), no person starting them.",
        'kindgi schedules create --spec=\'{"name":"orders at 9","flowId":"my-pack.check-order",'
        '"input":{"orderId":"ord_1001"},"cron":"0 9 * * 1-5"}\'',
    )
    create.add_argument(
        "--spec",
        required=True,
        type=json_object("--spec"),
        help='{"name", "agentId" or "flowId", "input", "cron", "owner"?, "enabled"?}',
    )
    _command(
        schedules,
        "delete",
        commands.schedules_delete,
        "Delete a schedule: no more runs start from it.",
        "kindgi schedules delete 5d7c0a8e-3c1f-4f8e-9a53-1f0d6f3b2a11",
    ).add_argument("id")

    grants = _group(
        areas,
        "grants",
        "let calls like an approved one run without asking, for a while",
        "kindgi grants list --output=table",
    )
    _command(
        grants,
        "list",
        commands.grants_list,
        "List your standing grants (a tenant admin: the tenant's), newest first.",
        "kindgi grants list --output=table",
    )
    give = _command(
        grants,
        "create",
        commands.grants_create,
        "Give a standing grant in your name: the calls it covers run without asking, within its limits.",
        'kindgi grants create --spec=\'{"toolPattern":"acme-ops.post-update","scope":"principal",'
        '"principal":"ada","maxCalls":3,"forSeconds":7200}\'',
    )
    give.add_argument(
        "--spec",
        required=True,
        type=json_object("--spec"),
        help='{"toolPattern", "agentPattern"?, "condition"?, "scope": "principal" or "agent", "principal" or '
        '"agentId", "maxCalls" and/or "sumOf" with "maxSum", "forSeconds" or "expiresAt"}',
    )
    _command(
        grants,
        "revoke",
        commands.grants_revoke,
        "Revoke a grant: it covers no call from the next one on.",
        "kindgi grants revoke 12",
    ).add_argument("id")

    mail = _group(areas, "mail", "receive mail that starts runs", "kindgi mail serve --port 2525")
    mail_serve = _command(
        mail,
        "serve",
        commands.mail_serve,
        "Receive mail over SMTP: mail to a mailbox's address starts its agent or flow.",
        "kindgi mail serve --host 0.0.0.0 --port 25",
    )
    mail_serve.add_argument("--host", default="127.0.0.1")
    mail_serve.add_argument("--port", type=int, default=2525)

    for kind in ("tools", "agents", "flows"):
        group = _group(areas, kind, f"the catalog's {kind}", f"kindgi {kind} list --output=table")
        _command(
            group,
            "list",
            commands.catalog_list(kind),
            f"List the {kind} in service.",
            f"kindgi {kind} list --output=table",
        )
        get = _command(
            group,
            "get",
            commands.catalog_get(kind),
            f"Show one of the {kind}, newest version.",
            f"kindgi {kind} get {commands.EXAMPLE_IDS[kind]}",
        )
        get.add_argument("id")
        get.add_argument("--version")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = None
    try:
        args = build_parser().parse_args(argv)
        code = args.handler(args)
        sys.stdout.flush()  # here, so that a reader gone away is caught below, not at exit
        return code
    except CliError as error:
        print(f"kindgi: {plain(error.message)}", file=sys.stderr)
        return error.exit_code
    except ClientError as error:
        token = resolve(getattr(args, "url", None), getattr(args, "token", None)).token
        print(f"kindgi: {plain(explain(error, token_given=bool(token)))}", file=sys.stderr)
        return USAGE_ERROR if isinstance(error, InvalidIdError) else API_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`kindgi … | head -3`): nothing more to say, and no traceback.
        # Python would flush stdout again at exit and fail the same way; point it at nothing.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return OK
