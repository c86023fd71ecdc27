"""What each command does: one API call (or a few), printed as the API's JSON."""

import argparse
import contextlib
import sys
import time
from collections.abc import Callable

from kindgi.cli.client import Api
from kindgi.cli.config import resolve
from kindgi.cli.errors import API_ERROR, OK, USAGE_ERROR, CliError
from kindgi.cli.output import show
from kindgi.summaries import without_controls

EXAMPLE_IDS = {
    "tools": "my-pack.lookup-order",
    "agents": "acme-ops.status-agent",
    "flows": "my-pack.check-order",
}


def _api(args: argparse.Namespace) -> Api:
    return Api(resolve(args.url, args.token))


def runs_start(args) -> int:
    body = {"input": args.input, "dryRun": args.dry_run, "readOnly": args.read_only}
    body |= {"flowId": args.flow} if args.flow else {"agentId": args.agent}
    if args.version:
        body["version"] = args.version
    if args.conversation:
        body["conversationId"] = args.conversation
    if args.use_connection:
        body["connections"] = dict(args.use_connection)
    api = _api(args)
    run = api.post("/runs", body)
    show(run)
    _say_what_it_waits_for(api, run)
    return API_ERROR if run.get("status") == "failed" else OK


def _say_what_it_waits_for(api: Api, run: dict | Callable[[], dict]) -> None:
    """On stderr (stdout stays the API's JSON): what a suspended run waits for, and where to
    decide it. A courtesy after the command's answer: whatever it meets (an older server, an
    answer of another shape), the answer and the exit code stand."""
    with contextlib.suppress(Exception):
        _say_what_a_run_waits_for(api, run() if callable(run) else run)


def _say_what_a_run_waits_for(api: Api, run: dict) -> None:
    if run.get("status") != "suspended":
        return
    base, run_id = api.settings.url, run["id"]
    listed = api.get("/approvals", {"runId": run_id, "status": "pending"})["items"]
    pending = [approval for approval in listed if _belongs_to(api, approval, run_id)]
    if not pending:
        print(
            f"kindgi: run {run_id} is waiting: {base}/console/runs/{run_id}/ says for what", file=sys.stderr
        )
    for approval in pending:
        said = " ".join(without_controls(approval.get("summary") or approval.get("title") or "").split())
        print(
            f"kindgi: run {run_id} waits for approval {approval['id']} "
            f"(a {approval.get('requiredRole')}'s): {said}\n"
            f"  decide it: kindgi approvals complete {approval['id']} --decision=approve "
            f"(or reject), or open {base}/console/approvals/{approval['id']}/",
            file=sys.stderr,
        )


def _belongs_to(api: Api, approval: dict, run_id: str) -> bool:
    """Whether ``approval`` is ``run_id``'s or one of its steps': a server from before ``runId``
    filtered lists every pending approval of the tenant, and the hint names only this run's."""
    owner = (approval.get("provenanceRef") or {}).get("runId")
    if owner == run_id:
        return True
    return bool(owner) and api.get(f"/runs/{owner}").get("parentRunId") == run_id


def runs_get(args) -> int:
    show(_api(args).get(f"/runs/{args.id}"))
    return OK


def runs_list(args) -> int:
    show(
        _api(args).get("/runs", {"status": args.status, "flowId": args.flow, "agentId": args.agent}),
        output=args.output,
        kind="runs",
    )
    return OK


def runs_journal(args) -> int:
    api, after, items = _api(args), args.after, []
    while True:
        page = api.get(f"/runs/{args.id}/journal", {"after": after})
        items += page["items"]
        if not page["nextCursor"]:
            break
        after = int(page["nextCursor"])
    if args.output == "table":
        show({"items": items}, output="table", kind="journal")
    else:
        show(items)
    return OK


def runs_watch(args) -> int:
    from kindgi.cli.watch import watch

    return watch(resolve(args.url, args.token), args.id)


def runs_cancel(args) -> int:
    show(_api(args).post(f"/runs/{args.id}/cancel"))
    return OK


def approvals_list(args) -> int:
    show(_api(args).get("/approvals", {"status": args.status}), output=args.output, kind="approvals")
    return OK


def approvals_get(args) -> int:
    show(_api(args).get(f"/approvals/{args.id}"))
    return OK


