"""``represent`` answers what a serializer made for each object answers, with one serializer
kept per class: whatever it represented before, and from any thread."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from approvals.actions.decisions import check_complete_approval
from approvals.api.serializers import ApprovalSerializer, CompletionSerializer
from approvals.models import Approval
from core.api.representation import represent
from runs.actions import check_start_run
from runs.api.serializers import RunDetailSerializer
from runs.models import Run
from tests.factories import default_tenant, member, principal, reviewer

pytestmark = pytest.mark.django_db(transaction=True)


def runs_of_each_kind() -> list[Run]:
    tenant = default_tenant()
    turn = check_start_run(
        tenant=tenant,
        agent_id="acme-ops.status-agent",
        input={"userMessage": "Up."},
        acting_user=member("sam", tenant=tenant),
    )
    flow = check_start_run(
        tenant=tenant,
        principal=principal(tenant),
        flow_id="my-pack.check-order",
        input={"orderId": "ord_1001"},
    )
    return [turn, flow, turn]


def test_a_run_as_its_serializer_gives_it_whatever_came_before():
    runs = [Run.objects.select_related("started_by", "service").get(pk=run.pk) for run in runs_of_each_kind()]
    assert runs[0].is_agent_turn
    assert not runs[1].is_agent_turn
    for run in runs:
        assert represent(RunDetailSerializer, run) == RunDetailSerializer(run).data
    # The flow's run has no agent, even after an agent's turn was represented.
    assert represent(RunDetailSerializer, runs[1])["agentId"] is None
    assert represent(RunDetailSerializer, runs[0])["messages"]


def test_an_approval_and_a_completion_as_their_serializers_give_them():
    run = runs_of_each_kind()[0]
    approval = Approval.objects.get(run=run)
    assert represent(ApprovalSerializer, approval) == ApprovalSerializer(approval).data
    completion = check_complete_approval(
        approval_id=approval.pk, acting_user=reviewer("ada"), decision="reject", rationale="not now"
    )
    answered = represent(CompletionSerializer, completion)
    assert answered == CompletionSerializer(completion).data
    assert answered["decision"]["rationale"] == "not now"
    decided = Approval.objects.select_related("decision").get(pk=approval.pk)
    assert represent(ApprovalSerializer, decided)["decision"]["decision"] == "reject"


def test_threads_share_the_kept_serializer():
    runs = [Run.objects.select_related("started_by", "service").get(pk=run.pk) for run in runs_of_each_kind()]
    expected = [RunDetailSerializer(run).data for run in runs]
    with ThreadPoolExecutor(4) as threads:
        answers = list(threads.map(lambda run: represent(RunDetailSerializer, run), runs * 50))
    assert answers == expected * 50
