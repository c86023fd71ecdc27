"""Every API endpoint and WebSocket route, for every kind of caller: each gets exactly the status
it should, and no response carries another tenant's data."""

import json
from dataclasses import dataclass

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from approvals.models import Approval, ApprovalRule
from connections.crypto import seal
from connections.models import App, Connection
from kindgi_site.asgi import application
from mail.models import Mailbox
from runs.actions import check_start_run
from tenants.tokens import do_create_token, do_revoke_token
from tests.factories import default_tenant, member, other_tenant, principal, reviewer

pytestmark = pytest.mark.django_db(transaction=True)
PACKS = [
    "packs.my_pack",
    "packs.acme_ops",
    "packs.kindgi_mail",
    "tests.pack_fixtures.probes",
    "tests.pack_fixtures.connection_probes",
]


@pytest.fixture(autouse=True)
def _packs(settings):
    settings.KINDGI_PACKS = PACKS


CALLERS = [
    "anonymous",
    "wrong token",
    "revoked token",
    "other tenant's admin",
    "member, not a reviewer",
    "reviewer below the role",
    "the right reviewer",
    "tenant admin",
    "service account",
    "the connection's owner",
]
SIGNED_IN = CALLERS[3:]
OURS = CALLERS[4:]


@dataclass
class World:
    run: str
    cancellable: str
    approval: str
    rule: int
    # Cora's connection: nobody but Cora may know of it, in her tenant or any other.
    connection: str
    # A service's run waits for Cora's yes to use it: hers alone to decide.
    connection_use: str
    # Cora's mailbox: hers and her tenant admins' to see.
    mailbox: str
    # Cora's schedule: hers and her tenant admins' too.
    schedule: str
    # Cora's conversation with an agent: hers alone to continue; for anyone else it does not exist.
    conversation: str
    # What must never appear in a response to a caller of the other tenant, and vice versa.
    ours: set[str]
    theirs: set[str]


def _gated_run(tenant) -> tuple[str, str]:
    run = check_start_run(
        tenant=tenant,
        principal=principal(tenant),
        agent_id="acme-ops.status-agent",
        input={"userMessage": "Up."},
    )
    return str(run.pk), str(Approval.objects.get(run=run).pk)


@pytest.fixture
def world() -> World:
    ours = default_tenant()
    run, approval = _gated_run(ours)
    Approval.objects.filter(pk=approval).update(required_role="senior")
    cancellable, _ = _gated_run(ours)
    rule = ApprovalRule.objects.create(tenant=ours, name="acme rule", gate="deny", tool_pattern="x.*")
    their_run, their_approval = _gated_run(other_tenant())
    ApprovalRule.objects.create(tenant=other_tenant(), name="globex rule", gate="deny")
    app = _app(ours, "acme-tracker")
    _app(other_tenant(), "globex-tracker")
    cora = member("cora")
    connection = Connection.objects.create(
        app=app, owner=cora, tenant=ours, status="active", access_token=seal("cora-secret")
    )
    _app(ours, "tracker")  # the app the probe's tool acts through
    connection_use = _waiting_for_coras_yes(ours)
    mailbox = Mailbox.objects.create(
        tenant=ours, address="help@acme.test", owner=cora, agent_key="kindgi-mail.responder"
    )
    Mailbox.objects.create(
        tenant=other_tenant(),
        address="help@globex.test",
        owner=member("gus", tenant=other_tenant()),
        agent_key="kindgi-mail.responder",
    )
    schedule = _schedule(ours, cora, "acme schedule")
    conversation = str(
        check_start_run(
            agent_id="my-pack.echo-agent", input={"userMessage": "Hi."}, acting_user=cora
        ).conversation_id
    )
    _schedule(other_tenant(), get_user_model().objects.get(username="gus"), "globex schedule")
    return World(
        schedule=schedule,
        conversation=conversation,
        run=run,
        cancellable=cancellable,
        approval=approval,
        rule=rule.pk,
        connection=str(connection.pk),
        connection_use=connection_use,
        mailbox=str(mailbox.pk),
        ours={
            "help@acme.test",
            run,
            approval,
            cancellable,
            "acme rule",
            str(connection.pk),
            "cora-secret",
            connection_use,
            "acme schedule",
            schedule,
            conversation,
        },
        theirs={
            "globex schedule",
            "help@globex.test",
            their_run,
            their_approval,
            "globex rule",
            "globex-tracker",
            str(connection.pk),
            "cora-secret",
        },
    )


