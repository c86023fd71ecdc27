"""`my-pack`: orders and greetings, the quickstarts' pack."""

from kindgi import define_pack
from packs.my_pack.agents import echo_agent, order_assistant
from packs.my_pack.flows import check_order, echo_flow, note_order
from packs.my_pack.tools import add_order_note, greet, lookup_order

pack = define_pack(
    name="my-pack",
    tools=[lookup_order, add_order_note, greet],
    agents=[echo_agent, order_assistant],
    flows=[check_order, note_order, echo_flow],
)
