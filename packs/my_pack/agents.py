from kindgi import ModelReply, ModelRequest, define_agent, scripted


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
