"""The call policy on its own: pure, with no database; each step's reasons, in order."""

from dataclasses import replace

import pytest

from kindgi import ToolConnection, allow, before_tool, refuse
from kindgi.gates import RuleGate
from runs.engine.entries import EntryKind
from runs.engine.gates import AgentGates, Override, Rule
from runs.engine.policy import (
    EDIT_STEPS,
    PolicyContext,
    Ready,
    Refused,
    Stop,
    Suspend,
    prepare,
    proposed,
)
from runs.engine.state import RunFacts, RunState
from runs.engine.waitpoints import INTERRUPTED_REASON, call_digest
from tests.pack_fixtures.connection_probes import who_am_i
from tests.pack_fixtures.probes import pay, read, write

TOOLS = {tool.id: tool for tool in (read, write, pay)}
PAYMENT = {"amountCents": 500, "to": "bob"}


def context(**changes) -> PolicyContext:
    base = PolicyContext(
        run=RunFacts(id="run-1"),
        tools=TOOLS,
        agent_id="probe.payer",
        agent_gates=AgentGates(enabled=True, overrides={}),
    )
    return replace(base, **changes)


def judge(tool_id, arguments, *, state=None, ctx=None, call_id="c1", steps=None):
    state = state or RunState()
    call = proposed(call_id=call_id, tool_id=tool_id, arguments=arguments, state=state)
    return prepare(call, state, ctx or context(), steps=steps)


def resumed(call_id, resolution) -> RunState:
    state = RunState()
    waitpoint = {
        "kind": "approval",
        "subjectKind": "tool-call:pending",
        "callId": call_id,
        "toolId": "probe.pay",
    }
    state.apply(EntryKind.WAIT_RESUMED, "", {"waitpoint": waitpoint, "resolution": resolution})
    return state


def test_a_read_only_tool_is_ready_with_its_validated_arguments():
    verdict = judge("probe.read", {"label": "a"})
    assert isinstance(verdict, Ready)
    assert verdict.call.arguments == {"label": "a", "pause_ms": 30}
    assert verdict.call.gate.reason == "default: the tool is read-only"


def test_the_run_policy_comes_before_everything_else():
    dry = judge("probe.pay", {"nonsense": True}, ctx=context(run=RunFacts(id="r", dry_run=True)))
    assert isinstance(dry, Stop)
    assert dry.message.startswith('dry-run-effectful-tool: tool "probe.pay"')
    read_only = judge("probe.pay", PAYMENT, ctx=context(run=RunFacts(id="r", read_only=True)))
    assert isinstance(read_only, Refused)
    assert read_only.result["error"]["code"] == "TOOL_NOT_ALLOWED"
    assert read_only.failure.startswith('read-only-run: tool "probe.pay"')


def test_an_unknown_tool_is_refused_as_data():
    verdict = judge("probe.nope", {})
    assert isinstance(verdict, Refused)
    assert verdict.result["error"]["message"] == '"probe.nope" is not one of this agent\'s tools.'


def test_invalid_arguments_are_refused_as_data_with_each_field_and_never_ask_a_person():
    verdict = judge("probe.pay", {"amountCents": 0, "memo": "x"})
    assert isinstance(verdict, Refused)
    assert verdict.kind == EntryKind.TOOL_FAILED
    assert verdict.errors == (
        "/amountCents: Input should be greater than or equal to 1",
        "/to: Field required",
        "/memo: unknown field (the fields are: amountCents, to)",
    )
    assert verdict.result["stateChanged"] is False


def test_a_call_that_must_ask_suspends_on_an_approval_that_binds_its_digest():
    verdict = judge("probe.pay", PAYMENT)
    assert isinstance(verdict, Suspend)
    assert verdict.waitpoint["digest"] == call_digest("probe.pay", "1.0.0", PAYMENT)
    assert verdict.waitpoint["gate"]["reason"] == "default: first use of a tool that is not read-only"


def test_a_tenant_deny_refuses_even_an_approved_call():
    state = resumed("c1", {"decision": "approve", "digest": call_digest("probe.pay", "1.0.0", PAYMENT)})
    deny = Rule(id=1, name="frozen", gate=RuleGate.DENY, tool_pattern="probe.pay", reason="Frozen.")
    verdict = judge("probe.pay", PAYMENT, state=state, ctx=context(rules=[deny]))
    assert isinstance(verdict, Refused)
    assert verdict.failure == 'tool-denied: tool "probe.pay" is denied by rule "frozen": Frozen.'


