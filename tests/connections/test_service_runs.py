"""A run no person started (a service account's) acts through the connection its start names, and
only after that person's yes: even for a read-only tool, decided by them alone, once per run."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from approvals.models import Approval, ApprovalStatus, Reviewer
from connections.models import ConnectionUse
from runs.models import Run, RunStatus
from tenants.models import Membership
from tenants.tokens import do_create_token
from tests.connections.test_connecting import connect
from tests.factories import default_tenant, member, other_tenant, principal, reviewer
from tests.pack_fixtures.probes import SCRIPT
from tests.runs.helpers import answer, calls

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("probe_packs")]


def service_token(name: str = "nightly-report") -> str:
    default_tenant()
    out, err = io.StringIO(), io.StringIO()
    responsible = principal().get_username()
    call_command(
        "create_api_token",
        "--service",
        name,
        "--tenant",
        "acme",
        "--responsible",
        responsible,
        stdout=out,
        stderr=err,
    )
    return out.getvalue().strip()


def api_with(token: str) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return api


def api_of(user) -> APIClient:
    return api_with(do_create_token(user=user)[1])


def start_as_service(api: APIClient, **more) -> dict:
    response = api.post(
        "/api/v1/runs",
        {"agentId": "conn-probe.assistant", "input": {"userMessage": "who am I?"}, **more},
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()


def test_a_service_accounts_token_starts_runs_no_person_started():
    token = service_token()
    account = Membership.objects.get(user__username="nightly-report")
    assert account.is_service_account
    assert account.tenant == default_tenant()
    assert not account.user.has_usable_password()

    SCRIPT.replies[:] = [answer("nothing to do")]
    run = start_as_service(api_with(token))
    assert (run["trigger"], run["startedBy"], run["service"]) == ("service", None, "nightly-report")

    SCRIPT.replies[:] = [answer("hi")]
    ada = member("ada")
    by_ada = start_as_service(api_of(ada))
    assert (by_ada["trigger"], by_ada["startedBy"], by_ada["service"]) == ("person", "ada", None)


def test_create_api_token_refuses_a_persons_name_or_another_tenants_service():
    member("ada")
    with pytest.raises(CommandError, match="'ada' is a person's account, not a service account"):
        service_token("ada")
    service_token("sync")
    other_tenant()
    with pytest.raises(CommandError, match="belongs to tenant 'acme', not 'globex'"):
        call_command(
            "create_api_token",
            "--service",
            "sync",
            "--tenant",
            "globex",
            "--responsible",
            "pat",
            stdout=io.StringIO(),
        )
    with pytest.raises(CommandError, match="name the tenant"):
        call_command("create_api_token", "--service", "new-one", "--responsible", "pat", stdout=io.StringIO())


def test_a_service_account_decides_nothing_and_is_no_reviewer():
    api = api_with(service_token())
    response = api.post(
        "/api/v1/reviewers/register", {"role": "standard", "displayName": "Bot"}, format="json"
    )
    assert response.status_code == 403
    assert "service account" in response.json()["error"]["message"]
    assert not Reviewer.objects.exists()


def test_a_read_only_call_through_adas_connection_waits_for_her_yes_which_only_she_can_give(
    tracker, oauth_server
):
    ada = member("ada")
    connect(ada, oauth_server)
    bob = reviewer("bob", role="admin")
    Membership.objects.filter(user=bob).update(is_tenant_admin=True)
    SCRIPT.replies[:] = [
        calls(("c1", "conn-probe.who-am-i", {})),
        calls(("c2", "conn-probe.who-am-i", {})),
        answer("done"),
    ]
    service = api_with(service_token())
    started = start_as_service(service, connections={"tracker": "ada"})
    assert started["status"] == "suspended"
    assert started["connections"] == {"tracker": "ada"}
    run = Run.objects.get(pk=started["id"])
    assert not run.journal.filter(kind="tool.called").exists()

    approval = api_of(bob).get("/api/v1/approvals", {"status": "pending"}).json()["items"][0]
    assert approval["subjectKind"] == "connection:use"
    assert approval["subjectRef"]["toolId"] == "conn-probe.who-am-i"
    assert approval["subjectRef"]["connection"] == {"app": "tracker", "owner": "ada"}
    assert approval["subjectRef"]["runId"] == started["id"]
    assert approval["title"] == "Use of ada's tracker connection: conn-probe.who-am-i"

    # Bob is an admin reviewer and a tenant admin: still not his to decide, on any surface.
    refused = api_of(bob).post(
        f"/api/v1/approvals/{approval['id']}/complete", {"decision": "approve"}, format="json"
    )
    assert refused.status_code == 403
    assert "only ada may decide this" in refused.json()["error"]["message"]
    bobs_browser = Client()
    bobs_browser.force_login(bob)
    page = bobs_browser.get(f"/console/approvals/{approval['id']}/").text
    assert "You can't decide this: only ada may decide this" in page
    posted = bobs_browser.post(f"/console/approvals/{approval['id']}/", {"decision": "approve"})
    assert posted.status_code == 409
    # Nor the service that started the run.
    assert (
        service.post(
            f"/api/v1/approvals/{approval['id']}/complete", {"decision": "approve"}, format="json"
        ).status_code
        == 403
    )
    assert Approval.objects.get(pk=approval["id"]).status == ApprovalStatus.PENDING
    run.refresh_from_db()
    assert run.status == RunStatus.SUSPENDED

    # Ada is no reviewer; it is hers to decide all the same, and her yes covers the second call.
    adas_browser = Client()
    adas_browser.force_login(ada)
    asking = adas_browser.get("/console/connections/").text
    assert "Runs asking for your yes" in asking
    assert "the service nightly-report" in asking
    page = adas_browser.get(f"/console/approvals/{approval['id']}/")
    assert page.status_code == 200
    assert "<strong>ada's</strong> connection to the app" in page.text
    decided = adas_browser.post(f"/console/approvals/{approval['id']}/", {"decision": "approve"})
    assert decided.status_code == 302, decided.content
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    results = [m["content"] for m in run.messages if m.get("role") == "tool"]
    assert results == [{"user": "ada@test-app", "via": "ada"}] * 2
    assert Approval.objects.filter(run=run).count() == 1
    decision = Approval.objects.get(pk=approval["id"]).decision
    assert (decision.reviewer_name, decision.reviewer_role_at_decision) == ("ada", "connection owner")
    called = run.journal.filter(kind="tool.called").first().payload
    assert called["connection"]["app"] == "tracker"
    assert called["connection"]["owner"] == "ada"

    assert ConnectionUse.objects.filter(run=run, connection__owner=ada).count() == 1
    assert str(run.pk)[:8] in adas_browser.get("/console/connections/").text


def test_her_no_reaches_the_model_as_data_and_the_tool_does_not_run(tracker, oauth_server):
    ada = member("ada")
    connect(ada, oauth_server)
    api_calls = oauth_server.control()["stats"]["api"]
    SCRIPT.replies[:] = [calls(("c1", "conn-probe.who-am-i", {})), answer("understood")]
    started = start_as_service(api_with(service_token()), connections={"tracker": "ada"})
    approval = Approval.objects.get(run_id=started["id"])
    rejected = api_of(ada).post(
        f"/api/v1/approvals/{approval.pk}/complete",
        {"decision": "reject", "rationale": "not for reports"},
        format="json",
    )
    assert rejected.status_code == 200, rejected.content
    run = Run.objects.get(pk=started["id"])
    assert run.status == RunStatus.COMPLETED
    result = next(m for m in run.messages if m.get("callId") == "c1")["content"]
    assert result["status"] == "rejected"
    assert result["error"]["code"] == "CONNECTION_REFUSED"
    assert "ada did not allow this call to use their connection" in result["error"]["message"]
    assert "not for reports" in result["error"]["message"]
    assert not run.journal.filter(kind="tool.called").exists()
    assert oauth_server.control()["stats"]["api"] == api_calls
    assert SCRIPT.requests[-1].messages[-1]["content"] == result  # what the model read next


def test_after_her_yes_a_run_waits_for_her_to_connect_when_she_has_not(tracker, oauth_server):
    ada = member("ada")
    SCRIPT.replies[:] = [calls(("c1", "conn-probe.who-am-i", {})), answer("done")]
    started = start_as_service(api_with(service_token()), connections={"tracker": "ada"})
    approval = Approval.objects.get(run_id=started["id"])
    assert (
        api_of(ada)
        .post(f"/api/v1/approvals/{approval.pk}/complete", {"decision": "approve"}, format="json")
        .status_code
        == 200
    )
    run = Run.objects.get(pk=started["id"])
    assert run.status == RunStatus.SUSPENDED
    assert run.waitpoint["subjectKind"] == "connection:required"
    assert run.waitpoint["ownerId"] == str(ada.pk)

    connect(ada, oauth_server)
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert run.journal.filter(kind="tool.called").count() == 1
    assert Approval.objects.filter(run=run).count() == 1


@pytest.mark.parametrize(
    ("connections", "error"),
    [
        ({"nowhere": "ada"}, "/connections/nowhere: there is no app 'nowhere' here (apps: mailbox, tracker)"),
        ({"tracker": "nobody"}, "/connections/tracker: there is no person 'nobody' in this tenant"),
        ({"tracker": "carol"}, "/connections/tracker: there is no person 'carol' in this tenant"),
        ({"tracker": "nightly-report"}, "/connections/tracker: 'nightly-report' is a service account"),
        ({"tracker": 7}, "/connections/tracker: must be text"),
        (["tracker"], "/connections: Expected a dictionary"),
    ],
)
def test_a_start_naming_connections_wrongly_is_refused_and_starts_nothing(tracker, connections, error):
    member("ada")
    member("carol", tenant=other_tenant())
    api = api_with(service_token())
    response = api.post(
        "/api/v1/runs",
        {"agentId": "conn-probe.assistant", "input": {"userMessage": "hi"}, "connections": connections},
        format="json",
    )
    assert response.status_code == 400, response.content
    assert any(line.startswith(error) for line in response.json()["error"]["details"]["errors"]), (
        response.json()
    )
    assert not Run.objects.exists()


def test_a_person_does_not_name_connections_their_run_uses_their_own(tracker):
    ada = member("ada")
    member("bea")
    response = api_of(ada).post(
        "/api/v1/runs",
        {
            "agentId": "conn-probe.assistant",
            "input": {"userMessage": "hi"},
            "connections": {"tracker": "bea"},
        },
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["error"]["details"]["errors"][0].startswith(
        "/connections: a run a person starts uses"
    )
    assert not Run.objects.exists()
