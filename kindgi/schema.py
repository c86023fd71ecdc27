"""A pydantic base class whose fields appear in camelCase on the wire."""

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


def _title_from_name(name: str, info: object) -> str:
    """``total_cents`` → ``Total cents`` (pydantic would title the alias: ``Totalcents``)."""
    return name.replace("_", " ").strip().capitalize()


class CamelModel(BaseModel):
    """Fields in snake_case in Python; schemas and JSON use camelCase (``order_id`` → ``orderId``)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        field_title_generator=_title_from_name,
    )