def _waiting_for_coras_yes(tenant) -> str:
    """A run of a service that would call a read-only tool through Cora's connection."""
    from runs.engine.waitpoints import CONNECTION_USE
    from tests.pack_fixtures.probes import SCRIPT
    from tests.runs.helpers import calls

    SCRIPT.reset()
    SCRIPT.replies[:] = [calls(("c1", "conn-probe.who-am-i", {}))]
    run = check_start_run(
        tenant=tenant,
        principal=principal(tenant),
        agent_id="conn-probe.assistant",
        input={"userMessage": "Who?"},
        connections={"tracker": "cora"},
    )
    assert run.status == "suspended", run.failure_message
    return str(Approval.objects.get(run=run, subject_kind=CONNECTION_USE).pk)


def _schedule(tenant, owner, name: str) -> str:
    from runs.schedules import check_save_schedule

    fields = {
        "name": name,
        "flow_key": "my-pack.check-order",
        "input": {"orderId": "ord_1001"},
        "cron": "0 9 * * *",
        "owner": owner,
    }
    return str(check_save_schedule(tenant=tenant, fields=fields, acting_user=None, surface="system").pk)


def _app(tenant, name: str) -> App:
    return App.objects.create(
        name=name,
        tenant=tenant,
        authorize_url="https://apps.example/authorize",
        token_url="https://apps.example/token",
        client_id="kindgi",
        api_base_url="https://apps.example/api",
    )


def token_for(caller: str) -> str | None:
    if caller == "anonymous":
        return None
    if caller == "wrong token":
        return "kgi_abcdefgh_not-a-real-secret"
    user = {
        "revoked token": lambda: member("rex"),
        "other tenant's admin": lambda: _other_admin(),
        "member, not a reviewer": lambda: member("mo"),
        "reviewer below the role": lambda: reviewer("stan", role="standard"),
        "the right reviewer": lambda: reviewer("sen", role="senior"),
        "tenant admin": lambda: member("ted", tenant_admin=True),
        "service account": lambda: _service_account(),
        "the connection's owner": lambda: get_user_model().objects.get(username="cora"),
    }[caller]()
    responsible = principal() if caller == "service account" else None
    record, token = do_create_token(user=user, responsible=responsible)
    if caller == "revoked token":
        do_revoke_token(record)
    return token


def _service_account():
    from tenants.tokens import do_service_account

    return do_service_account(name="nightly", tenant=default_tenant())[0]


def _other_admin():
    user = member("olga", tenant=other_tenant(), tenant_admin=True)
    from approvals.models import Reviewer

    Reviewer.objects.create(user=user, tenant=other_tenant(), role="admin", display_name="Olga")
    return user


