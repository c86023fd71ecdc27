"""The catalog, one row per (id, version) of each definition a pack declares.

The definition's id is stored as ``key`` so that it never reads like a foreign
key's ``_id`` column. Rows are written only by ``tools.loading``; a definition
that leaves the code is retired, never deleted, because runs keep pointing at it.
"""

from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from kindgi.conditions import ConditionError, parse_condition
from kindgi.gates import GateOverride
from tools.mcp.specs import ServerSpecError, public_address_error, spec_from_config
from tools.registry import get_registry


class Definition(models.Model):
    key = models.CharField("id", max_length=200, help_text="pack.name, e.g. my-pack.lookup-order")
    version = models.CharField(max_length=64)
    pack = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    retired_at = models.DateTimeField(
        null=True, blank=True, help_text="When the definition left the packs' code."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
        ordering = ["key", "version"]

    def __str__(self) -> str:
        return f"{self.key}@{self.version}"

    @property
    def is_retired(self) -> bool:
        return self.retired_at is not None


class McpServer(models.Model):
    """An MCP server whose tools join the catalog: a tenant's own (made in the admin) or one for
    every tenant (from ``KINDGI_MCP_SERVERS``, kept in step with it by every refresh)."""

    class Transport(models.TextChoices):
        STDIO = "stdio", "stdio (a command Kindgi starts)"
        HTTP = "http", "streamable HTTP (a URL)"

    class Source(models.TextChoices):
        SETTINGS = "settings"
        ADMIN = "admin"

    name = models.CharField(
        max_length=100,
        unique=True,
        help_text="The prefix of its tools' ids, like a pack's: lowercase letters, digits and dashes.",
    )
    tenant = models.ForeignKey(
        "tenants.Tenant",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Whose runs may use its tools. Empty only for the servers KINDGI_MCP_SERVERS lists.",
    )
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.ADMIN, editable=False)
    transport = models.CharField(max_length=16, choices=Transport.choices, default=Transport.STDIO)
    command = models.JSONField(
        default=list,
        blank=True,
        help_text='stdio: the command and its arguments, e.g. ["python", "server.py"].',
    )
    env = models.JSONField(
        default=dict,
        blank=True,
        help_text='stdio: environment variables for the command. A value "env:NAME" is read from '
        "Kindgi's own environment when the server starts, so it is never stored here.",
    )
    url = models.CharField(max_length=500, blank=True, help_text="streamable HTTP: the server's URL.")
    headers = models.JSONField(
        default=dict,
        blank=True,
        help_text='streamable HTTP: headers to send, e.g. {"Authorization": "env:TRACKER_TOKEN"}; '
        "a value env:NAME is read from Kindgi's environment, so secrets are never stored here.",
    )
    enabled = models.BooleanField(default=True, help_text="Off: its tools are retired until it is on again.")
    # A tenant's stdio server runs a command on Kindgi's machine: only once a superuser saved it
    # (``tools.mcp.catalog``), who is named here; none of a tenant's runs without.
    command_approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
    )
    trust_new_tools = models.BooleanField(
        default=False,
        help_text="On: a tool it starts to list later may be called at once. Off (the default): a new "
        "tool is held, like a changed one, until a tenant admin approves it.",
    )
    listed_at = models.DateTimeField(null=True, blank=True, help_text="When its tools were last listed.")
    last_error = models.TextField(blank=True, help_text="Why the last listing failed; empty once one works.")
    checked_at = models.DateTimeField(
        null=True, blank=True, help_text="When it was last asked for its tools."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "MCP server"

    def __str__(self) -> str:
        return self.name

    @property
    def answers(self) -> bool:
        return self.listed_at is not None and not self.last_error

    def config(self) -> dict:
        """The fields a ``ServerSpec`` is made of, as ``KINDGI_MCP_SERVERS`` spells them."""
        if self.transport == self.Transport.STDIO:
            return {"name": self.name, "command": self.command, "env": self.env}
        return {"name": self.name, "url": self.url, "headers": self.headers}

    @property
    def confined(self) -> bool:
        """A tenant's server: code or a URL a tenant chose (``tools.mcp.specs``)."""
        return self.tenant_id is not None

    @property
    def runnable_here(self) -> str | None:
        """Why Kindgi may not start or reach this server now, or None: a tenant's stdio server
        runs only once a superuser saved it (whoever made the row)."""
        if self.confined and self.transport == self.Transport.STDIO and self.command_approved_by_id is None:
            return (
                "a tenant's stdio server runs a command on Kindgi's machine: it runs once a superuser "
                "saves it in the admin"
            )
        return None

    def clean(self) -> None:
        if self.source == self.Source.ADMIN and self.tenant_id is None:
            raise ValidationError({"tenant": "A server made in the admin belongs to a tenant."})
        if self.transport == self.Transport.STDIO and (self.url or self.headers):
            raise ValidationError("A stdio server is started by its command: leave url and headers empty.")
        if self.transport == self.Transport.HTTP and (self.command or self.env):
            raise ValidationError(
                "A streamable HTTP server is reached by its url: leave command and env empty."
            )
        try:
            spec = spec_from_config(
                self.config(), packs=[pack.name for pack in get_registry().packs], confined=self.confined
            )
        except ServerSpecError as error:
            raise ValidationError(str(error)) from None
        problem = None
        if spec.url and not spec.private_allowed:
            problem = public_address_error(urlsplit(spec.url).hostname or "")
        if problem:
            raise ValidationError({"url": problem})


class Tool(Definition):
    class Execution(models.TextChoices):
        PARALLEL = "parallel"
        SEQUENTIAL = "sequential"

    class Origin(models.TextChoices):
        CODE = "code"
        MCP = "mcp"

    input_schema = models.JSONField(default=dict)
    output_schema = models.JSONField(default=dict)
    mutating = models.BooleanField(default=True)
    effects = models.JSONField(default=list, help_text='[{"kind": …, "resource": …}]')
    is_read_only = models.BooleanField(
        "read-only", default=False, help_text="Computed by kindgi from mutating and effects."
    )
    result_is_outside_data = models.BooleanField(default=False)
    idempotent = models.BooleanField(default=False)
    may_wait = models.BooleanField(default=False)
    execution = models.CharField(max_length=16, choices=Execution.choices, default=Execution.PARALLEL)
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.CODE)
    connection = models.CharField(
        max_length=100, blank=True, help_text="The app whose connection the tool acts through, if any."
    )
    summary = models.CharField(
        max_length=500, blank=True, help_text="A call in a sentence, naming arguments in braces."
    )
    mcp_server = models.ForeignKey(
        McpServer, null=True, blank=True, on_delete=models.PROTECT, related_name="tools"
    )
    remote_name = models.CharField(
        max_length=200, blank=True, help_text="An MCP tool's own name, which its server is called with."
    )
    claims = models.JSONField(
        default=dict, blank=True, help_text="An MCP tool's annotations: what its server claims, not trusted."
    )
    # An MCP tool whose server changed what it says of it (its description, input schema or
    # annotations), or started to list it, since a tenant admin approved it: not callable until
    # one approves the change. ``held_listing`` is what the server lists now; the fields above
    # keep what was approved.
    held_since = models.DateTimeField(null=True, blank=True)
    held_listing = models.JSONField(null=True, blank=True)

    class Meta(Definition.Meta):
        constraints = [
            models.UniqueConstraint(fields=["key", "version"], name="tools_tool_key_version_unique")
        ]

    @property
    def effects_text(self) -> str:
        """Plain words for reviewers: ``writes external:orders``."""
        return ", ".join(f"{e['kind']} {e['resource']}" for e in self.effects) or "none declared"


