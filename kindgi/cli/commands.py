"""What each command does: one API call (or a few), printed as the API's JSON."""

import argparse
import contextlib
import sys
import time
from collections.abc import Callable

from kindgi.cli.client import client_for
from kindgi.cli.errors import API_ERROR, OK, USAGE_ERROR, CliError
from kindgi.cli.output import plain, show
from kindgi.client import Client, models

EXAMPLE_IDS = {
    "tools": "my-pack.lookup-order",
    "agents": "acme-ops.status-agent",
    "flows": "my-pack.check-order",
}


def _client(args: argparse.Namespace) -> Client:
    return client_for(args.url, args.token)


def runs_start(args) -> int:
    client = _client(args)
    run = client.runs.start(
        flow_id=args.flow,
        agent_id=args.agent,
        input=args.input,
        version=args.version,
        dry_run=args.dry_run,
        read_only=args.read_only,
        conversation_id=args.conversation,
        connections=dict(args.use_connection) if args.use_connection else None,
    )
    show(run.to_wire())
    _say_what_it_waits_for(client, run)
    return API_ERROR if run.status == "failed" else OK


def _say_what_it_waits_for(client: Client, run: models.Run | Callable[[], models.Run]) -> None:
    """On stderr (stdout stays the API's JSON): what a suspended run waits for, and where to
    decide it. A courtesy after the command's answer: whatever it meets (an older server, an
    answer of another shape), the answer and the exit code stand."""
    with contextlib.suppress(Exception):
        _say_what_a_run_waits_for(client, run() if callable(run) else run)


def _say_what_a_run_waits_for(client: Client, run: models.Run) -> None:
    if run.status != "suspended":
        return
    base = client.url
    listed = client.approvals.page(run_id=run.id, status="pending").items
    pending = [approval for approval in listed if _belongs_to(client, approval, run.id)]
    if not pending:
        print(
            f"kindgi: run {run.id} is waiting: {base}/console/runs/{run.id}/ says for what", file=sys.stderr
        )
    for approval in pending:
        said = plain(approval.summary or approval.title)
        print(
            f"kindgi: run {run.id} waits for approval {approval.id} "
            f"(a {approval.required_role}'s): {said}\n"
            f"  decide it: kindgi approvals complete {approval.id} --decision=approve "
            f"(or reject), or open {base}/console/approvals/{approval.id}/",
            file=sys.stderr,
        )


def _belongs_to(client: Client, approval: models.Approval, run_id: str) -> bool:
    """Whether ``approval`` is ``run_id``'s or one of its steps': a server from before ``runId``
    filtered lists every pending approval of the tenant, and the hint names only this run's."""
    owner = approval.provenance_ref.run_id
    return owner == run_id or client.runs.get(owner).parent_run_id == run_id


def runs_get(args) -> int:
    show(_client(args).runs.get(args.id).to_wire())
    return OK


def runs_list(args) -> int:
    page = _client(args).runs.page(status=args.status, flow_id=args.flow, agent_id=args.agent)
    show(page.to_wire(), output=args.output, kind="runs")
    return OK


def runs_journal(args) -> int:
    items = [entry.to_wire() for entry in _client(args).runs.journal(args.id, after=args.after)]
    if args.output == "table":
        show({"items": items}, output="table", kind="journal")
    else:
        show(items)
    return OK


def runs_watch(args) -> int:
    from kindgi.cli.watch import watch

    return watch(_client(args), args.id)


def runs_cancel(args) -> int:
    show(_client(args).runs.cancel(args.id).to_wire())
    return OK


def approvals_list(args) -> int:
    show(_client(args).approvals.page(status=args.status).to_wire(), output=args.output, kind="approvals")
    return OK


def approvals_get(args) -> int:
    show(_client(args).approvals.get(args.id).to_wire())
    return OK


def approvals_complete(args) -> int:
    if args.allow is not None and len(args.ids) != 1:
        raise CliError("--allow gives a grant with one approval: name one approval", USAGE_ERROR)
    client = _client(args)
    decided = {"decision": args.decision, "rationale": args.rationale, "arguments": args.arguments}
    if len(args.ids) == 1:
        show(client.approvals.complete(args.ids[0], allow=args.allow, **decided).to_wire())

        # The run may go on to wait again, for another call.
        def decided_run() -> models.Run:
            return client.runs.get(client.approvals.get(args.ids[0]).provenance_ref.run_id)

        _say_what_it_waits_for(client, decided_run)
        return OK
    # Several: decided one by one on the server, each answered on its own.
    answer = client.approvals.bulk_complete(args.ids, **decided)
    show(answer.to_wire())
    refused = [result for result in answer.results if result.status == "refused"]
    for result in refused:
        message = result.error.message if result.error else "refused"
        print(f"kindgi: {result.approval_id}: {plain(message)} ({result.http_status})", file=sys.stderr)
    return API_ERROR if refused else OK


