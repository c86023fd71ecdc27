"""`acme-ops`: posts to the public status page, behind a person's approval."""

from pydantic import Field

from kindgi import (
    CamelModel,
    Effect,
    ModelReply,
    ModelRequest,
    ToolCall,
    ToolContext,
    agent_step,
    define_agent,
    define_flow,
    define_pack,
    from_input,
    from_node,
    scripted,
    tool,
)
from packs.acme_ops.status_page import STATUS_PAGE


class StatusMessage(CamelModel):
    message: str = Field(min_length=1, max_length=500)


class Posted(CamelModel):
    posted: bool
    posted_at: str


class Person(CamelModel):
    name: str = Field(min_length=1, max_length=200)


class Greeting(CamelModel):
    greeting: str


class StatusFlowInput(CamelModel):
    user_message: str = Field(min_length=1, max_length=500)


@tool(
    id="acme-ops.post-update",
    version="0.1.0",
    description="Posts a message to the public status page.",
    summary='Post "{message}" to the public status page',
    effects=[Effect.external_side_effect("external:status-page")],
)
def post_update(update: StatusMessage, ctx: ToolContext) -> Posted:
    post = STATUS_PAGE.publish(update.message)
    posted_at = post.posted_at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return Posted(posted=True, posted_at=posted_at)


@tool(id="acme-ops.greet", version="0.1.0", mutating=False, summary="Greet {name}")
def greet(person: Person) -> Greeting:
    """Greets a person by name."""
    return Greeting(greeting=f"Hello, {person.name}!")


@scripted
def post_what_the_user_says(request: ModelRequest) -> ModelReply:
    """Posts the user's message with post-update, then says what happened. A reviewer who asks
    for changes gets their note posted in its place, once they approve that."""
    results = request.results_since_user
    if not results:
        call = ToolCall(
            id="call_post_update",
            tool_id="acme-ops.post-update",
            arguments={"message": request.last_user_message},
        )
        return ModelReply(tool_calls=(call,))
    result = results[-1]["content"]
    if result.get("status") == "changes_requested":
        # A scripted model cannot reword; it posts the reviewer's own wording instead.
        call = ToolCall(
            id=f"call_post_update_{len(results) + 1}",
            tool_id="acme-ops.post-update",
            arguments={"message": result.get("note") or request.last_user_message},
        )
        return ModelReply(tool_calls=(call,))
    if result.get("status") == "rejected":
        return ModelReply(text=f"Nothing was posted: a reviewer rejected it ({result.get('rationale')}).")
    if result.get("posted"):
        notes = [r["content"]["note"] for r in results if r["content"].get("status") == "changes_requested"]
        posted = notes[-1] if notes else request.last_user_message
        return ModelReply(text=f"Posted to the status page: {posted}")
    return ModelReply(text=f"Nothing was posted: {result.get('error', {}).get('message', result)}")


status_agent = define_agent(
    id="acme-ops.status-agent",
    version="0.1.0",
    name="Status Agent",
    description="Posts status updates.",
    instructions="Post the update the user gives you with acme-ops.post-update.",
    capabilities=[{"needs": [{"feature": "tool-use"}]}],
    tools=[
        {"id": "acme-ops.post-update", "version": "0.1.0"},
        {"id": "acme-ops.greet", "version": "0.1.0"},
    ],
    conversation_policy={"hitl": {"tools": {"overrides": {"acme-ops.post-update": "always_ask"}}}},
    model=post_what_the_user_says,
)

status_flow = define_flow(
    id="acme-ops.status-flow",
    version="0.1.0",
    description="Hands the user's message to the status agent, which posts it once approved.",
    input=StatusFlowInput,
    nodes=[
        agent_step("respond", status_agent, input={"userMessage": from_input("userMessage")}),
    ],
    output={"reply": from_node("respond", "reply")},
)

pack = define_pack(
    name="acme-ops",
    tools=[post_update, greet],
    agents=[status_agent],
    flows=[status_flow],
)