class Agent(Definition):
    name = models.CharField(max_length=200)
    instructions = models.TextField()
    model = models.CharField(max_length=200)
    tool_refs = models.JSONField(default=list, help_text='[{"id": …, "version": …}]')
    guardrails = models.JSONField(default=list)
    parameters = models.JSONField(default=list)
    capabilities = models.JSONField(default=list)
    retrieval = models.JSONField(
        default=list,
        blank=True,
        help_text='Read-only tools run before the first step: [{"id": …, "version": …}]',
    )
    parallel_tool_calls = models.BooleanField(default=True)
    gates_enabled = models.BooleanField(
        default=False, help_text="The agent declares conversation_policy.hitl.tools."
    )
    code_overrides = models.JSONField(default=dict, help_text="Gate overrides declared in code, by tool id.")
    code_override_conditions = models.JSONField(
        default=dict, help_text="The predicates some code overrides apply under, by tool id."
    )
    input_schema = models.JSONField(default=dict)
    mcp_servers = models.JSONField(
        default=list, blank=True, help_text="MCP servers every tool of which the agent may call."
    )

    class Meta(Definition.Meta):
        constraints = [
            models.UniqueConstraint(fields=["key", "version"], name="tools_agent_key_version_unique")
        ]

    @property
    def tool_keys(self) -> list[str]:
        return [ref["id"] for ref in self.tool_refs]

    def admin_override_texts(self, tenant_id=None) -> dict[str, str]:
        """The admins' overrides by tool id that gate ``tenant_id``'s runs (the site's, with the
        tenant's own in their place), each with its condition if it has one. Without a tenant,
        only the site's."""
        mine = [o for o in self.admin_overrides.all() if o.tenant_id is None]
        mine += [o for o in self.admin_overrides.all() if tenant_id is not None and o.tenant_id == tenant_id]
        return {o.tool_key: o.describe() for o in mine}

    def effective_overrides(self, tenant_id=None) -> dict[str, str]:
        """Gate overrides by tool id: the code's, with the admins' taking precedence."""
        return {**self.code_overrides, **self.admin_override_texts(tenant_id)}


