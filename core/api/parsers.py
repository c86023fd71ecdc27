"""The API's JSON parser, with limits: a body too large is refused before it is read whole, and
JSON nested too deeply is refused rather than left to exhaust the parser's recursion. What it
gives the views is scrubbed of provider keys (``core.secrets``)."""

import codecs
import json

from django.conf import settings
from rest_framework import exceptions, status
from rest_framework.parsers import JSONParser
from rest_framework.utils.json import strict_constant

from core.jsonlimits import holds_nul, nesting_depth_exceeds
from core.secrets import scrub_secrets


class RequestTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_large"


class LimitedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.KINDGI_MAX_REQUEST_BYTES
        body = stream.read(limit + 1)
        if len(body) > limit:
            raise RequestTooLarge(f"the request body is larger than the limit of {limit} bytes")
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            data = json.loads(codecs.decode(body, encoding), parse_constant=strict_constant)
        except RecursionError:
            raise exceptions.ParseError("the JSON is nested too deeply") from None
        except ValueError as error:
            raise exceptions.ParseError(f"the body is not valid JSON: {error}") from None
        depth = settings.KINDGI_MAX_JSON_DEPTH
        if nesting_depth_exceeds(data, depth):
            raise exceptions.ParseError(f"the JSON is nested more than {depth} levels deep")
        if holds_nul(data):
            raise exceptions.ParseError("the JSON holds a NUL character (\\u0000), which cannot be stored")
        # What is sent is what is stored: a provider key typed anywhere is scrubbed before it is.
        return scrub_secrets(data)
