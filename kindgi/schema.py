"""A pydantic base class whose fields appear in camelCase on the wire."""

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class CamelModel(BaseModel):
    """Write fields in snake_case in Python; schemas and JSON use camelCase (``order_id`` → ``orderId``)."""

    model_config = ConfigDict(alias_generator=to_camel, validate_by_name=True, validate_by_alias=True)
