"""A run's call through a person's connection: a person-started run uses its starter's, and waits
for them to connect the app when they have none (or it stopped working), then goes on by itself."""

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from approvals.actions.rules import check_save_rule
from connections.models import Connection
from runs.actions import check_cancel_run, check_start_run
from runs.models import BudgetCharge, Run, RunStatus
from tenants.tokens import do_create_token
from tests.connections.test_connecting import connect
from tests.factories import default_tenant, member, principal
from tests.pack_fixtures.probes import SCRIPT
from tests.runs.helpers import answer, calls

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("probe_packs")]


def ask_who(user) -> Run:
    SCRIPT.replies[:] = [calls(("c1", "conn-probe.who-am-i", {})), answer("done")]
    return check_start_run(
        agent_id="conn-probe.assistant", input={"userMessage": "who am I?"}, acting_user=user
    )


def result_of(run: Run, call_id: str):
    return next(m["content"] for m in run.messages if m.get("callId") == call_id)


def test_a_person_without_a_connection_is_asked_and_the_run_goes_on_once_they_connect(tracker, oauth_server):
    ada = member("ada")
    api_calls = oauth_server.control()["stats"]["api"]
    run = ask_who(ada)
    assert run.status == RunStatus.SUSPENDED
    assert run.waitpoint == {
        "kind": "connection",
        "subjectKind": "connection:required",
        "callId": "c1",
        "toolId": "conn-probe.who-am-i",
        "app": "tracker",
        "ownerId": str(ada.pk),
        "nodeId": "",
    }
    assert not run.journal.filter(kind="tool.called").exists()
    page = _console_of(ada)
    assert "waits for you to connect Tracker" in page

    connect(ada, oauth_server)
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert result_of(run, "c1") == {"user": "ada@test-app", "via": "ada"}
    assert run.journal.filter(kind="tool.called").count() == 1
    assert oauth_server.control()["stats"]["api"] == api_calls + 1


def test_a_revoked_grant_makes_the_next_call_wait_for_a_new_connection(tracker, oauth_server):
    ada = member("ada")
    connection = connect(ada, oauth_server)
    oauth_server.control(revokeAll=True)
    Connection.objects.filter(pk=connection.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    run = ask_who(ada)
    assert run.status == RunStatus.SUSPENDED
    assert run.waitpoint["subjectKind"] == "connection:required"
    connection.refresh_from_db()
    assert connection.status == "revoked"

    connect(ada, oauth_server)
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED


def test_a_run_nobody_started_whose_start_named_no_one_uses_no_ones_connection(tracker, oauth_server):
    connect(member("ada"), oauth_server)
    SCRIPT.replies[:] = [calls(("c1", "conn-probe.who-am-i", {})), answer("done")]
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        agent_id="conn-probe.assistant",
        input={"userMessage": "who?"},
    )
    assert run.status == RunStatus.COMPLETED
    error = result_of(run, "c1")["error"]
    assert error["code"] == "TOOL_NOT_ALLOWED"
    assert "no person started this run, and its start named no one's connection" in error["message"]
    assert not run.journal.filter(kind="tool.called").exists()


def test_the_catalog_says_which_app_a_tool_uses(tracker):
    from tools.loading import do_load_catalog

    do_load_catalog()
    _, token = do_create_token(user=member("ada"))
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert api.get("/api/v1/tools/conn-probe.who-am-i").json()["connection"] == "tracker"
    assert api.get("/api/v1/tools/my-pack.lookup-order").json()["connection"] is None


def _console_of(user) -> str:
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client.get("/console/connections/").text


def test_the_tokens_appear_in_no_journal_conversation_response_page_or_log(tracker, oauth_server, caplog):
    from django.test import Client

    from connections.crypto import unseal

    ada = member("ada")
    connection = connect(ada, oauth_server)
    secrets = [unseal(connection.access_token), unseal(connection.refresh_token)]
    run = ask_who(ada)
    assert run.status == RunStatus.COMPLETED
    _, token = do_create_token(user=ada)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    browser = Client()
    browser.force_login(ada)
    seen = [
        str(list(run.journal.values_list("payload", flat=True))),
        str(run.messages),
        api.get(f"/api/v1/runs/{run.pk}").content.decode(),
        api.get(f"/api/v1/runs/{run.pk}/journal").content.decode(),
        api.get("/api/v1/connections").content.decode(),
        browser.get(f"/console/runs/{run.pk}/").content.decode(),
        browser.get("/console/connections/").content.decode(),
        caplog.text,
    ]
    for secret in secrets:
        assert secret
        assert not [text for text in seen if secret in text]


def test_a_decision_refreshes_no_token_and_a_refused_edit_loses_none(tracker, oauth_server):
    """An expired token is refreshed as the approved call's execution starts, outside the
    decision's transaction: an edit the policy refuses rolls that transaction back, and a refresh
    inside it would have spent the app's refresh token (the app rotates it) for nothing."""
    from approvals.actions.decisions import check_complete_approval
    from approvals.exceptions import ApprovalInputError
    from approvals.models import Approval
    from tests.factories import reviewer

    ada = member("ada")
    connection = connect(ada, oauth_server)
    SCRIPT.replies[:] = [calls(("c1", "conn-probe.file-issue", {"title": "printer"})), answer("filed")]
    run = check_start_run(agent_id="conn-probe.assistant", input={"userMessage": "file it"}, acting_user=ada)
    assert run.status == RunStatus.SUSPENDED
    approval = Approval.objects.get(run=run)
    Connection.objects.filter(pk=connection.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    refreshed = oauth_server.control()["stats"]["refreshed"]
    rita = reviewer("rita", role="admin")

    with pytest.raises(ApprovalInputError):
        check_complete_approval(
            approval_id=approval.pk, acting_user=rita, decision="approve", arguments={"title": 5}
        )
    assert oauth_server.control()["stats"]["refreshed"] == refreshed

    check_complete_approval(
        approval_id=approval.pk, acting_user=rita, decision="approve", arguments={"title": "printer on 3"}
    )
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED, run.failure_message
    assert result_of(run, "c1")["result"] == {"title": "printer on 3", "by": "ada@test-app"}
    assert oauth_server.control()["stats"]["refreshed"] == refreshed + 1
    connection.refresh_from_db()
    assert connection.status == "active"


def test_a_charged_call_waiting_for_a_connection_stops_counting_when_its_run_is_cancelled(tracker):
    """The call passed its gate (and was charged to its budget), then waited for its owner to
    connect the app; cancelled there, it never ran, so it gives its charge back."""
    check_save_rule(
        tenant=default_tenant(),
        fields={
            "name": "who asks",
            "tool_pattern": "conn-probe.who-am-i",
            "gate": "never_ask",
            "budget": {"scope": "principal", "maxCalls": 1},
        },
        acting_user=None,
        surface="system",
    )
    ada = member("ada")
    run = ask_who(ada)
    assert run.waitpoint["subjectKind"] == "connection:required"
    assert BudgetCharge.objects.filter(run=run).count() == 1
    check_cancel_run(run.pk, acting_user=ada)
    assert not BudgetCharge.objects.exists()
