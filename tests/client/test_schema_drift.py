"""The client's models and operations against the schema the server serves at /api/schema/:
each model's fields (wire names, whether always sent, whether null, their types, enums' values)
are its component's, and each operation's keywords are its request body's fields."""

import inspect
import types
from datetime import datetime
from typing import Any, Literal, Union, get_args, get_origin

import httpx
from pydantic.alias_generators import to_camel

from kindgi.client import models, operations

# The body each operation sends, and the keywords that are not the body's (paths, headers).
REQUESTS = {
    operations.start_run: ("StartRunRequest", {"idempotency_key"}),
    operations.complete_approval: ("CompleteApprovalRequest", {"approval_id", "idempotency_key"}),
    operations.complete_approvals: ("DecisionItemRequest", {"approval_ids", "idempotency_key"}),
    operations.register_reviewer: ("RegisterReviewerRequest", {"spec"}),
    operations.update_reviewer_me: ("PatchedNotificationSettingsRequest", set()),
    operations.create_rule: ("ApprovalRuleRequest", {"spec", "idempotency_key"}),
    operations.create_schedule: ("SaveScheduleRequest", {"spec", "idempotency_key"}),
    operations.create_grant: ("CreateGrantRequest", {"spec", "idempotency_key"}),
    operations.connect_app: ("StartConnectionRequest", set()),
}
# Keywords a request's schema has that the operation fills itself.
FILLED = {"DecisionItemRequest": {"approvalId"}}


def response_models() -> dict[str, type[models.ApiModel]]:
    found = {}
    for name in models.__all__:
        model = getattr(models, name)
        if isinstance(model, type) and issubclass(model, models.ApiModel) and model is not models.ApiModel:
            found[name] = model
    del found["Page"], found["JournalEvent"]  # generic; and a WebSocket's, not in the schema
    found["AllowRequest"] = found.pop("Allow")
    for item in ("Run", "Approval", "ApprovalRule", "AuditEntry", "Grant", "Reviewer", "Schedule"):
        found[f"Paginated{item}List"] = models.Page[getattr(models, item)]
    for item in ("Tool", "Agent", "Flow"):
        found[f"Paginated{item}List"] = models.Page[getattr(models, item)]
    return found


def drift(schema: dict) -> list[str]:
    """Each way the models and operations differ from ``schema``; none when they agree."""
    components = schema["components"]["schemas"]
    named = {model: name for name, model in response_models().items()}
    differences = []
    for name, model in response_models().items():
        if name not in components:
            differences.append(f"{name}: no such component in the schema")
            continue
        differences += _model_drift(name, model, components, named)
    for operation, (name, not_body) in REQUESTS.items():
        keywords = {to_camel(k) for k in inspect.signature(operation).parameters if k not in not_body}
        properties = _properties(components[name]) - FILLED.get(name, set())
        for missing in sorted(properties - keywords):
            differences.append(
                f"{operation.__name__}: the schema's {name} has {missing}, the client does not"
            )
        for extra in sorted(keywords - properties):
            differences.append(f"{operation.__name__}: sends {extra}, which {name} does not have")
    return differences


def _properties(component: dict) -> set[str]:
    if "oneOf" in component:
        return set().union(*(set(choice["properties"]) for choice in component["oneOf"]))
    return set(component.get("properties", {}))


def _model_drift(name: str, model, components: dict, named: dict) -> list[str]:
    component = components[name]
    properties, required = component.get("properties", {}), set(component.get("required", []))
    fields = {field.alias or to_camel(key): field for key, field in model.model_fields.items()}
    differences = [
        f"{name}: the schema has {p}, the model does not" for p in sorted(set(properties) - set(fields))
    ]
    differences += [
        f"{name}: the model has {f}, the schema does not" for f in sorted(set(fields) - set(properties))
    ]
    for wire in sorted(set(fields) & set(properties)):
        field, declared = fields[wire], properties[wire]
        always = not name.endswith("Request") and wire in required  # a request's may all be left out
        if field.is_required() != always:
            differences.append(
                f"{name}.{wire}: always sent {always}, the model requires it {field.is_required()}"
            )
        theirs, ours = _schema_kinds(declared, components), _annotation_kinds(field.annotation, named)
        if "any" in ours:
            continue
        if not always and not name.endswith("Request"):
            theirs = theirs | {"null"}  # left out: the model's None
        if name.endswith("Request"):
            ours = ours - {"null"}
        if theirs != ours:
            differences.append(f"{name}.{wire}: the schema says {sorted(theirs)}, the model {sorted(ours)}")
    return differences


def _schema_kinds(declared: dict, components: dict) -> frozenset:
    kinds = set()
    if declared.get("nullable"):
        kinds.add("null")
    if "$ref" in declared:
        target = declared["$ref"].rsplit("/", 1)[-1]
        component = components[target]
        if "enum" in component:
            return frozenset(kinds | {("enum", value) for value in component["enum"]})
        return frozenset(kinds | {target})
    kind = declared.get("type")
    if kind is None:  # a union of choices (oneOf…), or anything
        choices = [choice for key in ("allOf", "oneOf", "anyOf") for choice in declared.get(key, [])]
        if choices:
            return frozenset(kinds.union(*(_schema_kinds(choice, components) for choice in choices)))
        if "enum" in declared:
            return frozenset(kinds | {("enum", value) for value in declared["enum"] if value is not None})
        return frozenset(kinds | {"any"})
    if "enum" in declared:
        return frozenset(kinds | {("enum", value) for value in declared["enum"] if value is not None})
    if kind == "string" and declared.get("format") == "date-time":
        kind = "datetime"
    if kind == "array":
        return frozenset(kinds | {("array", _schema_kinds(declared.get("items", {}), components))})
    return frozenset(kinds | {kind})


SCALARS = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    datetime: "datetime",
    dict: "object",
}


def _annotation_kinds(annotation, named: dict) -> frozenset:
    if annotation is Any:
        return frozenset({"any"})
    if annotation is type(None):
        return frozenset({"null"})
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return frozenset().union(*(_annotation_kinds(choice, named) for choice in get_args(annotation)))
    if origin is Literal:
        return frozenset(("enum", value) for value in get_args(annotation))
    if origin is list:
        (item,) = get_args(annotation)
        return frozenset({("array", _annotation_kinds(item, named))})
    if origin is dict or annotation is dict:
        return frozenset({"object"})
    if annotation in named:
        return frozenset({named[annotation]})
    return frozenset({SCALARS[annotation]})


def test_the_models_and_operations_are_the_live_schemas(dev):
    schema = httpx.get(f"{dev[0]}/api/schema/", params={"format": "json"}, timeout=60).json()
    assert drift(schema) == []


def test_a_field_a_serializer_gains_is_drift(monkeypatch):
    """Served by this code with one field more on runs, the schema is no longer the models'."""
    from drf_spectacular.generators import SchemaGenerator
    from rest_framework import serializers

    from runs.api.serializers import RunSerializer

    def schema() -> dict:
        return SchemaGenerator().get_schema(request=None, public=True)

    assert drift(schema()) == []
    monkeypatch.setitem(RunSerializer._declared_fields, "colour", serializers.CharField(default="blue"))
    monkeypatch.setattr(RunSerializer.Meta, "fields", [*RunSerializer.Meta.fields, "colour"])
    assert drift(schema()) == ["Run: the schema has colour, the model does not"]
