"""MCP servers → catalog rows: what each server lists becomes a tool; what it stops listing is
retired, never deleted (runs keep pointing at it).

A server is asked for its tools outside any transaction, each with its own timeout, so a server
that does not answer costs a refresh that long at most and blocks nothing else: it is recorded
as not answering (``last_error``) and its tools stay as they were.
"""

import json
import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from audit.actions import SettingKind, do_save_setting, record_change
from core.conf import setting
from core.secrets import fingerprint, redact_url
from kindgi.effects import Effect
from kindgi.mcp import MCP_TOOL_VERSION, catalog_name
from kindgi.naming import is_name
from tenants.authority import MACHINE_SURFACES, check_may_configure
from tenants.exceptions import ConfigurationForbiddenError
from tools.mcp.client import POOL, McpTimeout, McpUnavailable
from tools.mcp.specs import ENV_PREFIX, ServerSpecError, spec_from_config, specs_from_setting
from tools.models import McpServer, Tool
from tools.registry import get_registry

logger = logging.getLogger("kindgi.mcp")


@dataclass
class ServerReport:
    """What one refresh found on one server."""

    name: str
    answered: bool
    error: str = ""
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    retired: int = 0
    # Tools it now says something new of, or lists anew: not callable until approved.
    held: int = 0
    skipped: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        if not self.answered:
            return f"MCP server {self.name}: not answering ({self.error})"
        counts = [
            f"{getattr(self, name)} {name}"
            for name in ("created", "updated", "unchanged", "retired", "held")
            if getattr(self, name)
        ]
        text = f"MCP server {self.name}: tools {', '.join(counts) or 'none'}"
        for reason in self.skipped:
            text += f"; skipped {reason}"
        return text


def effect_of(server: str) -> Effect:
    """What Kindgi assumes of every MCP tool, whatever it claims: it may change something outside."""
    return Effect.external_side_effect(f"mcp:{server}")


@transaction.atomic
def do_sync_settings_servers() -> list[McpServer]:
    """Keep the rows of ``KINDGI_MCP_SERVERS``'s servers in step with the setting: new ones made,
    changed ones changed, ones it no longer lists turned off (their tools retire at refresh)."""
    specs = specs_from_setting(setting("KINDGI_MCP_SERVERS"), packs=_pack_names())
    by_name = {spec.name: spec for spec in specs}
    rows = {row.name: row for row in McpServer.objects.select_for_update().filter(name__in=by_name)}
    for name, row in rows.items():
        if row.source != McpServer.Source.SETTINGS:
            raise ServerSpecError(
                f"KINDGI_MCP_SERVERS names {name!r}, which is a tenant's server already: rename one of them"
            )
    synced = []
    for spec in specs:
        fields: dict[str, Any] = {
            "source": McpServer.Source.SETTINGS,
            "tenant": None,
            "transport": McpServer.Transport.STDIO if spec.command else McpServer.Transport.HTTP,
            "command": list(spec.command),
            "env": dict(spec.env),
            "url": spec.url,
            "headers": dict(spec.headers),
            "enabled": True,
        }
        row = rows.get(spec.name)
        if row is None:
            row = McpServer.objects.create(name=spec.name, **fields)
        else:
            changed = [name for name, value in fields.items() if getattr(row, name) != value]
            for name in changed:
                setattr(row, name, fields[name])
            if changed:
                row.save(update_fields=[*changed, "updated_at"])
        synced.append(row)
    McpServer.objects.filter(source=McpServer.Source.SETTINGS, enabled=True).exclude(name__in=by_name).update(
        enabled=False, updated_at=timezone.now()
    )
    return synced


MCP_SERVERS = "{tenant}'s MCP servers"
STDIO_IS_THE_SITES = (
    "a stdio server runs a command on Kindgi's machine, so only a superuser adds or changes one "
    "(or the site's KINDGI_MCP_SERVERS lists it); a tenant's admin adds streamable HTTP servers"
)


def may_run_commands(user, *, surface: str) -> bool:
    """Whether ``user`` may make Kindgi run a command (a stdio server): a superuser, or the
    machine's own surfaces (a manage.py command)."""
    if surface in MACHINE_SURFACES:
        return True
    return bool(user is not None and user.is_authenticated and user.is_superuser)


def mcp_server_snapshot(server: McpServer) -> dict:
    """What the audit keeps of a server: where it is and what it runs; of its environment and
    headers, references as they are and values typed in as marks (they may be secrets)."""
    return {
        "name": server.name,
        "transport": server.transport,
        "command": server.command,
        "url": redact_url(server.url) if server.url else "",
        "env": _values_kept(server.env),
        "headers": _values_kept(server.headers),
        "enabled": server.enabled,
        "trustNewTools": server.trust_new_tools,
    }


def _values_kept(values) -> dict[str, str]:
    """An environment's or headers' values as a record keeps them: a reference to Kindgi's
    environment as it is (``env:NAME``), a value typed in as a mark that changes when it does."""
    return {
        name: value if value.startswith(ENV_PREFIX) else fingerprint(value)
        for name, value in sorted((values or {}).items())
    }


