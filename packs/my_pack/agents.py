from kindgi import AgentParameter, ModelReply, ModelRequest, define_agent, scripted
from packs.my_pack.tools import add_order_note, lookup_order


@scripted
def echo(request: ModelRequest) -> ModelReply:
    """Replies with exactly the message it was given."""
    return ModelReply(text=request.last_user_message)


echo_agent = define_agent(
    id="my-pack.echo-agent",
    version="0.1.0",
    name="Echo Agent",
    description="Replies with the message it is given.",
    instructions="Reply to the user with exactly the message you are given.",
    model=echo,
)


# A real model: Ollama's, on this machine (`ollama pull llama3.2`, then `ollama serve`). For
# OpenAI, use model="openai:gpt-4.1-mini" and set OPENAI_API_KEY; for any server that speaks the
# chat-completions protocol, model="openai-compatible:<model>@<its /v1 URL>".
order_assistant = define_agent(
    id="my-pack.order-assistant",
    version="0.1.0",
    name="Order Assistant",
    description="Answers questions about orders and notes them, with a real model (Ollama's llama3.2).",
    instructions=(
        "You help the support team with orders. Look an order up with my-pack.lookup-order before "
        "you say anything about it, and add a note with my-pack.add-order-note only when asked to. "
        "Answer in a {tone} tone, in one or two sentences."
    ),
    parameters=[
        AgentParameter(
            name="tone", schema={"type": "string", "default": "friendly"}, description="How to answer."
        )
    ],
    tools=[lookup_order, add_order_note],
    model="openai-compatible:llama3.2@http://127.0.0.1:11434/v1",
    capabilities=[{"needs": [{"feature": "tool-use"}]}],
    conversation_policy={"hitl": {"tools": {}}},
)
