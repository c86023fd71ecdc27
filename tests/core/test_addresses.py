"""core.addresses: whose address a request is, believing X-Forwarded-For only from trusted
proxies, and only as far as they wrote it."""

import pytest
from django.test import RequestFactory

from core.addresses import client_address

PROXIES = ["127.0.0.1", "10.0.0.0/8", "2001:db8::/32"]


def address(peer: str, forwarded: str | None = None) -> str:
    extra = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
    return client_address(RequestFactory().get("/", REMOTE_ADDR=peer, **extra))


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        ("203.0.113.9", None, "203.0.113.9"),
        ("203.0.113.9", "198.51.100.1", "203.0.113.9"),
        ("127.0.0.1", "198.51.100.1", "127.0.0.1"),
    ],
    ids=["no header", "a client's own header", "even from loopback"],
)
def test_with_no_trusted_proxies_it_is_always_the_peer(settings, peer, forwarded, client):
    settings.KINDGI_TRUSTED_PROXIES = []
    assert address(peer, forwarded) == client


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        ("127.0.0.1", "198.51.100.1", "198.51.100.1"),
        ("127.0.0.1", "6.6.6.6, 198.51.100.1", "198.51.100.1"),
        ("127.0.0.1", "6.6.6.6, 198.51.100.1, 10.1.2.3", "198.51.100.1"),
        ("10.9.9.9", "6.6.6.6,198.51.100.1 , 10.1.2.3,127.0.0.1", "198.51.100.1"),
        ("127.0.0.1", None, "127.0.0.1"),
        ("127.0.0.1", "", "127.0.0.1"),
        ("127.0.0.1", "6.6.6.6, not-an-address", "127.0.0.1"),
        ("127.0.0.1", "not-an-address, 198.51.100.1", "198.51.100.1"),
        ("127.0.0.1", "198.51.100.1:5678", "198.51.100.1"),
        ("127.0.0.1", "[2001:db9::1]:443", "2001:db9::1"),
        ("2001:db8::5", "2001:db9::1", "2001:db9::1"),
        ("127.0.0.1", "::ffff:198.51.100.1", "198.51.100.1"),
        ("127.0.0.1", "10.1.2.3, 10.4.5.6", "10.4.5.6"),
        ("203.0.113.9", "198.51.100.1", "203.0.113.9"),
    ],
    ids=[
        "the proxy's client",
        "what the client wrote itself counts for nothing",
        "through two proxies",
        "through three, spaces and all",
        "the proxy on its own",
        "an empty header",
        "a proxy that wrote no address",
        "garbage left of the client",
        "with a port",
        "IPv6 with a port",
        "an IPv6 proxy",
        "IPv4 written as IPv6",
        "every hop in a trusted range: what the peer saw",
        "a peer that is no proxy of ours",
    ],
)
def test_behind_trusted_proxies_it_is_the_rightmost_hop_that_is_no_proxy(settings, peer, forwarded, client):
    settings.KINDGI_TRUSTED_PROXIES = PROXIES
    assert address(peer, forwarded) == client
