"""Request fields and serializers stricter than DRF's defaults, so that what the schema says is
what is accepted: nothing more (an unknown field is refused, never dropped) and nothing looser."""

import difflib
import math
from collections.abc import Mapping
from datetime import UTC

from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

NOT_AN_OBJECT = {"invalid": "must be a JSON object, not {datatype}"}


class StrictSerializer(serializers.Serializer):
    """Refuses a body that holds a field it does not declare, naming each: a misspelled
    ``dryRun`` must fail loudly, not run for real. (DRF drops unknown fields silently.)"""

    default_error_messages = NOT_AN_OBJECT

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            refuse_unknown_fields(data, self.fields)
        return super().to_internal_value(data)


class StrictModelSerializer(serializers.ModelSerializer):
    default_error_messages = NOT_AN_OBJECT

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            refuse_unknown_fields(data, self.fields)
        return super().to_internal_value(data)


def refuse_unknown_fields(data: Mapping, fields: Mapping[str, serializers.Field]) -> None:
    known = sorted(name for name, field in fields.items() if not field.read_only)
    unknown = [key for key in data if key not in known]
    if unknown:
        raise ValidationError({str(key): unknown_field_message(str(key), known) for key in unknown})


def unknown_field_message(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    return f"unknown field ({hint}the fields are: {', '.join(known)})"


@extend_schema_field({"type": "object", "additionalProperties": True, "description": "Any JSON object."})
class JsonObjectField(serializers.JSONField):
    """A JSON object, as the schema says: DRF's own takes any JSON value."""

    default_error_messages = {"not_an_object": "must be a JSON object"}

    def to_internal_value(self, data):
        if not isinstance(data, Mapping):
            self.fail("not_an_object")
        return super().to_internal_value(data)


# No "type": OpenAPI 3.0 says any JSON value so (a string, a number, a list, an object or null).
@extend_schema_field({"nullable": True, "description": "Any JSON value."})
class JsonValueField(serializers.JSONField):
    pass


class StrictBooleanField(serializers.BooleanField):
    """true or false, nothing else: DRF's own also takes 1, "yes", "on" and the like."""

    default_error_messages = {"invalid": "must be true or false"}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class BoundedIntegerField(serializers.IntegerField):
    """A whole number a person types (seconds, counts, sizes), from ``min_value`` to ``max_value``
    (``core.bounds``): a JSON number, not text and not true or false, and an error that names the
    bounds. The schema says them too."""

    def __init__(self, *, min_value: int, max_value: int, **kwargs):
        message = f"must be a whole number from {min_value} to {max_value}"
        messages = dict.fromkeys(("invalid", "min_value", "max_value", "max_string_length"), message)
        super().__init__(min_value=min_value, max_value=max_value, error_messages=messages, **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class BoundedNumberField(serializers.FloatField):
    """A number a person types (an amount, a most), above ``above`` and at most ``most``: a JSON
    number, whole or not; not text ("12", "1e3"), not true or false, not NaN or infinite."""

    def __init__(self, *, above: float, most: float, **kwargs):
        self.above = above
        self.message = f"must be a number above {above:,} and at most {most:,}"
        messages = dict.fromkeys(("invalid", "max_value", "max_string_length"), self.message)
        super().__init__(max_value=most, error_messages=messages, **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        try:
            finite = math.isfinite(data)
        except OverflowError:  # an integer of hundreds of digits: no float holds it
            finite = False
        if not finite:
            self.fail("invalid")
        if data <= self.above:
            self.fail("invalid")
        return super().to_internal_value(data)


class AwareDateTimeField(serializers.DateTimeField):
    """An ISO 8601 date and time that says its time zone (``2026-12-05T10:00:00Z``), kept in
    UTC. Without a zone, whose ten o'clock it is would be a guess."""

    default_error_messages = {
        "invalid": "must be a date and time in ISO 8601, with its time zone, e.g. 2026-12-05T10:00:00Z",
        "naive": "must say its time zone, e.g. 2026-12-05T10:00:00Z or 2026-12-05T11:00:00+01:00",
    }

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        try:
            moment = parse_datetime(data)
        except ValueError:
            moment = None
        if moment is None:
            self.fail("invalid")
        if moment.tzinfo is None:
            self.fail("naive")
        try:
            return moment.astimezone(UTC)
        except OverflowError:
            self.fail("invalid")


def column_length(model, field: str) -> int:
    """How long a text ``model``'s ``field`` column holds: a serializer refuses longer input as
    input, rather than leaving it to the database (PostgreSQL's error would be a 500)."""
    return model._meta.get_field(field).max_length


class StrictCharField(serializers.CharField):
    """Text, and only text: DRF's own also turns numbers into strings."""

    default_error_messages = {"invalid": "must be text"}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictUUIDField(serializers.UUIDField):
    """A UUID written as text: DRF's own also turns integers (and so true and false) into UUIDs."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid", value=data)
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


def uuid_param(request, name: str):
    """A query parameter that must be a UUID when given."""
    import uuid

    value = request.query_params.get(name)
    if value is None:
        return None
    try:
        return uuid.UUID(value)
    except ValueError:
        raise ValidationError({name: f"{value[:80]!r} is not a UUID"}) from None


def datetime_param(request, name: str):
    """A query parameter that must be an ISO 8601 date and time (or a date) when given, even
    blank; one with no time zone is taken as UTC."""
    from datetime import UTC, datetime, time

    from django.utils.dateparse import parse_date, parse_datetime

    value = request.query_params.get(name)
    if value is None:
        return None
    try:
        moment = parse_datetime(value)
        if moment is None and (day := parse_date(value)) is not None:
            moment = datetime.combine(day, time())
    except ValueError:
        moment = None
    if moment is None:
        raise ValidationError(
            {name: f"{value!r} is not an ISO 8601 date and time, e.g. 2026-12-04T09:00:00Z"}
        )
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        # In UTC: PostgreSQL refuses an offset beyond 15:59, which ISO 8601 allows.
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValidationError({name: f"{value!r} is out of range once in UTC"}) from None


def int_param(request, name: str, *, low: int, high: int, default: int) -> int:
    """A whole-number query parameter from ``low`` to ``high``, ``default`` when not given."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    value = int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= len(str(high)) else None
    if value is None or not low <= value <= high:
        raise ValidationError({name: f"must be a whole number from {low} to {high}"})
    return value
