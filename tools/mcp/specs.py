"""How to reach one MCP server: a command over stdio, or a URL over streamable HTTP.

A spec comes from ``KINDGI_MCP_SERVERS`` (server-wide) or from an ``McpServer`` row of a tenant's.
Values written ``env:NAME`` (header values, environment values) are read from this process's
environment when the server is reached, so that a secret never sits in the database or in
settings files.

A tenant's server is *confined*: it is code or a URL a tenant chose, so it may read only the names
of Kindgi's environment the site lists in ``KINDGI_MCP_ENV_ALLOWED`` (never Kindgi's own keys),
and it may not be on a loopback, link-local or private address (this machine, its network) unless
the site allows it (``KINDGI_MCP_ALLOW_PRIVATE``): checked when it is saved, and again on the
address its name resolves to each time it is reached (``tools.mcp.client``).
"""

import ipaddress
import json
import os
import re
import socket
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from core.conf import setting
from kindgi.naming import is_name

ENV_PREFIX = "env:"


class ServerSpecError(ValueError):
    """A server's configuration is wrong; the message names what."""


@dataclass(frozen=True, kw_only=True)
class ServerSpec:
    name: str
    command: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    # A tenant's server: see the module's docstring.
    confined: bool = False

    @property
    def transport(self) -> str:
        return "stdio" if self.command else "http"

    @property
    def key(self) -> str:
        """Identifies the connection: the same server reached the same way shares one."""
        return json.dumps(
            [self.name, list(self.command), dict(self.env), self.url, dict(self.headers), self.confined],
            sort_keys=True,
        )

    @property
    def where(self) -> str:
        """Where the server is, for people: the command or the URL (never a header's value)."""
        return " ".join(self.command) if self.command else self.url

    @property
    def private_allowed(self) -> bool:
        return not self.confined or setting("KINDGI_MCP_ALLOW_PRIVATE")

    def resolved_env(self) -> dict[str, str]:
        allowed = _allowed_names(self.confined)
        return {name: resolve(value, what=f"env {name}", allowed=allowed) for name, value in self.env.items()}

    def resolved_headers(self) -> dict[str, str]:
        allowed = _allowed_names(self.confined)
        return {
            name: resolve(value, what=f"header {name}", allowed=allowed)
            for name, value in self.headers.items()
        }


def _allowed_names(confined: bool) -> Collection[str] | None:
    return set(setting("KINDGI_MCP_ENV_ALLOWED")) if confined else None


def resolve(value: str, *, what: str, allowed: Collection[str] | None = None) -> str:
    """``value``, or the environment variable it names as ``env:NAME`` (one of ``allowed``, when
    they are given: a tenant's server)."""
    if not value.startswith(ENV_PREFIX):
        return value
    variable = value.removeprefix(ENV_PREFIX)
    if allowed is not None and variable not in allowed:
        raise ServerSpecError(_not_allowed(what, variable))
    if variable not in os.environ:
        raise ServerSpecError(f"{what} names the environment variable {variable}, which is not set")
    return os.environ[variable]


def _not_allowed(what: str, variable: str) -> str:
    return (
        f"{what} names the environment variable {variable}, which a tenant's server may not read "
        "(the site lists those it may in KINDGI_MCP_ENV_ALLOWED)"
    )


def public_address_error(host: str) -> str | None:
    """Why ``host`` may not be reached by a tenant's server (it is, or resolves to, a loopback,
    link-local, private or otherwise not public address, or it does not resolve), or None."""
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)}
    except (OSError, UnicodeError) as error:
        return f"{host} does not resolve ({error})"
    for address in sorted(addresses):
        if not is_public(address):
            return (
                f"{host} is {address}, not a public address: a tenant's server may not be on this machine "
                "or its network (the site allows it with KINDGI_MCP_ALLOW_PRIVATE)"
            )
    return None


