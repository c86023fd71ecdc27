"""Kindgi's API from Python, without Django: ``kindgi.Client`` (blocking) and
``kindgi.AsyncClient`` (awaited), typed by ``kindgi.client.models``, with the errors of
``kindgi.client.errors``. docs/embedding.md shows them at work."""

from kindgi.client import models
from kindgi.client.async_client import AsyncClient
from kindgi.client.errors import (
    ApiError,
    AuthenticationError,
    ClientError,
    ConflictError,
    InvalidIdError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitedError,
    ServerUnreachableError,
    StreamClosedError,
)
from kindgi.client.models import FINISHED
from kindgi.client.stream import NoNewsError
from kindgi.client.sync import Client

__all__ = [
    "FINISHED",
    "ApiError",
    "AsyncClient",
    "AuthenticationError",
    "Client",
    "ClientError",
    "ConflictError",
    "InvalidIdError",
    "InvalidRequestError",
    "NoNewsError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitedError",
    "ServerUnreachableError",
    "StreamClosedError",
    "models",
]