MCP_SERVER = SettingKind(noun="mcp-server", snapshot=mcp_server_snapshot, label=lambda server: server.name)


def check_save_mcp_server(server: McpServer, *, acting_user, surface: str) -> ServerReport | None:
    """Save a tenant's server, by whoever may change the tenant's configuration (checked as
    ``McpServer.clean`` checks it), and list its tools, or retire them when it is turned off. The
    listing waits ``LISTING_WAIT_SECONDS`` at most. The site's servers come from settings."""
    if server.tenant_id is None:
        raise ConfigurationForbiddenError("a server of no tenant is the site's: KINDGI_MCP_SERVERS lists it")
    tenant = server.tenant
    check_may_configure(acting_user, tenant, what=MCP_SERVERS.format(tenant=tenant.slug), surface=surface)
    if server.transport == McpServer.Transport.STDIO and not may_run_commands(acting_user, surface=surface):
        raise ConfigurationForbiddenError(STDIO_IS_THE_SITES)
    server.full_clean()
    if server.transport == McpServer.Transport.STDIO:
        # Whoever may run commands vouches for this one (a machine surface's acting user is none).
        server.command_approved_by = acting_user if acting_user is not None else server.command_approved_by
    do_save_setting(server, kind=MCP_SERVER, tenant=tenant, acting_user=acting_user, surface=surface)
    reports = do_refresh_mcp_servers([server.name], timeout=LISTING_WAIT_SECONDS)
    return reports[0] if reports else None


# Saving a server in the admin waits this long at most for its first listing.
LISTING_WAIT_SECONDS = 5


def _pack_names() -> list[str]:
    return [pack.name for pack in get_registry().packs]


def do_refresh_mcp_servers(
    names: list[str] | None = None, *, timeout: float | None = None, now: datetime | None = None
) -> list[ServerReport]:
    """Ask each enabled server (or those ``names`` names) for its tools and make the catalog match;
    retire the tools of servers that are turned off. Safe to repeat, and to run from any process."""
    do_sync_settings_servers()
    servers = McpServer.objects.all()
    if names is not None:
        servers = servers.filter(name__in=names)
    reports = []
    for server in servers:
        if not server.enabled:
            _retire_tools(server, keep=(), now=now or timezone.now())
            continue
        reports.append(_refresh_one(server, timeout=timeout, now=now))
    return reports


def _refresh_one(server: McpServer, *, timeout: float | None, now: datetime | None) -> ServerReport:
    if (why := server.runnable_here) is not None:
        McpServer.objects.filter(pk=server.pk).update(last_error=why, checked_at=timezone.now())
        return ServerReport(name=server.name, answered=False, error=why)
    try:
        spec = spec_from_config(server.config(), packs=_pack_names(), confined=server.confined)
        listed = POOL.list_tools(spec, timeout=timeout)
    except (ServerSpecError, McpUnavailable, McpTimeout) as error:
        message = str(error)
        logger.warning("MCP server %s: not answering: %s", server.name, message)
        McpServer.objects.filter(pk=server.pk).update(last_error=message, checked_at=timezone.now())
        return ServerReport(name=server.name, answered=False, error=message)
    return _record_listing(server, listed, now=now or timezone.now())


# What a server says of a tool that a tenant admin approves: a change of any of them holds the
# tool until one approves it (a server can change its tools at any time, and the model reads
# these as the tool's instructions).
PINNED = ("description", "input_schema", "claims")


def pinned_part(fields: dict[str, Any]) -> dict[str, Any]:
    return {name: fields[name] for name in PINNED}


