"""An agent with the ready-made mail tools, answering from the probes' ``SCRIPT``."""

from kindgi import define_agent, define_pack
from packs.kindgi_mail import read, search
from tests.pack_fixtures.probes import model

reader = define_agent(
    id="mail-probe.reader",
    version="1.0.0",
    name="Mail reader",
    instructions="Find and read mail.",
    model=model,
    tools=[search, read],
)

pack = define_pack(name="mail-probe", agents=[reader])
