"""Sending an operation over HTTP (httpx), blocking or awaited, and what to do with the answer.

Retries: a request that met a connection error, or a gateway's 502, 503 or 504, is sent again
after a pause that doubles each time (with jitter), at most ``RetryPolicy.retries`` times, when
sending it again cannot do anything twice: nothing reached the server (the connection was never
made), or it is a read, or the endpoint honours ``Idempotency-Key`` and the retry carries the
same key as the first attempt. A 409 that says the first attempt with the key is still being
answered (``idempotency_key_in_use``) is asked again the same way, for that attempt's answer.
Any other answer, error or not, is the answer.
"""

import asyncio
import dataclasses
import functools
import inspect
import random
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from itertools import count
from typing import Any, Concatenate, get_args, get_origin

import httpx
from pydantic import ValidationError

from kindgi.client.config import Settings
from kindgi.client.errors import ClientError, ServerUnreachableError, api_error
from kindgi.client.operations import Operation

IDEMPOTENCY_HEADER = "Idempotency-Key"
GATEWAY_STATUSES = frozenset({502, 503, 504})
# The server's 409 for a key whose first request has not answered yet (tenants.idempotency).
KEY_IN_USE = "idempotency_key_in_use"
WITH_BODY = frozenset({"POST", "PUT", "PATCH"})


def package_version() -> str:
    try:
        return version("kindgi")
    except PackageNotFoundError:
        return "0"


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """``retries`` more attempts at most; the n-th waits about ``backoff * 2**n`` seconds (never
    more than ``most``)."""

    retries: int = 3
    backoff: float = 0.5
    most: float = 8.0

    def pause(self, attempt: int) -> float:
        return min(self.most, self.backoff * 2**attempt) * random.uniform(0.5, 1.0)

    def pause_before_retry(self, operation: Operation, attempt: int, outcome: Any) -> float | None:
        """Seconds to wait before sending ``operation`` again after ``outcome`` (an httpx
        response or exception), or None: ``outcome`` is the answer."""
        if attempt >= self.retries:
            return None
        if isinstance(outcome, httpx.TransportError):
            reached = not isinstance(outcome, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout))
        elif outcome.status_code in GATEWAY_STATUSES:
            reached = True  # a gateway answered: the server behind it may have done the work
        elif _still_being_answered(outcome):
            reached = True  # an earlier attempt with this key is still at work: ask for its answer
        else:
            return None
        if reached and not (operation.method == "GET" or operation.keyed):
            return None
        return self.pause(attempt)


def _still_being_answered(response: httpx.Response) -> bool:
    if response.status_code != 409:
        return False
    try:
        return response.json()["error"]["code"] == KEY_IN_USE
    except (ValueError, KeyError, TypeError):
        return False


def with_key[T](operation: Operation[T]) -> Operation[T]:
    """A POST with its ``Idempotency-Key`` fixed, so that every attempt sends the same one."""
    if operation.method != "POST" or operation.key:
        return operation
    return dataclasses.replace(operation, key=str(uuid.uuid4()))


def request_options(operation: Operation) -> dict[str, Any]:
    options: dict[str, Any] = {
        "params": {name: value for name, value in operation.params.items() if value is not None}
    }
    if operation.key:
        options["headers"] = {IDEMPOTENCY_HEADER: operation.key}
    if operation.method in WITH_BODY:
        options["json"] = operation.body if operation.body is not None else {}
    return options


def answer[T](operation: Operation[T], outcome: Any, url: str) -> T:
    """What ``outcome`` (the last attempt's) gives: the answer read, or the error raised."""
    if isinstance(outcome, httpx.TransportError):
        raise ServerUnreachableError(url, outcome) from outcome
    response: httpx.Response = outcome
    try:
        body = response.json() if response.content else None
    except ValueError:
        body = None
        if response.is_success:
            raise ClientError(
                f"the answer to {operation.method} {operation.path} is not JSON ({response.status_code})"
            ) from None
    if not response.is_success:
        raise api_error(
            response.status_code,
            body,
            response.text,
            response.reason_phrase,
            retry_after=response.headers.get("Retry-After"),
        )
    try:
        return operation.read(body)
    except ValidationError as error:
        first = error.errors()[0]
        where = "/".join(str(part) for part in first["loc"])
        raise ClientError(
            f"the answer to {operation.method} {operation.path} is not of the shape this client knows "
            f"(is the server another version?): {where}: {first['msg']}"
        ) from None