def test_a_rejection_refuses_the_call_whatever_the_gate_says_now():
    state = resumed("c1", {"decision": "reject", "rationale": "No.", "reviewer": "Sam"})
    never = AgentGates(enabled=True, overrides={"probe.pay": Override(gate="never_ask", source="admin")})
    verdict = judge("probe.pay", PAYMENT, state=state, ctx=context(agent_gates=never))
    assert isinstance(verdict, Refused)
    assert verdict.result == {"status": "rejected", "rationale": "No."}


def test_an_edited_approval_is_judged_and_runs_as_edited():
    edited = {"amountCents": 400, "to": "bob"}
    state = resumed(
        "c1",
        {"decision": "approve", "arguments": edited, "digest": call_digest("probe.pay", "1.0.0", edited)},
    )
    verdict = judge("probe.pay", PAYMENT, state=state)
    assert isinstance(verdict, Ready)
    assert (verdict.call.arguments, verdict.call.model_arguments) == (edited, PAYMENT)


def test_a_call_that_does_not_match_the_approved_digest_does_not_run():
    state = resumed(
        "c1", {"decision": "approve", "digest": call_digest("probe.pay", "1.0.0", {"amountCents": 1})}
    )
    verdict = judge("probe.pay", PAYMENT, state=state)
    assert isinstance(verdict, Refused)
    assert verdict.result["error"]["code"] == "APPROVAL_MISMATCH"


def test_an_interrupted_call_waits_for_a_person_unless_its_tool_is_idempotent():
    state = RunState()
    state.apply(EntryKind.TOOL_CALLED, "", {"callId": "c1"})
    verdict = judge("probe.read", {"label": "a"}, state=state)
    assert isinstance(verdict, Suspend)
    assert verdict.waitpoint["subjectKind"] == "tool-call:interrupted"


