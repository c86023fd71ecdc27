"""System checks on the configured packs. They read settings and code, never the database."""

from django.conf import settings
from django.core.checks import Error, Warning, register

from kindgi import DefinitionErrors, load_registry
from tools.mcp.specs import ServerSpecError, specs_from_setting


@register("kindgi")
def check_packs(app_configs=None, **kwargs):
    packs = getattr(settings, "KINDGI_PACKS", None)
    if not isinstance(packs, list | tuple) or not all(isinstance(p, str) for p in packs):
        return [
            Error(
                f"KINDGI_PACKS must be a list of Python module paths, not {packs!r}.",
                hint="For example: KINDGI_PACKS = ['packs.my_pack'].",
                id="kindgi.E002",
            )
        ]
    try:
        registry = load_registry(packs)
    except DefinitionErrors as errors:
        return [
            Error(
                message,
                hint="Fix the definition in its pack; nothing is loaded until every pack is right.",
                id="kindgi.E001",
            )
            for message in errors.errors
        ]
    return [
        Warning(
            f"{tool.label} says mutating=False but declares a {effect.kind.value!r} effect "
            f"on {effect.resource!r}.",
            hint=(
                "It is treated as mutating: it does not run in a dry run, gates ask before it "
                "and its calls run on their own. Drop mutating=False if it changes something, "
                "or the effect if it only reads."
            ),
            obj=tool.id,
            id="kindgi.W001",
        )
        for tool in registry.tools.values()
        for effect in tool.contradicting_effects
    ]


@register("kindgi")
def check_mcp_servers(app_configs=None, **kwargs):
    """``KINDGI_MCP_SERVERS`` is well formed and names no pack (a pack's tools own its ids)."""
    packs = getattr(settings, "KINDGI_PACKS", None) or []
    try:
        names = [pack.name for pack in load_registry(packs).packs]
    except (DefinitionErrors, TypeError):
        names = []  # check_packs reports it
    try:
        specs_from_setting(getattr(settings, "KINDGI_MCP_SERVERS", []), packs=names)
    except ServerSpecError as error:
        return [
            Error(
                f"KINDGI_MCP_SERVERS: {error}",
                hint='Each server: {"name": …, "command": [...], "env": {...}} or {"name": …, "url": …, '
                '"headers": {...}}; see README, "MCP servers".',
                id="kindgi.E003",
            )
        ]
    return []