def is_public(address: str) -> bool:
    """Whether ``address`` (an IP literal) is a public one: not loopback, link-local, private,
    shared, multicast, reserved or unspecified (an IPv4-mapped or NAT64 IPv6 address is judged as
    the IPv4 address it carries)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        elif ip in _NAT64_WELL_KNOWN:
            # A NAT64 gateway turns it into the IPv4 address in its last 32 bits.
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        elif ip in _NAT64_LOCAL_USE:
            return False
    return ip.is_global and not ip.is_multicast


# NAT64 prefixes (RFC 6052, RFC 8215), which Python calls global: the well-known one carries an
# IPv4 address, the local-use one leads into a network of the site's own.
_NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL_USE = ipaddress.IPv6Network("64:ff9b:1::/48")


def check_name(name: Any, *, packs: Sequence[str] = ()) -> str:
    if not is_name(name):
        raise ServerSpecError(
            f"name {name!r} must be lowercase letters, digits and dashes, "
            "starting and ending with a letter or digit (like a pack's)"
        )
    if name in packs:
        raise ServerSpecError(f"name {name!r} is a pack's: an MCP server's tools would share its ids")
    return name


def _string_map(value: Any, *, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ServerSpecError(f"{what} must be an object of strings")
    return dict(value)


def spec_from_config(config: Any, *, packs: Sequence[str] = (), confined: bool = False) -> ServerSpec:
    """A spec from one entry of ``KINDGI_MCP_SERVERS`` (or the same fields of a row, ``confined``
    for a tenant's), checked. A confined server's ``env:`` names must be allowed ones; whether its
    address is public is checked when it is saved and reached, not here (that asks the DNS)."""
    if not isinstance(config, Mapping):
        raise ServerSpecError(f"each server must be an object, not {config!r}")
    unknown = sorted(set(config) - {"name", "command", "env", "url", "headers"})
    label = f"server {config.get('name')!r}"
    if unknown:
        raise ServerSpecError(
            f"{label}: unknown field(s) {', '.join(unknown)} (the fields: name, command, env, url, headers)"
        )
    try:
        name = check_name(config.get("name"), packs=packs)
    except ServerSpecError as error:
        raise ServerSpecError(f"{label}: {error}") from None
    command = config.get("command") or ()
    url = config.get("url") or ""
    if bool(command) == bool(url):
        raise ServerSpecError(f"{label}: give either command (stdio) or url (streamable HTTP), not both")
    if command and (
        not isinstance(command, list | tuple) or not all(isinstance(part, str) and part for part in command)
    ):
        raise ServerSpecError(f'{label}: command must be a list of strings, e.g. ["python", "server.py"]')
    if url:
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            raise ServerSpecError(f"{label}: url {url!r} must be an http:// or https:// URL")
    env = _string_map(config.get("env"), what=f"{label}: env")
    headers = _string_map(config.get("headers"), what=f"{label}: headers")
    if command and headers:
        raise ServerSpecError(f"{label}: headers are for a server reached by url")
    for key, value in headers.items():
        if not _HEADER_NAME.fullmatch(key):
            raise ServerSpecError(
                f"{label}: header name {key!r} is not an HTTP header name (letters, digits, -)"
            )
        if any(character in value for character in "\r\n\x00"):
            raise ServerSpecError(f"{label}: header {key}'s value holds a line break or a NUL")
    if url and env:
        raise ServerSpecError(f"{label}: env is for a server started by command")
    if confined:
        allowed = _allowed_names(True)
        for what, values in (("env", env), ("header", headers)):
            for key, value in values.items():
                variable = value.removeprefix(ENV_PREFIX)
                if value.startswith(ENV_PREFIX) and variable not in allowed:
                    raise ServerSpecError(f"{label}: {_not_allowed(f'{what} {key}', variable)}")
    return ServerSpec(name=name, command=tuple(command), env=env, url=url, headers=headers, confined=confined)


# An HTTP header name is a token (RFC 9110 5.1).
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def specs_from_setting(value: Any, *, packs: Sequence[str] = ()) -> list[ServerSpec]:
    """The specs ``KINDGI_MCP_SERVERS`` lists; a wrong entry raises, naming it."""
    if value in (None, ""):
        return []
    if not isinstance(value, list | tuple):
        raise ServerSpecError("KINDGI_MCP_SERVERS must be a JSON list of servers")
    specs = [spec_from_config(config, packs=packs) for config in value]
    names = [spec.name for spec in specs]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ServerSpecError(f"KINDGI_MCP_SERVERS names {', '.join(twice)} more than once")
    return specs
