"""A pack whose agent references a tool that no pack defines."""

from kindgi import define_agent, define_pack
from tests.pack_fixtures.tools import ask

agent = define_agent(
    id="fixture.agent",
    version="0.1.0",
    name="Agent",
    instructions="Do it.",
    tools=[ask, "fixture.gone"],
)

pack = define_pack(name="fixture", tools=[ask], agents=[agent])
