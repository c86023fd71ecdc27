"""A real OAuth 2 authorization server for Kindgi's tests, on loopback (Starlette under uvicorn).

``python tests/oauth_server.py PORT`` serves:

- ``GET /authorize``: the consent page (Allow / Deny), checking the client, its redirect URI and
  a PKCE S256 challenge; ``POST /authorize`` redirects back with a one-time code or an error;
- ``POST /token``: ``authorization_code`` (the code once, the redirect URI and the PKCE verifier
  checked, the client authenticated with HTTP Basic) and ``refresh_token`` (rotating it);
- ``GET /api/me``: a protected resource, for a valid, unexpired bearer token;
- ``POST /control``: the test's levers (``{"accessTokenSeconds": n}``, ``{"revokeAll": true}``),
  and ``GET /control``: what happened (codes issued, tokens refreshed, API calls).
"""

import base64
import hashlib
import html
import secrets
import sys
import time
from urllib.parse import urlencode

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse
from starlette.routing import Route

# Kindgi on loopback, or Django's test client (which calls itself testserver).
CLIENTS = {
    "kindgi-test": {
        "secret": "test-client-secret",
        "redirect_prefixes": ("http://127.0.0.1:", "http://testserver/"),
    }
}
STATE = {
    "access_seconds": 3600,
    "codes": {},
    "access": {},
    "refresh": {},
    "stats": {"refreshed": 0, "api": 0},
}


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def _bad(error: str, description: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": error, "error_description": description}, status_code=status)


async def authorize(request: Request):
    params = dict(request.query_params) if request.method == "GET" else dict(await request.form())
    client = CLIENTS.get(params.get("client_id", ""))
    redirect_uri = params.get("redirect_uri", "")
    if client is None or not redirect_uri.startswith(client["redirect_prefixes"]):
        return HTMLResponse("unknown client or redirect URI", status_code=400)
    if params.get("code_challenge_method") != "S256" or not params.get("code_challenge"):
        return HTMLResponse("PKCE with S256 is required", status_code=400)
    if request.method == "GET":
        hidden = "".join(
            f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
            for k, v in params.items()
        )
        page = (
            "<!doctype html><title>Test app: allow access?</title><h1>Allow Kindgi to use your test app?</h1>"
            f"<p>Scopes: {html.escape(params.get('scope', ''))}</p>"
            f'<form method="post">{hidden}<button name="answer" value="allow">Allow</button>'
            '<button name="answer" value="deny">Deny</button></form>'
        )
        return HTMLResponse(page)
    back = {"state": params.get("state", "")}
    if params.get("answer") != "allow":
        back["error"] = "access_denied"
    else:
        code = secrets.token_urlsafe(16)
        STATE["codes"][code] = {
            "client_id": params["client_id"],
            "redirect_uri": redirect_uri,
            "challenge": params["code_challenge"],
            "scope": params.get("scope", ""),
        }
        back["code"] = code
    return RedirectResponse(f"{redirect_uri}?{urlencode(back)}", status_code=302)


def _client_of(request: Request, form) -> str | None:
    header = request.headers.get("authorization", "")
    if header.startswith("Basic "):
        client_id, _, secret = base64.b64decode(header[6:]).decode().partition(":")
    else:
        client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
    client = CLIENTS.get(client_id)
    return client_id if client is not None and secrets.compare_digest(client["secret"], secret) else None


def _tokens(scope: str) -> dict:
    access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    STATE["access"][access] = {"expires": time.time() + STATE["access_seconds"], "scope": scope}
    STATE["refresh"][refresh] = {"scope": scope}
    return {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": STATE["access_seconds"],
        "refresh_token": refresh,
        "scope": scope,
    }


async def token(request: Request):
    form = dict(await request.form())
    if _client_of(request, form) is None:
        return _bad("invalid_client", "the client did not authenticate", 401)
    if form.get("grant_type") == "authorization_code":
        grant = STATE["codes"].pop(form.get("code", ""), None)
        if grant is None:
            return _bad("invalid_grant", "unknown or used code")
        if grant["redirect_uri"] != form.get("redirect_uri"):
            return _bad("invalid_grant", "the redirect URI does not match")
        if _s256(form.get("code_verifier", "")) != grant["challenge"]:
            return _bad("invalid_grant", "the PKCE verifier does not match the challenge")
        return JSONResponse(_tokens(grant["scope"]))
    if form.get("grant_type") == "refresh_token":
        held = STATE["refresh"].pop(form.get("refresh_token", ""), None)
        if held is None:
            return _bad("invalid_grant", "the refresh token was revoked")
        STATE["stats"]["refreshed"] += 1
        return JSONResponse(_tokens(held["scope"]))
    return _bad("unsupported_grant_type", "only authorization_code and refresh_token")


async def me(request: Request):
    access = request.headers.get("authorization", "").removeprefix("Bearer ")
    held = STATE["access"].get(access)
    if held is None or held["expires"] < time.time():
        return JSONResponse({"error": "invalid_token"}, status_code=401)
    STATE["stats"]["api"] += 1
    return JSONResponse({"user": "ada@test-app", "scope": held["scope"]})


async def control(request: Request):
    if request.method == "POST":
        lever = await request.json()
        if "accessTokenSeconds" in lever:
            STATE["access_seconds"] = lever["accessTokenSeconds"]
        if lever.get("revokeAll"):
            STATE["access"].clear()
            STATE["refresh"].clear()
    return JSONResponse({"stats": STATE["stats"], "accessTokens": len(STATE["access"])})


app = Starlette(
    routes=[
        Route("/authorize", authorize, methods=["GET", "POST"]),
        Route("/token", token, methods=["POST"]),
        Route("/api/me", me),
        Route("/control", control, methods=["GET", "POST"]),
    ]
)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
