"""A tool that acts through a person's connection to the test app ``tracker``, for the
connections tests, and an agent that calls it (answering from the probes' ``SCRIPT``)."""

from pydantic import BaseModel

from kindgi import Effect, ToolContext, define_agent, define_pack, tool
from tests.pack_fixtures.probes import model


class Nothing(BaseModel):
    pass


class Me(BaseModel):
    user: str
    via: str


@tool(
    id="conn-probe.who-am-i",
    version="1.0.0",
    mutating=False,
    effects=[Effect.reads("app:tracker")],
    connection="tracker",
)
def who_am_i(_: Nothing, ctx: ToolContext) -> Me:
    """Ask the tracker whose account the connection is."""
    with ctx.connection.client() as http:
        response = http.get("/me")
        response.raise_for_status()
        return Me(user=response.json()["user"], via=ctx.connection.owner)


class Issue(BaseModel):
    title: str


class Filed(BaseModel):
    title: str
    by: str


@tool(
    id="conn-probe.file-issue",
    version="1.0.0",
    mutating=True,
    effects=[Effect.writes("app:tracker")],
    connection="tracker",
)
def file_issue(issue: Issue, ctx: ToolContext) -> Filed:
    """File an issue in the tracker (the test app answers who filed it)."""
    with ctx.connection.client() as http:
        response = http.get("/me")
        response.raise_for_status()
        return Filed(title=issue.title, by=response.json()["user"])


assistant = define_agent(
    id="conn-probe.assistant",
    version="1.0.0",
    name="Tracker assistant",
    instructions="Answer with the tracker's help.",
    model=model,
    tools=[who_am_i, file_issue],
    conversation_policy={"hitl": {"tools": {}}},  # a call that writes asks a person
)

pack = define_pack(name="conn-probe", tools=[who_am_i, file_issue], agents=[assistant])
