from datetime import datetime

from kindgi import GateOverride, ToolContext
from packs.acme_ops import StatusMessage, pack, post_update, status_agent
from packs.acme_ops.status_page import STATUS_PAGE


def test_post_update_publishes_to_the_status_page():
    posted = post_update(StatusMessage(message="Checkout is back to normal."), ToolContext())
    assert posted.posted is True
    assert posted.model_dump(by_alias=True).keys() == {"posted", "postedAt"}
    assert datetime.fromisoformat(posted.posted_at).tzinfo is not None
    assert [p.message for p in STATUS_PAGE.posts] == ["Checkout is back to normal."]


def test_post_update_is_as_the_seed_declares_it():
    assert post_update.description == "Posts a message to the public status page."
    assert post_update.mutating is True
    assert [e.to_dict() for e in post_update.effects] == [
        {"kind": "external-side-effect", "resource": "external:status-page"}
    ]
    assert not post_update.is_read_only
    assert post_update.input_schema["properties"]["message"] == {
        "maxLength": 500,
        "minLength": 1,
        "title": "Message",
        "type": "string",
    }


def test_the_status_agent_always_asks_before_posting():
    assert status_agent.gates_enabled
    assert status_agent.gate_overrides == {"acme-ops.post-update": GateOverride.ALWAYS_ASK}
    assert [(ref.id, ref.version) for ref in status_agent.tools] == [
        ("acme-ops.post-update", "0.1.0"),
        ("acme-ops.greet", "0.1.0"),
    ]
    greet = next(t for t in pack.tools if t.id == "acme-ops.greet")
    assert greet.is_read_only


def test_the_status_flow_hands_the_user_message_to_the_agent():
    [flow] = pack.flows
    [respond] = flow.nodes
    assert (respond.id, respond.kind.value, respond.target) == ("respond", "agent", "acme-ops.status-agent")
    assert respond.input == {"userMessage": {"$ref": "#/input/userMessage"}}
    assert flow.input_schema["required"] == ["userMessage"]
