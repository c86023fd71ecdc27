"""Tools: typed functions that declare what they change."""

import inspect
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any, ClassVar

from pydantic import BaseModel

from kindgi.effects import Effect
from kindgi.errors import DefinitionError
from kindgi.naming import check_definition_id, check_name, check_semver
from kindgi.summaries import check_summary, fallback_summary, render_summary


class Execution(StrEnum):
    PARALLEL = "parallel"
    SEQUENTIAL = "sequential"


class ToolOrigin(StrEnum):
    CODE = "code"
    MCP = "mcp"


@dataclass(frozen=True, kw_only=True)
class ToolConnection:
    """The connection a call uses: whose it is, to which app, and an authorised HTTP client for
    the app's API (``with ctx.connection.client() as http: http.get("/me")``)."""

    app: str
    owner: str
    open_client: Callable[[], Any] = field(repr=False, compare=False)
    # The connection's id, for the record of which runs used it.
    connection_id: str = ""

    def client(self) -> Any:
        """An ``httpx.Client`` whose requests are relative to the app's API and carry the
        connection's token (refreshed first if it had expired)."""
        return self.open_client()


@dataclass(frozen=True, kw_only=True)
class ToolContext:
    """What a tool knows about the call it serves. Empty outside a run (e.g. in a unit test)."""

    run_id: str | None = None
    call_id: str | None = None
    # The tenant whose run this is: its id, and its slug (e.g. "acme").
    tenant_id: str | None = None
    tenant_slug: str | None = None
    idempotency_key: str | None = None
    dry_run: bool = False
    read_only: bool = False
    # For a tool that declares connection=: the connection this call uses.
    connection: ToolConnection | None = None


@dataclass(frozen=True, kw_only=True)
class ToolDefinition:
    """A tool as its pack declares it. Make one with the ``@tool`` decorator."""

    # Calling a tool runs it: a template that shows one must never call it.
    do_not_call_in_templates: ClassVar[bool] = True

    id: str
    version: str
    description: str
    func: Callable[..., Any] = field(repr=False, compare=False)
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    takes_context: bool
    mutating: bool = True
    effects: tuple[Effect, ...] = ()
    result_is_outside_data: bool = False
    idempotent: bool = False
    may_wait: bool = False
    execution: Execution = Execution.PARALLEL
    origin: ToolOrigin = ToolOrigin.CODE
    # The app (by name) whose connection the tool acts through, if any.
    connection: str | None = None
    # One sentence over the call's arguments that reviewers read first (``kindgi.summaries``).
    summary: str = ""

    def summarize(self, arguments: Any) -> str:
        """The call with ``arguments`` in a sentence: the tool's summary, or its description and
        arguments where it has none."""
        if self.summary:
            return render_summary(self.summary, arguments)
        return fallback_summary(self.description, arguments)

    @property
    def is_safe_to_repeat(self) -> bool:
        """Whether calling it twice does no more than calling it once: a read-only tool that says
        it is ``idempotent``. Only such a call may run before its intent is durable (a crash in
        between repeats it); any other's intent is written first, so that a crash in between
        asks a person rather than calling it again."""
        return self.idempotent and self.is_read_only

    @property
    def is_read_only(self) -> bool:
        """The one answer to "does this tool change nothing?" that dry runs, gates and scheduling use.

        Read-only means the tool says ``mutating=False`` and declares no effect that changes
        something; a tool from an MCP server never is, whatever it declares.
        """
        return (
            self.origin == ToolOrigin.CODE
            and not self.mutating
            and not any(effect.is_mutating for effect in self.effects)
        )

    @property
    def contradicting_effects(self) -> tuple[Effect, ...]:
        """Effects that contradict ``mutating=False`` (the ``kindgi.W001`` check reports them)."""
        if self.mutating:
            return ()
        return tuple(effect for effect in self.effects if effect.is_mutating)

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        # Built once: the model sees it at every step. Treat it as read-only.
        return self.input_model.model_json_schema()

    @property
    def output_schema(self) -> dict[str, Any]:
        return self.output_model.model_json_schema()

    @property
    def label(self) -> str:
        return f"tool {self.id}@{self.version}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)