class TestTheRecoveryGate:
    """The approval to repeat an interrupted call needs at least what running it needed: the gate
    of the approval that let it run (as escalation left it), or the gate it would have now, or the
    stricter of both; which role is higher is the order the driver passes in."""

    ROLES = ("standard", "senior", "admin")
    NEVER = AgentGates(enabled=True, overrides={"probe.pay": Override(gate="never_ask", source="admin")})

    def ctx(self, **changes) -> PolicyContext:
        return context(reviewer_roles=self.ROLES, **changes)

    def interrupted(self, approval_gate=None, *escalations, approval_id="a1") -> RunState:
        """A run whose call c1 (to probe.pay) started and never finished: first approved under
        ``approval_gate``, after ``escalations`` of that approval, if it is given."""
        state = RunState()
        for step in escalations:
            state.apply(EntryKind.APPROVAL_ESCALATED, "", step)
        if approval_gate is not None:
            waitpoint = {
                "kind": "approval",
                "subjectKind": "tool-call:pending",
                "callId": "c1",
                "toolId": "probe.pay",
                "approvalId": approval_id,
                "gate": {"gate": "ask", "reason": "rule", **approval_gate},
            }
            resolution = {"decision": "approve", "digest": call_digest("probe.pay", "1.0.0", PAYMENT)}
            state.apply(EntryKind.WAIT_RESUMED, "", {"waitpoint": waitpoint, "resolution": resolution})
        state.apply(EntryKind.TOOL_CALLED, "", {"callId": "c1", "toolId": "probe.pay"})
        return state

    def gate_of_repeat(self, state, ctx) -> dict:
        verdict = judge("probe.pay", PAYMENT, state=state, ctx=ctx)
        assert isinstance(verdict, Suspend)
        assert verdict.waitpoint["subjectKind"] == "tool-call:interrupted"
        gate = verdict.waitpoint["gate"]
        assert gate["gate"] == "ask"
        assert gate["reason"].startswith(INTERRUPTED_REASON)
        return gate

    def needs(self, gate) -> dict:
        return {key: gate[key] for key in ("requiredRole", "reviewerIds", "requiredApprovals") if key in gate}

    def test_it_needs_what_the_approval_that_let_it_run_needed(self):
        state = self.interrupted({"requiredRole": "admin", "reviewerIds": [7, 8], "requiredApprovals": 2})
        # The agent's own gate asks now too, but needs nothing more than any reviewer.
        gate = self.gate_of_repeat(state, self.ctx())
        assert self.needs(gate) == {"requiredRole": "admin", "reviewerIds": [7, 8], "requiredApprovals": 2}
        assert (
            "Repeating it needs at least what running it needed: the role admin or higher, 2 approvals "
            "from distinct reviewers, reviewers among the 2 named (from the approval that let it run; "
            "its gate now: default: first use of a tool that is not read-only)."
        ) in gate["reason"]

    def test_it_needs_what_escalation_raised_that_approval_to(self):
        state = self.interrupted(
            {"reviewerIds": [7]},
            {"approvalId": "a1", "step": 1, "action": "raiseRole", "requiredRole": "senior"},
            {
                "approvalId": "a1",
                "step": 2,
                "action": "addReviewers",
                "reviewers": ["ivy"],
                "reviewerIds": [7, 9],
            },
            {"approvalId": "a1", "step": 3, "action": "notify", "notify": ["lead"]},
            # Another approval's escalation is not this call's.
            {"approvalId": "a2", "step": 1, "action": "raiseRole", "requiredRole": "admin"},
        )
        gate = self.gate_of_repeat(state, self.ctx(agent_gates=self.NEVER))
        assert self.needs(gate) == {"requiredRole": "senior", "reviewerIds": [7, 9]}

    def test_a_call_that_ran_without_asking_needs_what_its_gate_asks_now(self):
        rule = Rule(
            id=4,
            name="payments",
            gate=RuleGate.ALWAYS_ASK,
            tool_pattern="probe.pay",
            required_role="senior",
            reviewer_ids=(3, 4),
            required_approvals=2,
        )
        gate = self.gate_of_repeat(self.interrupted(), self.ctx(agent_gates=self.NEVER, rules=[rule]))
        assert self.needs(gate) == {"requiredRole": "senior", "reviewerIds": [3, 4], "requiredApprovals": 2}
        assert 'its gate now: rule "payments" (always_ask)' in gate["reason"]

    @pytest.mark.parametrize(
        ("approved", "needs"),
        [
            # The stricter role and count; the original approval's named reviewers.
            (
                {"requiredRole": "senior", "reviewerIds": [7]},
                {"requiredRole": "admin", "reviewerIds": [7], "requiredApprovals": 2},
            ),
            # It named none: the current gate's.
            ({}, {"requiredRole": "admin", "reviewerIds": [5, 6], "requiredApprovals": 2}),
            (
                {"requiredRole": "admin", "requiredApprovals": 3},
                {"requiredRole": "admin", "reviewerIds": [5, 6], "requiredApprovals": 3},
            ),
        ],
    )
    def test_when_both_ask_the_stricter_of_both(self, approved, needs):
        rule = Rule(
            id=5,
            name="big payments",
            gate=RuleGate.ALWAYS_ASK,
            tool_pattern="probe.pay",
            required_role="admin",
            reviewer_ids=(5, 6),
            required_approvals=2,
        )
        gate = self.gate_of_repeat(self.interrupted(approved), self.ctx(agent_gates=self.NEVER, rules=[rule]))
        assert self.needs(gate) == needs

    def test_the_higher_role_is_the_one_the_drivers_order_says(self):
        rule = Rule(
            id=6, name="r", gate=RuleGate.ALWAYS_ASK, tool_pattern="probe.pay", required_role="standard"
        )
        state = self.interrupted({"requiredRole": "admin"})
        ctx = self.ctx(agent_gates=self.NEVER, rules=[rule])
        assert self.needs(self.gate_of_repeat(state, ctx)) == {"requiredRole": "admin"}
        upside_down = replace(ctx, reviewer_roles=tuple(reversed(self.ROLES)))
        assert self.needs(self.gate_of_repeat(state, upside_down)) == {"requiredRole": "standard"}

    def test_a_call_that_ran_without_asking_and_would_not_ask_now_needs_any_reviewer(self):
        verdict = judge("probe.pay", PAYMENT, state=self.interrupted(), ctx=self.ctx(agent_gates=self.NEVER))
        assert verdict.waitpoint["gate"] == {"gate": "ask", "reason": INTERRUPTED_REASON}


def test_a_guardrail_judges_after_the_gate_and_its_judgement_is_noted_either_way():
    @before_tool(tools=["probe.read"])
    def no_b(call):
        return refuse("no b") if call.arguments["label"] == "b" else allow()

    ctx = context(guardrails=(no_b,))
    refused = judge("probe.read", {"label": "b"}, ctx=ctx)
    assert isinstance(refused, Refused)
    assert [note.payload["allowed"] for note in refused.call.notes] == [False]
    allowed = judge("probe.read", {"label": "a"}, ctx=ctx)
    assert isinstance(allowed, Ready)
    assert [note.payload["allowed"] for note in allowed.call.notes] == [True]


@pytest.mark.parametrize("tool_id", ["probe.write", "probe.pay"])
def test_the_edit_steps_stop_at_the_gate(tool_id):
    arguments = {"label": "a"} if tool_id == "probe.write" else PAYMENT
    verdict = judge(tool_id, arguments, steps=EDIT_STEPS)
    assert isinstance(verdict, Suspend)
    assert verdict.gate is not None


