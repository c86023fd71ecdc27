"""The API over HTTP: every failure becomes a one-line CliError."""

from typing import Any

import httpx

from kindgi.cli.config import Settings
from kindgi.cli.errors import CliError


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kindgi")
    except PackageNotFoundError:
        return "0"


class Api:
    def __init__(self, settings: Settings, *, timeout: float = 120.0):
        self.settings = settings
        # The server records which surface a change came from: the command line says so here.
        headers = {"Accept": "application/json", "User-Agent": f"kindgi-cli/{_version()}"}
        if settings.token:
            headers["Authorization"] = f"Bearer {settings.token}"
        self._http = httpx.Client(base_url=f"{settings.url}/api/v1", headers=headers, timeout=timeout)

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self._request("GET", path, params={k: v for k, v in (params or {}).items() if v is not None})

    def post(self, path: str, body: Any = None) -> Any:
        return self._request("POST", path, json=body if body is not None else {})

    def delete(self, path: str) -> Any:
        return self._request("DELETE", path)

    def _request(self, method: str, path: str, **options) -> Any:
        try:
            response = self._http.request(method, path, **options)
        except httpx.HTTPError as error:
            raise CliError(
                f"cannot reach the Kindgi server at {self.settings.url} ({type(error).__name__}); "
                "is it running? Start one with `kindgi dev`, or pass --url"
            ) from None
        if response.is_success:
            return response.json() if response.content else None
        raise CliError(self._explain(response))

    def _explain(self, response: httpx.Response) -> str:
        try:
            error = response.json()["error"]
            message = error["message"]
        except (ValueError, KeyError, TypeError):
            message = response.text.strip()[:200] or response.reason_phrase
        if response.status_code == 401:
            hint = (
                "no API token: run `kindgi dev`, or pass --token / set KINDGI_TOKEN"
                if not self.settings.token
                else message
            )
            return f"the server refused the request (401): {hint}"
        return f"{message} ({response.status_code})"
