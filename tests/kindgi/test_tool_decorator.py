import pytest
from pydantic import BaseModel

from kindgi import DefinitionError, Effect, Execution, ToolContext, ToolDefinition, tool


class OrderRef(BaseModel):
    order_id: str


class Order(BaseModel):
    order_id: str
    status: str


def test_the_seed_example_declares_a_read_only_tool():
    @tool(
        id="my-pack.lookup-order",
        version="0.1.0",
        mutating=False,
        effects=[Effect.reads("external:orders")],
    )
    def lookup_order(ref: OrderRef, ctx: ToolContext) -> Order:
        """Looks up an order.

        More words that stay in the description.
        """
        return Order(order_id=ref.order_id, status=f"seen by {ctx.run_id}")

    assert isinstance(lookup_order, ToolDefinition)
    assert lookup_order.id == "my-pack.lookup-order"
    assert lookup_order.version == "0.1.0"
    assert lookup_order.description == "Looks up an order.\n\nMore words that stay in the description."
    assert lookup_order.input_model is OrderRef
    assert lookup_order.output_model is Order
    assert lookup_order.takes_context is True
    assert lookup_order.effects == (Effect.reads("external:orders"),)
    assert lookup_order.is_read_only
    assert lookup_order.input_schema["required"] == ["order_id"]
    assert lookup_order(OrderRef(order_id="o1"), ToolContext(run_id="r1")) == Order(
        order_id="o1", status="seen by r1"
    )


def test_defaults():
    @tool(id="my-pack.touch")
    def touch(ref: OrderRef) -> Order:
        """Touches an order."""
        return Order(order_id=ref.order_id, status="touched")

    assert touch.version == "0.1.0"
    assert touch.mutating is True
    assert touch.effects == ()
    assert touch.result_is_outside_data is False
    assert touch.idempotent is False
    assert touch.may_wait is False
    assert touch.execution is Execution.PARALLEL
    assert touch.takes_context is False


def test_every_option_is_kept():
    @tool(
        id="my-pack.fetch-mail",
        version="2.3.4-beta.1",
        description="Fetches mail.",
        mutating=False,
        effects=[{"kind": "network", "resource": "imap:inbox"}],
        result_is_outside_data=True,
        idempotent=True,
        may_wait=True,
        execution="sequential",
    )
    def fetch_mail(ref: OrderRef) -> Order:
        """Ignored, because description= is given."""
        return Order(order_id=ref.order_id, status="fetched")

    assert fetch_mail.description == "Fetches mail."
    assert fetch_mail.effects == (Effect.network("imap:inbox"),)
    assert fetch_mail.result_is_outside_data
    assert fetch_mail.idempotent
    assert fetch_mail.may_wait
    assert fetch_mail.execution is Execution.SEQUENTIAL


@pytest.mark.parametrize(
    "bad_id",
    [
        "lookup-order",
        "My-Pack.lookup",
        "my_pack.lookup",
        "my-pack.",
        ".lookup",
        "a.b.c",
        "my-pack.-x",
        "",
    ],
)
def test_a_bad_id_is_refused_naming_the_rule(bad_id):
    with pytest.raises(DefinitionError, match=r"must be '<pack>\.<name>'"):

        @tool(id=bad_id)
        def anything(ref: OrderRef) -> Order:
            """Doc."""


@pytest.mark.parametrize("bad_version", ["1", "1.0", "v1.0.0", "01.0.0", "1.0.0.0", "latest"])
def test_a_bad_semver_is_refused(bad_version):
    with pytest.raises(DefinitionError) as error:

        @tool(id="my-pack.x", version=bad_version)
        def anything(ref: OrderRef) -> Order:
            """Doc."""

    assert "tool 'my-pack.x'" in str(error.value)
    assert f"version {bad_version!r} is not a semantic version" in str(error.value)


def test_an_unknown_effect_kind_names_the_tool_the_field_and_the_valid_kinds():
    with pytest.raises(DefinitionError) as error:

        @tool(id="my-pack.x", effects=[Effect.reads("a:b"), {"kind": "mutates", "resource": "a:b"}])
        def anything(ref: OrderRef) -> Order:
            """Doc."""

    message = str(error.value)
    assert message.startswith("tool 'my-pack.x': effects[1]: effect kind 'mutates' is not one of:")
    assert "external-side-effect" in message


@pytest.mark.parametrize("flag", ["mutating", "result_is_outside_data", "idempotent", "may_wait"])
def test_flags_must_be_booleans(flag):
    with pytest.raises(DefinitionError, match=f"{flag} must be True or False"):

        @tool(id="my-pack.x", **{flag: "false"})
        def anything(ref: OrderRef) -> Order:
            """Doc."""


def test_execution_must_be_parallel_or_sequential():
    with pytest.raises(DefinitionError, match="execution 'serial' must be 'parallel' or 'sequential'"):

        @tool(id="my-pack.x", execution="serial")
        def anything(ref: OrderRef) -> Order:
            """Doc."""


def test_a_description_is_required():
    with pytest.raises(DefinitionError, match="description is missing"):

        @tool(id="my-pack.x")
        def anything(ref: OrderRef) -> Order:
            pass


def test_the_input_must_be_one_pydantic_model():
    with pytest.raises(DefinitionError, match="parameter 'ref' must be annotated with a pydantic"):

        @tool(id="my-pack.x")
        def untyped(ref: dict) -> Order:
            """Doc."""

    with pytest.raises(DefinitionError, match="exactly one pydantic model parameter, found 2"):

        @tool(id="my-pack.x")
        def two(a: OrderRef, b: Order) -> Order:
            """Doc."""

    with pytest.raises(DefinitionError, match="exactly one pydantic model parameter, found 0"):

        @tool(id="my-pack.x")
        def none(ctx: ToolContext) -> Order:
            """Doc."""


def test_the_output_must_be_a_pydantic_model():
    with pytest.raises(DefinitionError, match="output: the return annotation must be a pydantic"):

        @tool(id="my-pack.x")
        def returns_dict(ref: OrderRef) -> dict:
            """Doc."""