class TestTheConnectionStep:
    """Whose connection a call uses, and who must say yes first."""

    TOOLS = {who_am_i.id: who_am_i}
    ADA = "7"

    def ctx(self, *, started_by=None, owners=None, connected=True) -> PolicyContext:
        connection = ToolConnection(app="tracker", owner="ada", open_client=lambda: None)
        return PolicyContext(
            run=RunFacts(
                id="r",
                principal=started_by,
                person_started=started_by is not None,
                connection_owners=owners or {},
            ),
            tools=self.TOOLS,
            agent_id="conn-probe.assistant",
            agent_gates=AgentGates(enabled=True, overrides={}),
            connections={"tracker": connection} if connected else {},
        )

    def answered(self, call_id: str, decision: str, owner: str = ADA) -> RunState:
        state = RunState()
        waitpoint = {
            "kind": "approval",
            "subjectKind": "connection:use",
            "callId": call_id,
            "toolId": "conn-probe.who-am-i",
            "app": "tracker",
            "ownerId": owner,
        }
        resolution = {"decision": decision, "rationale": "no thanks", "reviewer": "Ada"}
        state.apply(EntryKind.WAIT_RESUMED, "", {"waitpoint": waitpoint, "resolution": resolution})
        return state

    def test_a_persons_run_uses_their_connection_without_asking(self):
        verdict = judge("conn-probe.who-am-i", {}, ctx=self.ctx(started_by=self.ADA))
        assert isinstance(verdict, Ready)
        assert verdict.call.connection.owner == "ada"

    def test_a_persons_run_without_the_connection_waits_for_them_to_connect(self):
        verdict = judge("conn-probe.who-am-i", {}, ctx=self.ctx(started_by=self.ADA, connected=False))
        assert isinstance(verdict, Suspend)
        assert verdict.waitpoint["subjectKind"] == "connection:required"
        assert verdict.waitpoint["ownerId"] == self.ADA

    def test_a_run_no_person_started_asks_the_named_owner_even_for_a_read(self):
        verdict = judge("conn-probe.who-am-i", {}, ctx=self.ctx(owners={"tracker": self.ADA}))
        assert isinstance(verdict, Suspend)
        assert verdict.waitpoint["kind"] == "approval"
        assert verdict.waitpoint["subjectKind"] == "connection:use"
        assert (verdict.waitpoint["app"], verdict.waitpoint["ownerId"]) == ("tracker", self.ADA)
        assert verdict.waitpoint["digest"] == call_digest("conn-probe.who-am-i", "1.0.0", {})

    def test_the_owners_yes_covers_every_later_call_of_the_run(self):
        state = self.answered("c1", "approve")
        ctx = self.ctx(owners={"tracker": self.ADA})
        for call_id in ("c1", "c2", "c9"):
            verdict = judge("conn-probe.who-am-i", {}, state=state, ctx=ctx, call_id=call_id)
            assert isinstance(verdict, Ready), call_id
        assert state.resolutions == {}  # a yes to the connection approves no call

    def test_a_yes_from_someone_else_covers_nothing(self):
        state = self.answered("c1", "approve", owner="8")
        verdict = judge("conn-probe.who-am-i", {}, state=state, ctx=self.ctx(owners={"tracker": self.ADA}))
        assert isinstance(verdict, Suspend)

    def test_the_owners_no_refuses_that_call_as_data_and_a_later_call_asks_again(self):
        state = self.answered("c1", "reject")
        ctx = self.ctx(owners={"tracker": self.ADA})
        refused = judge("conn-probe.who-am-i", {}, state=state, ctx=ctx, call_id="c1")
        assert isinstance(refused, Refused)
        assert refused.result["status"] == "rejected"
        assert refused.result["error"]["code"] == "CONNECTION_REFUSED"
        assert "no thanks" in refused.result["error"]["message"]
        again = judge("conn-probe.who-am-i", {}, state=state, ctx=ctx, call_id="c2")
        assert isinstance(again, Suspend)

    def test_after_the_yes_a_missing_connection_waits_for_its_owner_to_connect(self):
        state = self.answered("c1", "approve")
        ctx = self.ctx(owners={"tracker": self.ADA}, connected=False)
        verdict = judge("conn-probe.who-am-i", {}, state=state, ctx=ctx)
        assert isinstance(verdict, Suspend)
        assert verdict.waitpoint["subjectKind"] == "connection:required"
        assert verdict.waitpoint["ownerId"] == self.ADA

    def test_a_run_no_person_started_that_named_no_one_is_refused(self):
        verdict = judge("conn-probe.who-am-i", {}, ctx=self.ctx())
        assert isinstance(verdict, Refused)
        assert verdict.result["error"]["code"] == "TOOL_NOT_ALLOWED"