def tool(
    *,
    id: str,
    version: str = "0.1.0",
    description: str | None = None,
    summary: str | None = None,
    mutating: bool = True,
    effects: Iterable[Effect | dict] = (),
    result_is_outside_data: bool = False,
    idempotent: bool = False,
    may_wait: bool = False,
    execution: str = Execution.PARALLEL,
    connection: str | None = None,
) -> Callable[[Callable[..., Any]], ToolDefinition]:
    """Declare a tool.

    The function takes one pydantic model (the tool's input) and, optionally, a
    ``ToolContext``; it returns a pydantic model (the tool's output). Leaving
    ``mutating`` out means the tool changes things: that is the safe default.
    ``summary`` says a call in a sentence for its reviewer, naming arguments in braces:
    ``'Refund {amountCents} cents on order {orderRef}'``.

        @tool(id="my-pack.lookup-order", version="0.1.0", mutating=False,
              effects=[Effect.reads("external:orders")])
        def lookup_order(ref: OrderRef, ctx: ToolContext) -> Order: ...
    """

    def decorate(func: Callable[..., Any]) -> ToolDefinition:
        what = f"tool {id!r}"
        check_definition_id(id, what=what)
        check_semver(version, what=what)
        for flag_name, flag in (
            ("mutating", mutating),
            ("result_is_outside_data", result_is_outside_data),
            ("idempotent", idempotent),
            ("may_wait", may_wait),
        ):
            if not isinstance(flag, bool):
                raise DefinitionError(f"{what}: {flag_name} must be True or False, not {flag!r}")
        try:
            execution_mode = Execution(execution)
        except ValueError:
            raise DefinitionError(
                f"{what}: execution {execution!r} must be 'parallel' or 'sequential'"
            ) from None
        if connection is not None:
            check_name(connection, what=f"{what}: connection")
        declared_effects = []
        for index, value in enumerate(effects):
            try:
                declared_effects.append(Effect.from_value(value))
            except DefinitionError as error:
                raise DefinitionError(f"{what}: effects[{index}]: {error}") from None
        input_model, output_model, takes_context = _signature_of(func, what=what)
        text = description if description is not None else inspect.getdoc(func)
        if not text or not text.strip():
            raise DefinitionError(f"{what}: description is missing (pass description= or write a docstring)")
        if summary is not None:
            fields = input_model.model_json_schema().get("properties", {})
            checked_summary = check_summary(summary, fields=fields, what=what)
        else:
            checked_summary = ""
        return ToolDefinition(
            id=id,
            version=version,
            description=text.strip(),
            summary=checked_summary,
            func=func,
            input_model=input_model,
            output_model=output_model,
            takes_context=takes_context,
            mutating=mutating,
            effects=tuple(declared_effects),
            result_is_outside_data=result_is_outside_data,
            idempotent=idempotent,
            may_wait=may_wait,
            execution=execution_mode,
            connection=connection,
        )

    return decorate


def _signature_of(func: Callable[..., Any], *, what: str) -> tuple[type[BaseModel], type[BaseModel], bool]:
    if not callable(func):
        raise DefinitionError(f"{what}: @tool must decorate a function, not {func!r}")
    try:
        hints = typing.get_type_hints(func)
    except Exception as error:  # an annotation that cannot be resolved
        raise DefinitionError(f"{what}: cannot read the function's type annotations: {error}") from None
    input_models: list[type[BaseModel]] = []
    takes_context = False
    for name in inspect.signature(func).parameters:
        annotation = hints.get(name)
        if annotation is ToolContext:
            takes_context = True
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
            input_models.append(annotation)
        else:
            raise DefinitionError(
                f"{what}: parameter {name!r} must be annotated with a pydantic model (the input) "
                "or ToolContext"
            )
    if len(input_models) != 1:
        raise DefinitionError(
            f"{what}: input: the function must take exactly one pydantic model parameter, "
            f"found {len(input_models)}"
        )
    output = hints.get("return")
    if not (isinstance(output, type) and issubclass(output, BaseModel)):
        raise DefinitionError(f"{what}: output: the return annotation must be a pydantic model")
    return input_models[0], output, takes_context
