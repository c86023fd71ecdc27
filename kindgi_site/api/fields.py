"""Request fields stricter than DRF's defaults, so that what the schema says is what is accepted."""

from collections.abc import Mapping

from rest_framework import serializers
from rest_framework.exceptions import ValidationError


class StrictBooleanField(serializers.BooleanField):
    """true or false, nothing else: DRF's own also takes 1, "yes", "on" and the like."""

    default_error_messages = {"invalid": "must be true or false"}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class StrictCharField(serializers.CharField):
    """Text, and only text: DRF's own also turns numbers into strings."""

    default_error_messages = {"invalid": "must be text"}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictManyRelatedField(serializers.ManyRelatedField):
    """A list of related objects, strictly: DRF's own also takes an object, and reads its keys."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            self.fail("not_a_list", input_type=type(data).__name__)
        return super().to_internal_value(data)


def choice_param(request, name: str, choices) -> str | None:
    """A query parameter that must be one of ``choices`` when given."""
    value = request.query_params.get(name)
    if value is None:
        return None
    if value not in choices:
        raise ValidationError({name: f"{value!r} is not one of: {', '.join(choices)}"})
    return value
