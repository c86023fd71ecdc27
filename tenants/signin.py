"""Signing in to the console and the admin, with failed attempts limited.

After ``KINDGI_SIGNIN_ATTEMPTS`` failures for one username, or ten times as many from one
address, within ``KINDGI_SIGNIN_WINDOW_SECONDS``, further attempts are refused until the
window ends, whatever the password: guessing is slowed without telling whether the username
exists. Counts live in the cache (Redis where ``REDIS_URL`` is set, so all web processes share them).
The address is the client's as core.addresses tells it: a forwarded one only from a trusted proxy,
so a client cannot start afresh by sending a new X-Forwarded-For.
"""

import hashlib
import math
import time

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from core.addresses import client_address

ADDRESS_FACTOR = 10


def _now() -> float:
    return time.time()


def _keys(request: HttpRequest) -> list[tuple[str, int]]:
    limit = settings.KINDGI_SIGNIN_ATTEMPTS
    # As the sign-in form reads it (Django's NFKC normalization), so that "ｔｉｎａ", which signs
    # in as tina, is counted as tina.
    username = AbstractBaseUser.normalize_username(request.POST.get("username", "")).strip().casefold()
    keys = [(f"signin-failures:address:{client_address(request)}", limit * ADDRESS_FACTOR)]
    if username:
        digest = hashlib.sha256(username.encode()).hexdigest()
        keys.append((f"signin-failures:user:{digest}", limit))
    return keys


def seconds_until_allowed(request: HttpRequest) -> int:
    """0 if this attempt may go ahead; otherwise how long until it may."""
    now = _now()
    waits = [
        math.ceil(record["until"] - now)
        for key, limit in _keys(request)
        if (record := cache.get(key)) and record["failures"] >= limit and record["until"] > now
    ]
    return max(waits, default=0)


def record_failure(request: HttpRequest) -> None:
    window = settings.KINDGI_SIGNIN_WINDOW_SECONDS
    now = _now()
    for key, _limit in _keys(request):
        record = cache.get(key)
        if not record or record["until"] <= now:
            record = {"failures": 0, "until": now + window}
        record["failures"] += 1
        cache.set(key, record, timeout=math.ceil(record["until"] - now))


def forget_failures(request: HttpRequest) -> None:
    cache.delete_many([key for key, _limit in _keys(request)])


def locked_out(request: HttpRequest) -> HttpResponse | None:
    """The one 429 page, for every sign-in form, while this attempt's username or address waits."""
    wait = seconds_until_allowed(request)
    if not wait:
        return None
    minutes = math.ceil(wait / 60)
    message = f"Too many failed sign-ins. Try again in {minutes} minute{'' if minutes == 1 else 's'}."
    return render(request, "signin_locked.html", {"locked_out": message}, status=429)


class SignInView(LoginView):
    """The console's sign-in."""

    template_name = "console/login.html"

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        return locked_out(request) or super().post(request, *args, **kwargs)

    def form_valid(self, form):
        forget_failures(self.request)
        return super().form_valid(form)

    def form_invalid(self, form):
        record_failure(self.request)
        return super().form_invalid(form)


def admin_sign_in(request: HttpRequest) -> HttpResponse:
    """The admin's own sign-in page and form, behind the same limiter as the console's: failures
    on either count together."""
    from django.contrib import admin

    if request.method != "POST":
        return admin.site.login(request)
    if (refusal := locked_out(request)) is not None:
        return refusal
    response = admin.site.login(request)
    signed_in = response.status_code == 302 and request.user.is_authenticated  # the form redirects on success
    if signed_in:
        forget_failures(request)
    else:
        record_failure(request)
    return response