@transaction.atomic
def _record_listing(server: McpServer, listed, *, now: datetime) -> ServerReport:
    """The catalog made to match what ``server`` lists. A tool of its first listing, or of a
    server trusted with new tools, may be called at once; a tool it starts to list later, or one
    whose description, input schema or annotations changed since they were approved, is held
    (``Tool.held_since``) until a tenant admin approves it (``check_approve_tool``)."""
    report = ServerReport(name=server.name, answered=True)
    first_listing = server.listed_at is None
    wanted: dict[str, dict[str, Any]] = {}
    for remote in listed:
        name = catalog_name(remote.name)
        key = f"{server.name}.{name}"
        if not is_name(name):
            report.skipped.append(f"{remote.name!r} (no catalog name can be made of it)")
            continue
        if key in wanted:
            report.skipped.append(f"{remote.name!r} (its id {key} is another of its tools')")
            continue
        wanted[key] = _tool_fields(server, remote)
    existing = {
        row.key: row
        for row in Tool.objects.select_for_update().filter(
            Q(mcp_server=server) | Q(key__in=list(wanted)), version=MCP_TOOL_VERSION
        )
    }
    for key, fields in wanted.items():
        row = existing.get(key)
        if row is None:
            trusted = first_listing or server.trust_new_tools
            held = {} if trusted else {"held_since": now, "held_listing": pinned_part(fields)}
            Tool.objects.create(key=key, version=MCP_TOOL_VERSION, **fields, **held)
            report.created += 1
            report.held += 0 if trusted else 1
            continue
        if row.mcp_server_id != server.pk:
            report.skipped.append(f"{fields['remote_name']!r} (its id {key} is taken)")
            wanted.pop(key)
            continue
        # The approved description, input schema and annotations stay until one approves new ones.
        # Held, it stays held until approved, whatever the server lists next (what it lists now is
        # what an approval would take).
        listing = pinned_part(fields)
        fields = {name: value for name, value in fields.items() if name not in PINNED}
        if row.held_since is not None:
            fields["held_listing"] = listing
        elif listing != pinned_part(vars(row)):
            fields |= {"held_since": now, "held_listing": listing}
            report.held += 1
        changed = [name for name, value in fields.items() if getattr(row, name) != value]
        for name in changed:
            setattr(row, name, fields[name])
        if row.retired_at is not None:
            row.retired_at = None
            changed.append("retired_at")
        if changed:
            row.save(update_fields=[*changed, "updated_at"])
            report.updated += 1
        else:
            report.unchanged += 1
    report.retired = _retire_tools(server, keep=set(wanted), now=now)
    McpServer.objects.filter(pk=server.pk).update(listed_at=now, checked_at=now, last_error="")
    return report


def _tool_fields(server: McpServer, remote) -> dict[str, Any]:
    claims = remote.annotations.model_dump(by_alias=True, exclude_none=True) if remote.annotations else {}
    description = (remote.description or "").strip() or claims.get("title") or f"{remote.name} (MCP)"
    return {
        "pack": server.name,
        "description": description,
        "input_schema": remote.input_schema or {"type": "object"},
        "output_schema": remote.output_schema or {},
        # Never read-only, whatever the server's readOnlyHint says: see README, "MCP servers".
        "mutating": True,
        "effects": [effect_of(server.name).to_dict()],
        "is_read_only": False,
        "result_is_outside_data": True,
        "idempotent": False,
        "may_wait": False,
        "origin": Tool.Origin.MCP,
        "mcp_server": server,
        "remote_name": remote.name,
        "claims": claims,
    }


def _retire_tools(server: McpServer, *, keep, now: datetime) -> int:
    return (
        Tool.objects.filter(mcp_server=server, retired_at__isnull=True)
        .exclude(key__in=list(keep))
        .update(retired_at=now, updated_at=now)
    )


MCP_TOOLS = "{tenant}'s MCP tools"


def held_diff(tool: Tool) -> list[tuple[str, str]]:
    """What a held tool's server says now against what was approved: (field, unified diff) for
    each of its description, input schema and annotations that differs."""
    import difflib

    def lines(value) -> list[str]:
        text = value if isinstance(value, str) else json.dumps(value, indent=2, sort_keys=True)
        return text.splitlines()

    listing = tool.held_listing or {}
    return [
        (
            name,
            "\n".join(
                difflib.unified_diff(
                    lines(getattr(tool, name)), lines(listing[name]), "approved", "listed now", lineterm=""
                )
            ),
        )
        for name in PINNED
        if name in listing and listing[name] != getattr(tool, name)
    ]


def check_approve_tool(tool: Tool, *, acting_user, surface: str) -> Tool:
    """Let a held MCP tool be called as its server lists it now, by whoever may change its
    server's tenant's configuration (a site server's: a superuser)."""
    server = tool.mcp_server
    if tool.held_since is None or server is None:
        raise ConfigurationForbiddenError(f"{tool.key} is not held: there is nothing to approve")
    if server.tenant_id is None:
        if not may_run_commands(acting_user, surface=surface):
            raise ConfigurationForbiddenError(
                f"{tool.key} is a tool of the site's server {server.name}: a superuser's"
            )
    else:
        check_may_configure(
            acting_user, server.tenant, what=MCP_TOOLS.format(tenant=server.tenant.slug), surface=surface
        )
    return do_approve_tool(tool, acting_user=acting_user, surface=surface)


@transaction.atomic
def do_approve_tool(tool: Tool, *, acting_user, surface: str) -> Tool:
    before = pinned_part(vars(tool))
    for name, value in (tool.held_listing or {}).items():
        setattr(tool, name, value)
    tool.held_since, tool.held_listing = None, None
    tool.save(update_fields=[*PINNED, "held_since", "held_listing", "updated_at"])
    if tool.mcp_server.tenant_id is not None:
        record_change(
            tenant=tool.mcp_server.tenant,
            acting_user=acting_user,
            surface=surface,
            action="mcp-tool.approved",
            target_type="mcp-tool",
            target_id=tool.pk,
            target_label=tool.key,
            before=before,
            after=pinned_part(vars(tool)),
        )
    return tool
