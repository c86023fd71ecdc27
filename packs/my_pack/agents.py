from kindgi import define_agent

echo_agent = define_agent(
    id="my-pack.echo-agent",
    version="0.1.0",
    name="Echo Agent",
    description="Replies with the message it is given.",
    instructions="Reply to the user with exactly the message you are given.",
    model="scripted",
)
