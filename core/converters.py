"""URL converters the apps share. Importing this module registers them.

``<anyuuid:…>``: a UUID in any case (Django's own ``<uuid:…>`` matches only lower case, so an
id a client upper-cased would be "not found"); the view receives a ``uuid.UUID``.
"""

import uuid

from django.urls import register_converter


class AnyCaseUUIDConverter:
    regex = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"

    def to_python(self, value: str) -> uuid.UUID:
        return uuid.UUID(value)

    def to_url(self, value) -> str:
        return str(value)


register_converter(AnyCaseUUIDConverter, "anyuuid")
