"""kindgi-mail: ready-made tools that read and answer a mailbox's mail, and a sample agent.

Every tool acts through the "mailbox" connection: the mailboxes of the person whose connection
the run uses. In a run a mail started, that is the mailbox's owner, and only that mailbox; so its
first call waits for the owner's yes (connection:use), even a read. The reads' results are mail
someone sent, text nobody checked: the model reads them as outside data. Replying and sending
change something outside (external:mail), so a gate asks before them by default.
"""

import json

from pydantic import Field

from kindgi import (
    CamelModel,
    Effect,
    ModelReply,
    ModelRequest,
    ToolCall,
    ToolContext,
    define_agent,
    define_pack,
    scripted,
    tool,
)

MAILBOX = "mailbox"


class Search(CamelModel):
    query: str = Field(default="", max_length=500, description="Words every mail found must have.")
    limit: int = Field(default=10, ge=1, le=50)


class MailSummary(CamelModel):
    id: str
    mailbox: str
    direction: str
    from_: str = Field(alias="from")
    subject: str
    at: str
    snippet: str


class Found(CamelModel):
    messages: list[MailSummary]


class MailRef(CamelModel):
    id: str = Field(min_length=1, description="A mail's id, as kindgi-mail.search or a run's input gives it.")


class AttachmentInfo(CamelModel):
    filename: str
    content_type: str
    size: int


class Mail(MailSummary):
    to: list[str]
    text: str
    message_id: str
    in_reply_to: str | None = None
    attachments: list[AttachmentInfo]


class Reply(CamelModel):
    id: str = Field(min_length=1, description="The mail to answer.")
    text: str = Field(min_length=1, max_length=20_000)


class NewMail(CamelModel):
    to: list[str] = Field(min_length=1, max_length=20)
    subject: str = Field(min_length=1, max_length=500)
    text: str = Field(min_length=1, max_length=20_000)
    from_mailbox: str | None = Field(default=None, description="Which of the owner's mailboxes sends it.")


class Sent(CamelModel):
    id: str
    mailbox: str
    to: list[str]
    subject: str
    message_id: str


@tool(
    id="kindgi-mail.search",
    version="1.0.0",
    mutating=False,
    effects=[Effect.reads("mail:mailbox")],
    result_is_outside_data=True,
    connection=MAILBOX,
    summary='Search the mailbox for "{query}"',
)
def search(ask: Search, ctx: ToolContext) -> Found:
    """Find mail in the mailbox, newest first: received and sent, with every word of the query."""
    with ctx.connection.client() as mail:
        return Found(messages=mail.search(ask.query, limit=ask.limit))


@tool(
    id="kindgi-mail.read",
    version="1.0.0",
    mutating=False,
    effects=[Effect.reads("mail:mailbox")],
    result_is_outside_data=True,
    connection=MAILBOX,
    summary="Read the mail {id}",
)
def read(ref: MailRef, ctx: ToolContext) -> Mail:
    """Read one mail whole: who sent it, to whom, its text, and its attachments' names and sizes."""
    with ctx.connection.client() as mail:
        return Mail.model_validate(mail.read(ref.id))


@tool(
    id="kindgi-mail.reply",
    version="1.0.0",
    effects=[Effect.external_side_effect("external:mail")],
    connection=MAILBOX,
    summary='Reply to the mail {id}: "{text}"',
)
def reply(answer: Reply, ctx: ToolContext) -> Sent:
    """Answer a mail in its thread, to whoever sent it, from the mailbox it came to."""
    with ctx.connection.client() as mail:
        return Sent.model_validate(mail.reply(answer.id, answer.text))


@tool(
    id="kindgi-mail.send",
    version="1.0.0",
    effects=[Effect.external_side_effect("external:mail")],
    connection=MAILBOX,
    summary='Send "{subject}" to {to}: "{text}"',
)
def send(new: NewMail, ctx: ToolContext) -> Sent:
    """Send a new mail from one of the mailbox owner's mailboxes."""
    with ctx.connection.client() as mail:
        return Sent.model_validate(
            mail.send(to=new.to, subject=new.subject, text=new.text, from_address=new.from_mailbox)
        )


def _mail_of(request: ModelRequest) -> dict:
    """The mail the run started with, from the outside-data message that carries it."""
    for message in request.messages:
        if message["role"] == "user" and message.get("outsideData"):
            envelope = json.loads(message["content"])
            return envelope["data"]
    return {}


@scripted
def acknowledge(request: ModelRequest) -> ModelReply:
    """Reads the mail that started the run, then answers that it was received. (A stand-in: give
    the agent a real model to answer properly.)"""
    results = request.results_since_user
    mail = _mail_of(request)
    if not mail:
        return ModelReply(text="There is no mail to answer.")
    if not results:
        return ModelReply(
            tool_calls=(ToolCall(id="read", tool_id="kindgi-mail.read", arguments={"id": mail["id"]}),)
        )
    last = results[-1]
    content = last["content"]
    read_back = (
        content.get("data") if isinstance(content, dict) and content.get("kind") == "outside-data" else None
    )
    if last["toolId"] == "kindgi-mail.read" and isinstance(read_back, dict) and "messageId" in read_back:
        text = f"Thank you for your mail about {mail['subject'] or 'your question'!r}: we have received it."
        return ModelReply(
            tool_calls=(
                ToolCall(id="reply", tool_id="kindgi-mail.reply", arguments={"id": mail["id"], "text": text}),
            )
        )
    if last["toolId"] == "kindgi-mail.reply" and isinstance(content, dict) and content.get("messageId"):
        return ModelReply(text=f"Answered {mail['from']}.")
    return ModelReply(text=f"Not answered: {read_back if read_back is not None else content}")


responder = define_agent(
    id="kindgi-mail.responder",
    version="1.0.0",
    name="Mail responder",
    description="Reads the mail that started its run and answers that it was received.",
    instructions="Read the mail that arrived with kindgi-mail.read, then answer it with kindgi-mail.reply.",
    capabilities=[{"needs": [{"feature": "tool-use"}]}],
    tools=[read, reply],
    # Gates on, with no overrides: the read runs (after the owner's yes), the reply asks first.
    conversation_policy={"hitl": {"tools": {}}},
    model=acknowledge,
)

pack = define_pack(name="kindgi-mail", tools=[search, read, reply, send], agents=[responder])
