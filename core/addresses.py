"""The address a request comes from: the one answer that the sign-in limiter, the metrics guard
and anything else that keys on the client asks for.

``REMOTE_ADDR`` is the TCP peer. Behind a proxy that is the proxy, and the client is in
``X-Forwarded-For``, which anyone can send: it is believed only when the peer is one of
``KINDGI_TRUSTED_PROXIES``, and then only as far as the proxies wrote it. Each proxy appends the
address it saw, so reading from the right, the first entry that is not a trusted proxy is the
client that the nearest untrusted hop cannot have chosen; what lies left of it is the client's
own say. (daphne's ``--proxy-headers`` would take the left-most entry from anyone, so
``kindgi serve`` does not pass it.)
"""

import ipaddress
from collections.abc import Iterable
from functools import lru_cache

from django.http import HttpRequest

from core.conf import setting

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def client_address(request: HttpRequest) -> str:
    """The client's address: the peer's, unless the peer is a trusted proxy that says whom it
    forwards for."""
    peer = request.META.get("REMOTE_ADDR", "")
    proxies = trusted_networks(tuple(setting("KINDGI_TRUSTED_PROXIES")))
    if not proxies or not _among(_address(peer), proxies):
        return peer
    hops = [_address(entry) for entry in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    for hop in reversed(hops):
        if hop is None:  # a trusted proxy wrote no address here: nothing further left is its word
            return peer
        if not _among(hop, proxies):
            return str(hop)
    # Every hop is in a trusted range (a client inside the proxies' own network, say): take what
    # the peer itself saw, which no client can have written.
    return str(hops[-1])


@lru_cache(maxsize=8)
def trusted_networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    """``KINDGI_TRUSTED_PROXIES``' addresses and CIDRs as networks. A bad entry: ValueError."""
    return tuple(ipaddress.ip_network(entry.strip(), strict=False) for entry in entries)


def _among(address: Address | None, networks: Iterable[Network]) -> bool:
    return address is not None and any(address in network for network in networks)


def _address(text: str) -> Address | None:
    """An entry of X-Forwarded-For (or a peer) as an address: ``1.2.3.4``, ``2001:db8::1``, and
    as some proxies write them, with a port (``1.2.3.4:5678``, ``[2001:db8::1]:5678``)."""
    text = text.strip()
    if text.startswith("[") and "]" in text:
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:
        text = text.split(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    # An IPv4 client seen over an IPv6 socket is the same client.
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped or address