def expected(endpoint: str, caller: str) -> int:
    """The status each caller gets; the table reads endpoint by endpoint."""
    if caller not in SIGNED_IN:
        return 401
    other = caller == "other tenant's admin"
    admin = caller in ("tenant admin", "other tenant's admin")
    a_reviewer = caller in ("reviewer below the role", "the right reviewer", "other tenant's admin")
    service = caller == "service account"
    owner = caller == "the connection's owner"
    table = {
        # Lists show the caller's own tenant; the catalog is shared.
        "GET runs": 200,
        "POST runs": 201,
        "GET approvals": 200,
        "GET reviewers": 200,
        "GET tools": 200,
        "GET tools/id": 200,
        "GET agents": 200,
        "GET agents/id": 200,
        "GET flows": 200,
        "GET flows/id": 200,
        "GET mcp-servers": 200,
        "GET connection-apps": 200,
        "GET connections": 200,
        # A connection is a person's: a service account makes none.
        "POST connections": 404 if other else (403 if service else 201),
        # A connection is its owner's alone: even in her tenant, Cora's does not exist for others.
        "GET connection": 200 if owner else 404,
        "DELETE connection": 200 if owner else 404,
        # Another tenant's things do not exist for the caller.
        "GET run": 404 if other else 200,
        "GET run journal": 404 if other else 200,
        "GET approval": 404 if other else 200,
        # A run is cancelled by its principal (Pat, for whom the service's token acts), a tenant
        # admin, or a reviewer who may decide one of its calls; not by any member.
        "POST run cancel": 404
        if other
        else (403 if caller in ("member, not a reviewer", "the connection's owner") else 200),
        "GET reviewers/me": 200 if a_reviewer else 403,
        # Who reviews is the tenant's configuration: a tenant admin registers; a reviewer may
        # rename themselves; a member who is none, or a service account, is refused.
        "POST reviewers/register": 200 if admin or a_reviewer else 403,
        # Deciding needs a reviewer of the tenant with the approval's role.
        "POST approval complete": 404 if other else (200 if caller == "the right reviewer" else 403),
        # The use of a person's connection is theirs alone to allow, whatever anyone's role.
        "GET connection-use approval": 404 if other else 200,
        "POST connection-use complete": 404 if other else (200 if owner else 403),
        # A mailbox is its owner's and its tenant admins' to see; only a tenant admin changes one.
        "GET mailboxes": 200,
        "GET mailbox": 200 if (owner or (admin and not other)) else 404,
        "GET mailbox messages": 200 if (owner or (admin and not other)) else 404,
        "POST mailboxes": (400 if other else 201) if admin else 403,
        "PATCH mailbox": (200 if admin and not other else 403 if owner else 404),
        "DELETE mailbox": (204 if admin and not other else 403 if owner else 404),
        # A schedule is its owner's and its tenant admins'; a service account owns none.
        "GET schedules": 200,
        "GET schedule": 200 if (owner or (admin and not other)) else 404,
        "POST schedules": 400 if service else 201,
        "PATCH schedule": 200 if (owner or (admin and not other)) else 404,
        "DELETE schedule": 204 if (owner or (admin and not other)) else 404,
        # Rules are for tenant admins, each of their own tenant's.
        "GET approval-rules": 200 if admin else 403,
        "POST approval-rules": 201 if admin else 403,
        "GET approval-rule": (404 if other else 200) if admin else 403,
        "PATCH approval-rule": (404 if other else 200) if admin else 403,
        "DELETE approval-rule": (404 if other else 204) if admin else 403,
        # A conversation is its principal's: anyone else, even a tenant admin, finds none.
        "POST runs continuing a conversation": 201 if owner else 404,
        # The audit is for tenant admins, each of their own tenant's.
        "GET audit": 200 if admin else 403,
        "GET audit heads": 200 if admin else 403,
    }
    return table[endpoint]


def requests(world: World) -> list[tuple[str, str, str, dict | None]]:
    """(endpoint, method, path, body), reads first: the writes come last and touch their own objects."""
    return [
        ("GET runs", "get", "/api/v1/runs", None),
        ("GET run", "get", f"/api/v1/runs/{world.run}", None),
        ("GET run journal", "get", f"/api/v1/runs/{world.run}/journal", None),
        ("GET approvals", "get", "/api/v1/approvals", None),
        ("GET approval", "get", f"/api/v1/approvals/{world.approval}", None),
        ("GET connection-use approval", "get", f"/api/v1/approvals/{world.connection_use}", None),
        ("GET reviewers", "get", "/api/v1/reviewers", None),
        ("GET reviewers/me", "get", "/api/v1/reviewers/me", None),
        ("GET tools", "get", "/api/v1/tools", None),
        ("GET tools/id", "get", "/api/v1/tools/acme-ops.post-update", None),
        ("GET agents", "get", "/api/v1/agents", None),
        ("GET agents/id", "get", "/api/v1/agents/acme-ops.status-agent", None),
        ("GET flows", "get", "/api/v1/flows", None),
        ("GET flows/id", "get", "/api/v1/flows/my-pack.check-order", None),
        ("GET mcp-servers", "get", "/api/v1/mcp-servers", None),
        ("GET connection-apps", "get", "/api/v1/connection-apps", None),
        ("GET connections", "get", "/api/v1/connections", None),
        ("GET connection", "get", f"/api/v1/connections/{world.connection}", None),
        ("GET mailboxes", "get", "/api/v1/mailboxes", None),
        ("GET mailbox", "get", f"/api/v1/mailboxes/{world.mailbox}", None),
        ("GET mailbox messages", "get", f"/api/v1/mailboxes/{world.mailbox}/messages", None),
        ("GET schedules", "get", "/api/v1/schedules", None),
        ("GET schedule", "get", f"/api/v1/schedules/{world.schedule}", None),
        ("GET approval-rules", "get", "/api/v1/approval-rules", None),
        ("GET approval-rule", "get", f"/api/v1/approval-rules/{world.rule}", None),
        ("GET audit", "get", "/api/v1/audit", None),
        ("GET audit heads", "get", "/api/v1/audit/heads", None),
        (
            "POST runs",
            "post",
            "/api/v1/runs",
            {"flowId": "my-pack.check-order", "input": {"orderId": "ord_1002"}},
        ),
        ("POST run cancel", "post", f"/api/v1/runs/{world.cancellable}/cancel", {}),
        (
            "POST runs continuing a conversation",
            "post",
            "/api/v1/runs",
            {
                "agentId": "my-pack.echo-agent",
                "input": {"userMessage": "Again."},
                "conversationId": world.conversation,
            },
        ),
        (
            "POST approval complete",
            "post",
            f"/api/v1/approvals/{world.approval}/complete",
            {"decision": "approve"},
        ),
        (
            "POST connection-use complete",
            "post",
            f"/api/v1/approvals/{world.connection_use}/complete",
            {"decision": "reject", "rationale": "not now"},
        ),
        (
            "POST reviewers/register",
            "post",
            "/api/v1/reviewers/register",
            {"role": "standard", "displayName": "Me"},
        ),
        (
            "POST approval-rules",
            "post",
            "/api/v1/approval-rules",
            {"name": "new", "gate": "deny", "toolPattern": "y.*"},
        ),
        ("POST connections", "post", "/api/v1/connections", {"app": "acme-tracker"}),
        ("DELETE connection", "delete", f"/api/v1/connections/{world.connection}", None),
        (
            "POST mailboxes",
            "post",
            "/api/v1/mailboxes",
            {"address": "new@acme.test", "owner": "cora", "agentId": "kindgi-mail.responder"},
        ),
        ("PATCH mailbox", "patch", f"/api/v1/mailboxes/{world.mailbox}", {"enabled": False}),
        ("DELETE mailbox", "delete", f"/api/v1/mailboxes/{world.mailbox}", None),
        (
            "POST schedules",
            "post",
            "/api/v1/schedules",
            {
                "name": "mine",
                "flowId": "my-pack.check-order",
                "input": {"orderId": "ord_1"},
                "cron": "0 9 * * *",
            },
        ),
        ("PATCH schedule", "patch", f"/api/v1/schedules/{world.schedule}", {"enabled": False}),
        ("DELETE schedule", "delete", f"/api/v1/schedules/{world.schedule}", None),
        ("PATCH approval-rule", "patch", f"/api/v1/approval-rules/{world.rule}", {"enabled": False}),
        ("DELETE approval-rule", "delete", f"/api/v1/approval-rules/{world.rule}", None),
    ]