class _Headers:
    """What every request says of itself: who sends it (the server records a command line's
    changes as the CLI's) and with which token."""

    def __init__(self, settings: Settings, user_agent: str | None):
        self.socket_headers = {"User-Agent": user_agent or f"kindgi-python/{package_version()}"}
        if settings.token:
            self.socket_headers["Authorization"] = f"Bearer {settings.token}"
        self.headers = {"Accept": "application/json", **self.socket_headers}


class Transport(_Headers):
    """Sends operations and waits for their answers."""

    def __init__(self, settings: Settings, *, timeout: float, retry: RetryPolicy, user_agent: str | None):
        super().__init__(settings, user_agent)
        self.settings, self.retry = settings, retry
        self.http = httpx.Client(base_url=f"{settings.url}/api/v1", headers=self.headers, timeout=timeout)

    def send[T](self, operation: Operation[T]) -> T:
        operation = with_key(operation)
        for attempt in count():
            try:
                outcome: Any = self.http.request(
                    operation.method, operation.path, **request_options(operation)
                )
            except httpx.TransportError as error:
                outcome = error
            pause = self.retry.pause_before_retry(operation, attempt, outcome)
            if pause is None:
                return answer(operation, outcome, self.settings.url)
            time.sleep(pause)
        raise AssertionError("not reached")

    def close(self) -> None:
        self.http.close()


class AsyncTransport(_Headers):
    """Sends operations, and awaits their answers."""

    def __init__(self, settings: Settings, *, timeout: float, retry: RetryPolicy, user_agent: str | None):
        super().__init__(settings, user_agent)
        self.settings, self.retry = settings, retry
        self.http = httpx.AsyncClient(
            base_url=f"{settings.url}/api/v1", headers=self.headers, timeout=timeout
        )

    async def send[T](self, operation: Operation[T]) -> T:
        operation = with_key(operation)
        for attempt in count():
            try:
                outcome: Any = await self.http.request(
                    operation.method, operation.path, **request_options(operation)
                )
            except httpx.TransportError as error:
                outcome = error
            pause = self.retry.pause_before_retry(operation, attempt, outcome)
            if pause is None:
                return answer(operation, outcome, self.settings.url)
            await asyncio.sleep(pause)
        raise AssertionError("not reached")

    async def close(self) -> None:
        await self.http.aclose()


def _as_method(operation: Callable, method: Callable) -> Callable:
    """``method`` named, documented and signed as ``operation`` is, with ``self`` before its
    parameters and the answer's type as its return (what help() and editors show)."""
    functools.update_wrapper(method, operation)
    signature = inspect.signature(operation)
    returns = signature.return_annotation
    if get_origin(returns) is Operation:
        (returns,) = get_args(returns)
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[
            inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY),
            *signature.parameters.values(),
        ],
        return_annotation=returns,
    )
    return method


def blocking[**P, T](operation: Callable[P, Operation[T]]) -> Callable[Concatenate[Any, P], T]:
    """A resource's method that sends ``operation`` and returns its answer."""

    def method(self, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._transport.send(operation(*args, **kwargs))

    return _as_method(operation, method)


def awaitable[**P, T](operation: Callable[P, Operation[T]]) -> Callable[Concatenate[Any, P], Awaitable[T]]:
    """A resource's coroutine method that sends ``operation`` and returns its answer."""

    async def method(self, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._transport.send(operation(*args, **kwargs))

    return _as_method(operation, method)
