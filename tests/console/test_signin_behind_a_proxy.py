"""Sign-in limits over a real ``kindgi serve``: a client that sends a new X-Forwarded-For with
each guess is still counted as the address it connects from; a forwarded address counts only
when a trusted proxy (``KINDGI_TRUSTED_PROXIES``) says it."""

import re

import httpx
import pytest
from django.db import connection

from tests.live_server import KindgiServe, database_env

pytestmark = pytest.mark.django_db(transaction=True)


def serve(django_db_blocker, **environment):
    with django_db_blocker.unblock():
        return KindgiServe(database_env(connection) | environment)


class Browser:
    """One browser: a CSRF cookie and the form's token, as the sign-in page gives them."""

    def __init__(self, url: str):
        self.http = httpx.Client(base_url=url, timeout=30)
        page = self.http.get("/console/login/")
        self.token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)

    def sign_in(self, username: str, *, forwarded_for: str | None = None) -> int:
        headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
        data = {"username": username, "password": "wrong", "csrfmiddlewaretoken": self.token}
        return self.http.post("/console/login/", data=data, headers=headers).status_code


def test_a_new_x_forwarded_for_with_each_guess_does_not_escape_the_limit(django_db_blocker):
    # Defaults: 5 failures per username, 50 per address. Each guess names a new user, so only
    # the address can stop them.
    with serve(django_db_blocker) as server:
        browser = Browser(server.url)
        statuses = [
            browser.sign_in(f"user{number}", forwarded_for=f"198.51.100.{number}") for number in range(60)
        ]
    assert statuses[:50] == [200] * 50
    assert statuses[50:] == [429] * 10


def test_behind_a_trusted_proxy_each_forwarded_client_is_limited_on_its_own(django_db_blocker):
    # 1 failure per username, 10 per address.
    with serve(django_db_blocker, KINDGI_TRUSTED_PROXIES="127.0.0.1", KINDGI_SIGNIN_ATTEMPTS="1") as server:
        browser = Browser(server.url)
        # The proxy (127.0.0.1, the peer) appends the client it saw; what the client wrote
        # itself, to the left, changes every time and counts for nothing.
        first = [
            browser.sign_in(f"user{number}", forwarded_for=f"10.0.0.{number}, 203.0.113.1")
            for number in range(11)
        ]
        assert first == [200] * 10 + [429]
        # Another client behind the same proxy is not held up by the first one's failures.
        assert browser.sign_in("someone", forwarded_for="203.0.113.2") == 200
        # Nor is the proxy's own address, when it forwards for no one.
        assert browser.sign_in("someone-else") == 200
        assert browser.sign_in("a-third", forwarded_for="203.0.113.1") == 429