class AgentGateOverride(models.Model):
    """An admin's gate for one tool of one agent version: it beats the agent's code, and like the
    code it is only the agent's side of the gate (a tenant rule's ask or deny still holds)."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="admin_overrides")
    # Whose runs it gates: one tenant's (set by its tenant admin, through the API, or in the admin),
    # or, empty, every tenant's (a site admin's). A tenant's own replaces the site's for its runs.
    tenant = models.ForeignKey(
        "tenants.Tenant",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Empty: for every tenant. A tenant's own override replaces this one for its runs.",
    )
    tool_key = models.CharField("tool", max_length=200)
    gate = models.CharField(max_length=16, choices=[(g.value, g.value) for g in GateOverride])
    condition = models.CharField(
        max_length=500,
        blank=True,
        help_text="Apply only when this holds on the call's arguments, e.g. /amountCents > 10000. "
        "Empty: always.",
    )
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["tool_key"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "tool_key", "tenant"], name="tools_agentgateoverride_one_per_tool_and_tenant"
            ),
            models.UniqueConstraint(
                fields=["agent", "tool_key"],
                condition=models.Q(tenant__isnull=True),
                name="tools_agentgateoverride_one_site_wide_per_tool",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tool_key}: {self.gate}"

    def describe(self) -> str:
        return self.gate + (f" when {self.condition}" if self.condition else "")

    def clean(self) -> None:
        if self.agent_id is not None and self.tool_key not in self.agent.tool_keys:
            raise ValidationError(
                {
                    "tool_key": f"{self.agent} has no tool {self.tool_key!r} "
                    f"(its tools: {', '.join(self.agent.tool_keys) or 'none'})"
                }
            )
        if self.condition:
            try:
                parse_condition(self.condition)
            except ConditionError as error:
                raise ValidationError({"condition": str(error)}) from None


class Flow(Definition):
    input_schema = models.JSONField(default=dict)
    nodes = models.JSONField(default=list)
    output = models.JSONField(default=dict, help_text="The output mapping.")

    class Meta(Definition.Meta):
        constraints = [
            models.UniqueConstraint(fields=["key", "version"], name="tools_flow_key_version_unique")
        ]
