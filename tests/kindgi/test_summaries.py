"""A tool's summary: a sentence over the call's arguments, checked when the tool is defined."""

import pytest
from pydantic import BaseModel

from kindgi import tool
from kindgi.errors import DefinitionError
from kindgi.summaries import fallback_summary, render_summary


class Refund(BaseModel):
    orderRef: str  # noqa: N815
    amountCents: int  # noqa: N815
    to: list[str] = []


class Done(BaseModel):
    ok: bool


def refund_tool(summary):
    @tool(id="t.refund", version="1.0.0", summary=summary)
    def refund(ask: Refund) -> Done:
        """Refunds an order. Money goes back to the customer."""
        return Done(ok=True)

    return refund


def test_a_summary_names_the_calls_arguments():
    refund = refund_tool("Refund {amountCents} cents on order {orderRef} to {to} {{really}}")
    said = refund.summarize({"orderRef": "ord_1", "amountCents": 1200, "to": ["ada@x.test", "bo@x.test"]})
    assert said == "Refund 1200 cents on order ord_1 to ada@x.test, bo@x.test {really}"
    assert refund.summarize({"orderRef": "ord_1"}) == "Refund (none) cents on order ord_1 to (none) {really}"


@pytest.mark.parametrize(
    ("summary", "says"),
    [
        ("Refund {amount}", "names {amount}, which is not among the tool's arguments (amountCents, orderRef"),
        ("Refund {orderRef.__class__}", "is not an argument's name"),
        ("Refund {orderRef!r}", "is not an argument's name"),
        ("Refund {0}", "is not an argument's name"),
        ("Refund { cents", "has a lone '{'"),
        ("", "summary must be a sentence"),
    ],
)
def test_a_summary_that_names_what_is_not_an_argument_is_refused_when_defined(summary, says):
    with pytest.raises(DefinitionError, match=r"tool 't\.refund'") as refused:
        refund_tool(summary)
    assert says in str(refused.value)


def test_long_and_odd_values_are_cut_at_a_word_and_kept_on_one_line():
    said = render_summary('Post "{message}"', {"message": "word " * 100 + "\n\nlast"})
    assert len(said) <= 400
    assert "\n" not in said
    assert said.endswith('word…"')


def test_a_tool_without_a_summary_is_summed_up_by_its_description_and_arguments():
    said = fallback_summary("Refunds an order. Money goes back.", {"a": 1, "b": "two", "c": [3], "d": None})
    assert said == "Refunds an order (a: 1; b: two; c: [3]; and 1 more)"
    assert fallback_summary("", {}) == "Calls a tool"


def test_control_and_format_characters_cannot_rearrange_the_sentence():
    said = render_summary('Post "{message}"', {"message": "ok\u202e\u200b evil\x07 text"})
    assert said == 'Post "ok evil text"'


def test_a_description_from_elsewhere_cannot_drive_a_terminal_or_rearrange_its_sentence():
    """An MCP server writes its tools' descriptions: the summary a reviewer reads, in the CLI's
    hint or a printed mail, carries none of its escapes."""
    said = fallback_summary(
        "Reads\x1b[2J\x1b]0;pwned\x07 a\u202e file\r\nquietly. More.", {"path": "/etc\x1b[31m"}
    )
    assert said == "Reads[2J]0;pwned a file quietly (path: /etc[31m)"
    assert not any(ord(char) < 32 or char == "\u202e" for char in said)