def reviewers_register(args) -> int:
    show(_client(args).reviewers.register(args.spec).to_wire())
    return OK


def reviewers_me(args) -> int:
    show(_client(args).reviewers.me().to_wire())
    return OK


def reviewers_list(args) -> int:
    show(_client(args).reviewers.page().to_wire(), output=args.output, kind="reviewers")
    return OK


def catalog_list(kind: str):
    def handler(args) -> int:
        client = _client(args)
        show(getattr(client.catalog, f"{kind}_page")().to_wire(), output=args.output, kind=kind)
        if kind == "tools":
            _warn_of_silent_servers(client)
        return OK

    return handler


def _warn_of_silent_servers(client: Client) -> None:
    """On standard error, so that the list on standard output stays the API's JSON."""
    for server in client.catalog.mcp_servers().items:
        if server.enabled and not server.answering:
            why = plain(server.last_error or "it has not been asked yet")
            print(
                f"warning: MCP server {plain(server.name)} is not answering ({why}); "
                f"its {server.tools} tool(s) listed before may fail",
                file=sys.stderr,
            )


def grants_list(args) -> int:
    show(_client(args).grants.page().to_wire(), output=args.output, kind="grants")
    return OK


def grants_create(args) -> int:
    show(_client(args).grants.create(args.spec).to_wire())
    return OK


def grants_revoke(args) -> int:
    show(_client(args).grants.revoke(args.id).to_wire())
    return OK


def schedules_list(args) -> int:
    show(_client(args).schedules.page().to_wire(), output=args.output, kind="schedules")
    return OK


def schedules_create(args) -> int:
    show(_client(args).schedules.create(args.spec).to_wire())
    return OK


def schedules_delete(args) -> int:
    _client(args).schedules.delete(args.id)
    print(f"Deleted the schedule {args.id}.", file=sys.stderr)
    return OK


def connections_list(args) -> int:
    show(_client(args).connections.list().to_wire(), output=args.output, kind="connections")
    return OK


def connections_remove(args) -> int:
    show(_client(args).connections.remove(args.id))
    return OK


def connections_connect(args) -> int:
    """Print the URL to open, then wait until the app has answered (or the wait is over)."""
    client = _client(args)
    started = client.connections.connect(args.app)
    # On standard error, so that standard output stays the API's JSON (the connection, at the end).
    print(
        "Open this address in a browser signed in to Kindgi, and allow access:\n\n"
        f"  {plain(started.authorize_url)}\n\n"
        f"Waiting for {plain(started.app_name)} to answer (Ctrl-C stops waiting)…",
        file=sys.stderr,
        flush=True,
    )
    deadline = time.monotonic() + args.wait
    while True:
        connection = client.connections.get(started.id)
        if connection.status != "pending" or time.monotonic() >= deadline:
            break
        time.sleep(POLL_SECONDS)
    show(connection.to_wire())
    if connection.status == "active":
        return OK
    if connection.status == "pending":
        print(f"kindgi: not connected yet after {args.wait:g} s; the address still works", file=sys.stderr)
    else:
        print(f"kindgi: not connected: {plain(connection.failure or connection.status)}", file=sys.stderr)
    return API_ERROR


POLL_SECONDS = 1


def catalog_get(kind: str):
    singular = {"tools": "tool", "agents": "agent", "flows": "flow"}[kind]

    def handler(args) -> int:
        show(getattr(_client(args).catalog, singular)(args.id, version=args.version).to_wire())
        return OK

    return handler


def dev(args) -> int:
    from kindgi.cli.dev import serve

    return serve(host=args.host, port=args.port, mail_port=args.mail_port, packs=args.pack or ())


def init(args) -> int:
    from kindgi.cli.init import init as create

    return create(args.pack_name, directory=args.dir)


def test(args) -> int:
    from kindgi.cli.pack_tests import run_pack_tests

    return run_pack_tests(args.path, args.pytest_arguments)


def mail_serve(args) -> int:
    from kindgi.cli.dev import mail_serve as run_receiver

    return run_receiver(host=args.host, port=args.port)


def serve(args) -> int:
    from kindgi.cli.dev import serve_production

    return serve_production(host=args.host, port=args.port)


def worker(args) -> int:
    from kindgi.cli.dev import worker as run_worker

    return run_worker(backend=args.backend, queue=args.queue, metrics_port=args.metrics_port)


def sweeper(args) -> int:
    from kindgi.cli.dev import sweeper as run_sweeper

    return run_sweeper()
