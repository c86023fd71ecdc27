"""The decision form, and the edited-arguments fields built from the tool's input schema."""

import json
from typing import Any

from django import forms

from core.conf import setting

FIELD_PREFIX = "arg-"
# How long an approval's grant may last, as the page offers it (within KINDGI_GRANT_MAX_SECONDS).
ALLOW_HOURS = (1, 2, 8, 24)
# Sent with the argument fields: then they say what runs (an unticked box, an emptied field).
# A post without them (a script, a form without the fields) edits nothing.
FIELDS_SHOWN = "arguments-shown"


class DecisionForm(forms.Form):
    """Approve, reject or request changes; the arguments' fields start as the model's, and
    changing any of them is an edit (there is nothing else to tick): the approval then runs what
    the fields say."""

    decision = forms.ChoiceField(
        choices=[("approve", "Approve"), ("reject", "Reject"), ("request_changes", "Request changes")]
    )
    rationale = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(
        self,
        *args,
        schema: dict[str, Any] | None = None,
        arguments: dict[str, Any] | None = None,
        may_allow: bool = False,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.original = dict(arguments or {})
        if may_allow:
            longest = setting("KINDGI_GRANT_MAX_SECONDS")
            hours = [h for h in ALLOW_HOURS if h * 3600 <= longest]
            self.fields["allow_hours"] = forms.TypedChoiceField(
                required=False,
                coerce=int,
                empty_value=None,
                label="And allow calls like this for",
                choices=[("", "no: ask again next time")]
                + [(h, f"{h} hour{'s' if h > 1 else ''}") for h in hours],
            )
            self.fields["allow_calls"] = forms.IntegerField(
                required=False, min_value=1, max_value=1000, initial=3, label="up to (calls)"
            )
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
            # What the field held at first, for the page's live diff of the edit.
            self.fields[FIELD_PREFIX + name].widget.attrs["data-original"] = json.dumps(
                (arguments or {}).get(name)
            )

    def allow(self) -> dict[str, int] | None:
        """The standing grant the decider gives with their approval, if any."""
        hours = self.cleaned_data.get("allow_hours")
        if not hours or self.cleaned_data.get("decision") != "approve":
            return None
        return {"forSeconds": hours * 3600, "maxCalls": self.cleaned_data.get("allow_calls") or 1}

    def edit_open(self) -> bool:
        """Whether the page shows the argument fields open: only when the decider changed one, or
        one is wrong (a rejection without a rationale has nothing to do with them)."""
        if not self.is_bound:
            return False
        fields = [name for name in self.fields if name.startswith(FIELD_PREFIX)]
        if any(name in self.errors for name in fields):
            return True
        if not self.data.get(FIELDS_SHOWN) or not hasattr(self, "cleaned_data"):
            return False
        return any(
            self.cleaned_data.get(name) not in (None, "", False)
            and self.cleaned_data.get(name) != self.original.get(name.removeprefix(FIELD_PREFIX))
            for name in fields
        )

    def argument_fields(self):
        return [self[name] for name in self.fields if name.startswith(FIELD_PREFIX)]

    def edited_arguments(self) -> dict[str, Any] | None:
        """The arguments the fields now say, if they say anything other than the model's; None
        when nothing was changed (then the model's own arguments run, as they were)."""
        if self.cleaned_data.get("decision") != "approve" or not self.data.get(FIELDS_SHOWN):
            return None
        changed, result = False, dict(self.original)
        for name, value in self.cleaned_data.items():
            if not name.startswith(FIELD_PREFIX):
                continue
            key = name.removeprefix(FIELD_PREFIX)
            if isinstance(value, str):
                value = value.replace("\r\n", "\n")  # what browsers send for a textarea's lines
            if (
                isinstance(self.fields[name], forms.BooleanField)
                and value is False
                and key not in self.original
            ):
                continue  # an unticked box where the model gave nothing: no change
            if value in (None, ""):
                changed = changed or self.original.get(key) not in (None, "")
                result.pop(key, None)
            else:
                changed = changed or value != self.original.get(key)
                result[key] = value
        return result if changed else None

    def add_argument_errors(self, errors: list[str]) -> list[str]:
        """Put ``/arguments/<field>: message`` and ``/rationale: message`` errors next to their
        fields; return the others."""
        others = []
        for line in errors:
            pointer, _, message = line.partition(": ")
            parts = pointer.split("/")
            field = FIELD_PREFIX + parts[2] if len(parts) > 2 and parts[1] == "arguments" else None
            if pointer == "/rationale":
                field = "rationale"
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
