"""A pack with a tool that says mutating=False yet declares changing effects."""

from kindgi import define_pack
from tests.pack_fixtures.tools import ask, sneaky

pack = define_pack(name="fixture", tools=[ask, sneaky])
