"""OAuth 2 with each app, through Authlib's client: the authorization-code flow with PKCE (S256),
and refreshing an expired access token (the refreshed one is sealed and written back).

Nothing here writes the database: ``connections.actions`` does, with what this returns.
"""

import os
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.utils import timezone

from connections.models import App

TIMEOUT_SECONDS = 15


class OAuthFailure(Exception):
    """The app refused, or could not be reached: the message says how, without any secret."""


@dataclass(frozen=True, kw_only=True)
class Grant:
    """What the app granted: tokens (plain, for the caller to seal), when the access token expires,
    and the scopes."""

    access_token: str
    refresh_token: str
    expires_at: datetime | None
    scopes: list[str]


def client_secret(app: App) -> str | None:
    if not app.client_secret_env:
        return None
    secret = os.environ.get(app.client_secret_env)
    if not secret:
        raise OAuthFailure(
            f"the app {app.name}'s client secret is read from {app.client_secret_env}, which is not set"
        )
    return secret


def client_for(app: App, *, redirect_uri: str | None = None, token: dict | None = None, **more):
    from authlib.integrations.httpx_client import OAuth2Client  # imported when first used, not with Django

    return OAuth2Client(
        client_id=app.client_id,
        client_secret=client_secret(app),
        scope=" ".join(app.scopes) or None,
        redirect_uri=redirect_uri,
        code_challenge_method="S256",
        token=token,
        token_endpoint=app.token_url,
        timeout=TIMEOUT_SECONDS,
        **more,
    )


def authorization_url(app: App, *, redirect_uri: str) -> tuple[str, str, str]:
    """Where to send the person to grant access: (url, state, code verifier)."""
    verifier = secrets.token_urlsafe(64)
    with client_for(app, redirect_uri=redirect_uri) as client:
        url, state = client.create_authorization_url(app.authorize_url, code_verifier=verifier)
    return url, state, verifier


def exchange_code(app: App, *, code: str, verifier: str, redirect_uri: str) -> Grant:
    try:
        with client_for(app, redirect_uri=redirect_uri) as client:
            token = client.fetch_token(app.token_url, code=code, code_verifier=verifier)
    except (_authlib_error(), OSError, ValueError) as error:
        raise OAuthFailure(_why(error)) from None
    return grant_of(token, app)


def refreshed(app: App, refresh_token: str) -> Grant:
    try:
        with client_for(app) as client:
            token = client.refresh_token(app.token_url, refresh_token=refresh_token)
    except (_authlib_error(), OSError, ValueError) as error:
        raise OAuthFailure(_why(error)) from None
    grant = grant_of(token, app)
    # An app may keep the refresh token it gave: then the old one still holds.
    return grant if grant.refresh_token else Grant(**{**grant.__dict__, "refresh_token": refresh_token})


def grant_of(token: dict, app: App) -> Grant:
    expires_at = None
    if token.get("expires_at"):
        expires_at = datetime.fromtimestamp(int(token["expires_at"]), tz=UTC)
    elif token.get("expires_in"):
        expires_at = timezone.now() + timedelta(seconds=int(token["expires_in"]))
    scope = token.get("scope")
    scopes = scope.split() if isinstance(scope, str) and scope else list(app.scopes)
    return Grant(
        access_token=token["access_token"],
        refresh_token=token.get("refresh_token") or "",
        expires_at=expires_at,
        scopes=scopes,
    )


def _authlib_error() -> type[Exception]:
    from authlib.common.errors import AuthlibBaseError

    return AuthlibBaseError


def _why(error: Exception) -> str:
    """The app's error code and description, never a token."""
    if isinstance(error, _authlib_error()):
        text = error.error or "error"
        if error.description:
            text += f": {error.description}"
        return text
    return f"{type(error).__name__}: the app could not be reached"
