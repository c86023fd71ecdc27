"""Signing in to the console, with failed attempts limited.

After ``KINDGI_SIGNIN_ATTEMPTS`` failures for one username, or ten times as many from one
address, within ``KINDGI_SIGNIN_WINDOW_SECONDS``, further attempts are refused until the
window ends, whatever the password: guessing is slowed without telling whether the username
exists. Counts live in the cache (Redis where ``REDIS_URL`` is set, so all web processes share them).
"""

import hashlib
import math
import time

from django.conf import settings
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

ADDRESS_FACTOR = 10


def _now() -> float:
    return time.time()


def _keys(request: HttpRequest) -> list[tuple[str, int]]:
    limit = settings.KINDGI_SIGNIN_ATTEMPTS
    username = request.POST.get("username", "").strip().lower()
    keys = [(f"signin-failures:address:{request.META.get('REMOTE_ADDR', '')}", limit * ADDRESS_FACTOR)]
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


class SignInView(LoginView):
    template_name = "console/login.html"

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        wait = seconds_until_allowed(request)
        if wait:
            minutes = math.ceil(wait / 60)
            return render(
                request,
                self.template_name,
                {
                    "form": self.get_form_class()(request),
                    "locked_out": f"Too many failed sign-ins. Try again in {minutes} minute"
                    + ("" if minutes == 1 else "s")
                    + ".",
                },
                status=429,
            )
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):
        forget_failures(self.request)
        return super().form_valid(form)

    def form_invalid(self, form):
        record_failure(self.request)
        return super().form_invalid(form)
