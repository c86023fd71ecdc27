"""The decision form, and the edited-arguments fields built from the tool's input schema."""

import json
from typing import Any

from django import forms

FIELD_PREFIX = "arg-"


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(choices=[("approve", "Approve"), ("reject", "Reject")])
    rationale = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    edit = forms.BooleanField(required=False, label="Approve with these arguments instead")

    def __init__(
        self, *args, schema: dict[str, Any] | None = None, arguments: dict[str, Any] | None = None, **kwargs
    ):
        super().__init__(*args, **kwargs)
        schema = schema or {}
        required = set(schema.get("required", []))
        for name, spec in schema.get("properties", {}).items():
            self.fields[FIELD_PREFIX + name] = _field_for(
                spec, required=name in required, label=spec.get("title") or name
            )
            if arguments and name in arguments and not self.is_bound:
                value = arguments[name]
                self.initial[FIELD_PREFIX + name] = (
                    value if isinstance(value, str | int | float | bool) else json.dumps(value)
                )

    def argument_fields(self):
        return [self[name] for name in self.fields if name.startswith(FIELD_PREFIX)]

    def edited_arguments(self) -> dict[str, Any] | None:
        if not self.cleaned_data.get("edit"):
            return None
        result = {}
        for name, value in self.cleaned_data.items():
            if name.startswith(FIELD_PREFIX) and value not in (None, ""):
                result[name.removeprefix(FIELD_PREFIX)] = value
        return result

    def add_argument_errors(self, errors: list[str]) -> list[str]:
        """Put ``/arguments/<field>: message`` errors next to their fields; return the others."""
        others = []
        for line in errors:
            pointer, _, message = line.partition(": ")
            parts = pointer.split("/")
            field = FIELD_PREFIX + parts[2] if len(parts) > 2 and parts[1] == "arguments" else None
            if field in self.fields:
                self.add_error(field, message)
            else:
                others.append(line)
        return others


def _field_for(spec: dict[str, Any], *, required: bool, label: str) -> forms.Field:
    kind = spec.get("type")
    common = {"required": False, "label": label, "help_text": spec.get("description", "")}
    # Required-ness is the tool's schema's to judge, on the server, with its own message.
    if kind == "integer":
        return forms.IntegerField(**common)
    if kind == "number":
        return forms.FloatField(**common)
    if kind == "boolean":
        return forms.BooleanField(**common)
    if kind == "string":
        return forms.CharField(
            **common,
            strip=False,
            widget=forms.Textarea(attrs={"rows": 2}) if spec.get("maxLength", 0) > 200 else None,
        )
    return forms.JSONField(**common)