def approvals_complete(args) -> int:
    body = {"decision": args.decision, "rationale": args.rationale}
    if args.arguments is not None:
        body["arguments"] = args.arguments
    if args.allow is not None:
        if len(args.ids) != 1:
            raise CliError("--allow gives a grant with one approval: name one approval", USAGE_ERROR)
        body["allow"] = args.allow
    if len(args.ids) == 1:
        api = _api(args)
        show(api.post(f"/approvals/{args.ids[0]}/complete", body))

        # The run may go on to wait again, for another call.
        def decided_run() -> dict:
            approval = api.get(f"/approvals/{args.ids[0]}")
            return api.get(f"/runs/{approval['provenanceRef']['runId']}")

        _say_what_it_waits_for(api, decided_run)
        return OK
    # Several: decided one by one on the server, each answered on its own.
    answer = _api(args).post(
        "/approvals/decisions", {"decisions": [{"approvalId": i, **body} for i in args.ids]}
    )
    show(answer)
    refused = [result for result in answer["results"] if result["status"] == "refused"]
    for result in refused:
        print(
            f"kindgi: {result['approvalId']}: {result['error']['message']} ({result['httpStatus']})",
            file=sys.stderr,
        )
    return API_ERROR if refused else OK


def reviewers_register(args) -> int:
    show(_api(args).post("/reviewers/register", args.spec))
    return OK


def reviewers_me(args) -> int:
    show(_api(args).get("/reviewers/me"))
    return OK


def reviewers_list(args) -> int:
    show(_api(args).get("/reviewers"), output=args.output, kind="reviewers")
    return OK


def catalog_list(kind: str):
    def handler(args) -> int:
        api = _api(args)
        show(api.get(f"/{kind}"), output=args.output, kind=kind)
        if kind == "tools":
            _warn_of_silent_servers(api)
        return OK

    return handler


def _warn_of_silent_servers(api: Api) -> None:
    """On standard error, so that the list on standard output stays the API's JSON."""
    for server in api.get("/mcp-servers")["items"]:
        if server["enabled"] and not server["answering"]:
            why = server["lastError"] or "it has not been asked yet"
            print(
                f"warning: MCP server {server['name']} is not answering ({why}); "
                f"its {server['tools']} tool(s) listed before may fail",
                file=sys.stderr,
            )


def grants_list(args) -> int:
    show(_api(args).get("/grants"), output=args.output, kind="grants")
    return OK


def grants_create(args) -> int:
    show(_api(args).post("/grants", args.spec))
    return OK


def grants_revoke(args) -> int:
    show(_api(args).post(f"/grants/{args.id}/revoke", {}))
    return OK


def schedules_list(args) -> int:
    show(_api(args).get("/schedules"), output=args.output, kind="schedules")
    return OK


def schedules_create(args) -> int:
    show(_api(args).post("/schedules", args.spec))
    return OK


def schedules_delete(args) -> int:
    _api(args).delete(f"/schedules/{args.id}")
    print(f"Deleted the schedule {args.id}.", file=sys.stderr)
    return OK


def connections_list(args) -> int:
    show(_api(args).get("/connections"), output=args.output, kind="connections")
    return OK


def connections_remove(args) -> int:
    show(_api(args).delete(f"/connections/{args.id}"))
    return OK


def connections_connect(args) -> int:
    """Print the URL to open, then wait until the app has answered (or the wait is over)."""
    api = _api(args)
    started = api.post("/connections", {"app": args.app})
    # On standard error, so that standard output stays the API's JSON (the connection, at the end).
    print(
        "Open this address in a browser signed in to Kindgi, and allow access:\n\n"
        f"  {started['authorizeUrl']}\n\nWaiting for {started['appName']} to answer (Ctrl-C stops waiting)…",
        file=sys.stderr,
        flush=True,
    )
    deadline = time.monotonic() + args.wait
    while True:
        connection = api.get(f"/connections/{started['id']}")
        if connection["status"] != "pending" or time.monotonic() >= deadline:
            break
        time.sleep(POLL_SECONDS)
    show(connection)
    if connection["status"] == "active":
        return OK
    if connection["status"] == "pending":
        print(f"kindgi: not connected yet after {args.wait:g} s; the address still works", file=sys.stderr)
    else:
        print(f"kindgi: not connected: {connection['failure'] or connection['status']}", file=sys.stderr)
    return API_ERROR


POLL_SECONDS = 1


def catalog_get(kind: str):
    def handler(args) -> int:
        show(_api(args).get(f"/{kind}/{args.id}", {"version": args.version}))
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