@pytest.mark.parametrize("caller", CALLERS)
def test_every_endpoint_for_every_caller(world, caller):
    token = token_for(caller)
    api = APIClient()
    if token:
        api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    foreign = world.ours if caller == "other tenant's admin" else world.theirs
    if caller == "the connection's owner":
        foreign = foreign - {world.connection}  # hers to see; its token, never
    wrong = []
    for endpoint, method, path, body in requests(world):
        response = (
            getattr(api, method)(path, body, format="json")
            if body is not None
            else getattr(api, method)(path)
        )
        want = expected(endpoint, caller)
        if response.status_code != want:
            wrong.append(f"{endpoint}: {response.status_code}, not {want}: {response.content[:200]!r}")
            continue
        text = response.content.decode()
        if response.status_code >= 400:
            assert set(json.loads(text)) == {"error"}, f"{endpoint}: {text}"
            continue  # a refusal may name what was asked for, and nothing else
        if leaked := sorted(item for item in foreign if item in text):
            wrong.append(f"{endpoint}: shows the other tenant's {leaked}")
    assert wrong == [], "\n".join(wrong)


async def _connects(path: str, token: str | None) -> bool:
    """The socket opens and stays open (one that may not is accepted, then closed at once with
    a 44xx code, so that the client learns why)."""
    headers = [(b"origin", b"http://127.0.0.1")]
    if token:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    socket = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await socket.connect(timeout=5)
    if not connected:
        return False
    while not await socket.receive_nothing(timeout=0.5):
        output = await socket.receive_output()
        if output["type"] == "websocket.close":
            assert output["code"] in (4401, 4403, 4404), output
            return False
    await socket.disconnect()
    return True


@pytest.mark.parametrize("caller", CALLERS)
def test_every_websocket_route_for_every_caller(world, caller):
    token = token_for(caller)
    ours = caller in OURS
    assert async_to_sync(_connects)(f"/ws/runs/{world.run}/", token) is ours
    # The approvals stream is the tenant's own: anyone signed in gets theirs, nobody else's.
    assert async_to_sync(_connects)("/ws/approvals/", token) is (caller in SIGNED_IN)
