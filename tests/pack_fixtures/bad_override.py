"""A pack whose agent declares an override value that does not exist."""

from kindgi import define_agent, define_pack
from tests.pack_fixtures.tools import ask

agent = define_agent(
    id="fixture.agent",
    version="0.1.0",
    name="Agent",
    instructions="Do it.",
    tools=[ask],
    conversation_policy={"hitl": {"tools": {"overrides": {"fixture.ask": "maybe"}}}},
)

pack = define_pack(name="fixture", tools=[ask], agents=[agent])
