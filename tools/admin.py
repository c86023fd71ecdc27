"""The catalog in the admin: definitions are code and read-only; gate overrides are the admin's."""

from django import forms
from django.contrib import admin, messages
from django.utils.html import format_html, format_html_join

from audit.models import Surface
from core.admin import ReadOnlyAdminMixin, TenantScopedAdminMixin, pretty_json
from tenants.authority import ConfigurationAdminMixin
from tenants.exceptions import ConfigurationForbiddenError
from tenants.models import Tenant
from tools.actions import check_clear_override, check_set_override, do_save_override
from tools.mcp.catalog import check_approve_tool, check_save_mcp_server, do_refresh_mcp_servers, held_diff
from tools.models import Agent, AgentGateOverride, Flow, McpServer, Tool


class InServiceFilter(admin.SimpleListFilter):
    title = "in service"
    parameter_name = "in_service"

    def lookups(self, request, model_admin):
        return [("yes", "In service"), ("no", "Retired")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(retired_at__isnull=True)
        if self.value() == "no":
            return queryset.filter(retired_at__isnull=False)
        return queryset


class DefinitionAdmin(TenantScopedAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    """Definitions come from the packs' code: viewable, never added, edited or deleted here. The
    packs' catalog is every tenant's to read; a tool from a tenant's MCP server, its own."""

    list_filter = ["pack", InServiceFilter]
    search_fields = ["key", "description"]

    @admin.display(boolean=True, description="in service", ordering="retired_at")
    def in_service(self, obj) -> bool:
        return obj.retired_at is None


class HeldFilter(admin.SimpleListFilter):
    title = "held"
    parameter_name = "held"

    def lookups(self, request, model_admin):
        return [("yes", "Held (a change to approve)"), ("no", "Callable")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(held_since__isnull=False)
        if self.value() == "no":
            return queryset.filter(held_since__isnull=True)
        return queryset


@admin.register(Tool)
class ToolAdmin(DefinitionAdmin):
    list_display = [
        "key",
        "version",
        "pack",
        "is_read_only",
        "mutating",
        "effects_plain",
        "in_service",
        "callable",
    ]
    list_filter = [*DefinitionAdmin.list_filter, "is_read_only", "mutating", HeldFilter]
    actions = ["approve_held"]
    fields = [
        "key",
        "version",
        "pack",
        "held_change",
        "description",
        "is_read_only",
        "mutating",
        "effects_plain",
        "result_is_outside_data",
        "idempotent",
        "may_wait",
        "execution",
        "origin",
        "input_schema_pretty",
        "output_schema_pretty",
        "retired_at",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    @admin.display(description="effects")
    def effects_plain(self, obj: Tool) -> str:
        return obj.effects_text

    @admin.display(boolean=True, description="callable")
    def callable(self, obj: Tool) -> bool:
        return obj.held_since is None

    @admin.display(description="held")
    def held_change(self, obj: Tool) -> str:
        """A held MCP tool: what its server says now, against what was approved."""
        if obj.held_since is None:
            return "—"
        changes = held_diff(obj)
        if not changes:
            return format_html(
                "<p>Held since {}: its server started to list it. Approve it to let calls reach it:</p>{}",
                obj.held_since.strftime("%Y-%m-%d %H:%M UTC"),
                pretty_json(obj.held_listing),
            )
        return format_html(
            "<p>Held since {}: its server changed what it says of it. Not callable until approved.</p>{}",
            obj.held_since.strftime("%Y-%m-%d %H:%M UTC"),
            format_html_join("", "<h4>{}</h4><pre>{}</pre>", changes),
        )

    @admin.action(description="Approve the held tools: let calls reach them as their servers list them now")
    def approve_held(self, request, queryset):
        for tool in queryset.filter(held_since__isnull=False).select_related("mcp_server__tenant"):
            try:
                check_approve_tool(tool, acting_user=request.user, surface=Surface.ADMIN)
                self.message_user(request, f"Approved {tool.key}: calls reach it as its server lists it now.")
            except ConfigurationForbiddenError as error:
                self.message_user(request, f"{tool.key}: {error}", messages.ERROR)

    @admin.display(description="input schema")
    def input_schema_pretty(self, obj: Tool) -> str:
        return pretty_json(obj.input_schema)

    @admin.display(description="output schema")
    def output_schema_pretty(self, obj: Tool) -> str:
        return pretty_json(obj.output_schema)


class AgentGateOverrideForm(forms.ModelForm):
    class Meta:
        model = AgentGateOverride
        fields = ["tool_key", "tenant", "gate", "condition"]


class AgentGateOverrideInline(ConfigurationAdminMixin, admin.TabularInline):
    model = AgentGateOverride
    form = AgentGateOverrideForm
    extra = 0
    verbose_name = "gate override (beats the agent's code)"
    verbose_name_plural = (
        "gate overrides set by an admin (they beat the agent's code, never the tenant's approval rules: "
        "a call runs under the stricter of the two)"
    )

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)
        tool_keys = obj.tool_keys if obj is not None else []
        # Offer only the agent's own tools, so an override can't name one it doesn't have.
        formset.form.base_fields["tool_key"] = forms.ChoiceField(
            label="tool", choices=[("", "---------")] + [(key, key) for key in tool_keys]
        )
        return formset

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "tenant" and not request.user.is_superuser:
            # Staff of a tenant set overrides for it; only a superuser sets them for every tenant.
            membership = getattr(request.user, "membership", None)
            kwargs["queryset"] = Tenant.objects.filter(pk=membership.tenant_id if membership else None)
            kwargs["required"] = True
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def has_add_permission(self, request, obj=None):
        return (
            obj is not None
            and obj.retired_at is None
            and self._may_configure(request)
            and request.user.has_perm("tools.add_agentgateoverride")
        )


@admin.register(Agent)
class AgentAdmin(DefinitionAdmin):
    list_display = ["key", "version", "name", "pack", "model", "gates_enabled", "in_service"]
    list_filter = [*DefinitionAdmin.list_filter, "gates_enabled"]
    inlines = [AgentGateOverrideInline]
    fields = [
        "key",
        "version",
        "pack",
        "name",
        "description",
        "instructions",
        "model",
        "tools_plain",
        "gates_enabled",
        "code_overrides_plain",
        "effective_overrides_plain",
        "parallel_tool_calls",
        "guardrails",
        "parameters",
        "capabilities",
        "retrieval",
        "input_schema_pretty",
        "retired_at",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    def has_change_permission(self, request, obj=None):
        # The agent's own fields stay read-only; the permission lets the overrides inline save.
        return request.user.has_perm("tools.change_agent")

    def save_formset(self, request, form, formset, change):
        """Each override set or cleared through the doors the API uses (``tools.actions``), each an
        audit entry of its tenant's; a site-wide one (of no tenant) is a superuser's."""
        agent = form.instance
        formset.save(commit=False)  # what changed, for the admin's history: nothing is written here
        for override_form in formset.forms:
            deleting = formset.can_delete and formset._should_delete_form(override_form)
            if not (deleting or override_form.has_changed()):
                continue
            pk = override_form.instance.pk
            # As stored: the form has put its new values on its instance already.
            stored = AgentGateOverride.objects.filter(pk=pk).select_related("tenant").first() if pk else None
            if deleting:
                if stored is not None:
                    self._clear(request, agent, stored)
                continue
            data = override_form.cleaned_data
            if stored is not None and (stored.tool_key, stored.tenant) != (data["tool_key"], data["tenant"]):
                self._clear(request, agent, stored)  # it now names another tool or tenant
            self._set(request, agent, data)

    @staticmethod
    def _set(request, agent: Agent, data: dict) -> None:
        if data["tenant"] is not None:
            check_set_override(
                agent=agent,
                tenant=data["tenant"],
                tool_id=data["tool_key"],
                gate=data["gate"],
                condition=data.get("condition") or "",
                acting_user=request.user,
                surface=Surface.ADMIN,
            )
            return
        if not request.user.is_superuser:
            raise ConfigurationForbiddenError("only a superuser sets an override for every tenant")
        override, _ = AgentGateOverride.objects.get_or_create(
            agent=agent, tenant=None, tool_key=data["tool_key"]
        )
        override.gate, override.condition = data["gate"], data.get("condition") or ""
        override.changed_by = request.user
        do_save_override(override, acting_user=request.user, surface=Surface.ADMIN)

    @staticmethod
    def _clear(request, agent: Agent, override: AgentGateOverride) -> None:
        if override.tenant is not None:
            check_clear_override(
                agent=agent,
                tenant=override.tenant,
                tool_id=override.tool_key,
                acting_user=request.user,
                surface=Surface.ADMIN,
            )
        elif request.user.is_superuser:
            override.delete()
        else:
            raise ConfigurationForbiddenError("only a superuser clears an override for every tenant")

    @admin.display(description="tools")
    def tools_plain(self, obj: Agent) -> str:
        return (
            format_html_join(", ", "{}@{}", ((ref["id"], ref["version"]) for ref in obj.tool_refs)) or "none"
        )

    @admin.display(description="overrides in code")
    def code_overrides_plain(self, obj: Agent) -> str:
        return self._overrides_text(
            {
                tool: gate
                + (
                    f" when {obj.code_override_conditions[tool]}(arguments)"
                    if tool in obj.code_override_conditions
                    else ""
                )
                for tool, gate in obj.code_overrides.items()
            }
        )

    @admin.display(description="overrides in effect")
    def effective_overrides_plain(self, obj: Agent) -> str:
        return self._overrides_text(obj.effective_overrides())

    @staticmethod
    def _overrides_text(overrides: dict[str, str]) -> str:
        return format_html_join(", ", "{}: {}", sorted(overrides.items())) or "none"

    @admin.display(description="input schema")
    def input_schema_pretty(self, obj: Agent) -> str:
        return pretty_json(obj.input_schema)


@admin.register(Flow)
class FlowAdmin(DefinitionAdmin):
    list_display = ["key", "version", "pack", "steps", "in_service"]
    fields = [
        "key",
        "version",
        "pack",
        "description",
        "input_schema_pretty",
        "nodes_pretty",
        "output_pretty",
        "retired_at",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    @admin.display(description="steps")
    def steps(self, obj: Flow) -> str:
        return " → ".join(f"{n['id']} ({n['kind']} {n[n['kind']]})" for n in obj.nodes)

    @admin.display(description="input schema")
    def input_schema_pretty(self, obj: Flow) -> str:
        return pretty_json(obj.input_schema)

    @admin.display(description="nodes")
    def nodes_pretty(self, obj: Flow) -> str:
        return pretty_json(obj.nodes)

    @admin.display(description="output mapping")
    def output_pretty(self, obj: Flow) -> str:
        return pretty_json(obj.output)


class McpServerForm(forms.ModelForm):
    class Meta:
        model = McpServer
        fields = [
            "name",
            "tenant",
            "transport",
            "command",
            "env",
            "url",
            "headers",
            "enabled",
            "trust_new_tools",
        ]


@admin.register(McpServer)
class McpServerAdmin(ConfigurationAdminMixin, admin.ModelAdmin):
    """A tenant's own MCP servers; the site's (KINDGI_MCP_SERVERS) are shown, not edited here.
    Saving one lists its tools at once; a server that does not answer is saved and reported."""

    form = McpServerForm
    list_display = ["name", "tenant", "transport", "enabled", "answering", "listed_at", "last_error"]
    list_filter = ["tenant", "transport", "enabled"]
    list_select_related = ["tenant"]
    search_fields = ["name"]
    readonly_fields = ["source", "listed_at", "checked_at", "last_error", "tools_listed"]
    actions = ["refresh_tools"]

    @admin.display(boolean=True, description="answering")
    def answering(self, obj: McpServer) -> bool:
        return obj.answers

    @admin.display(description="its tools in service")
    def tools_listed(self, obj: McpServer) -> str:
        keys = obj.tools.filter(retired_at__isnull=True).values_list("key", flat=True) if obj.pk else []
        return ", ".join(keys) or "none"

    def has_change_permission(self, request, obj=None):
        if obj is not None and obj.source == McpServer.Source.SETTINGS:
            return False  # it follows KINDGI_MCP_SERVERS
        if obj is not None and obj.transport == McpServer.Transport.STDIO and not request.user.is_superuser:
            return False  # a command on Kindgi's machine: a superuser's (tools.mcp.catalog)
        return super().has_change_permission(request, obj)

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        if request.user.is_superuser:
            return fields
        return [name for name in fields if name not in ("command", "env")]

    def formfield_for_choice_field(self, db_field, request, **kwargs):
        if db_field.name == "transport" and not request.user.is_superuser:
            kwargs["choices"] = [(McpServer.Transport.HTTP, McpServer.Transport.HTTP.label)]
        return super().formfield_for_choice_field(db_field, request, **kwargs)

    def has_delete_permission(self, request, obj=None):
        return False  # turn it off instead: its tools retire, and the runs that used them keep their history

    def save_model(self, request, obj, form, change):
        report = check_save_mcp_server(obj, acting_user=request.user, surface=Surface.ADMIN)
        if report is not None:
            level = messages.SUCCESS if report.answered else messages.WARNING
            self.message_user(request, str(report), level)

    # Listing starts the server: for whoever may change the tenant's servers (a tenant's stdio
    # server starts only once a superuser saved it, whoever asks).
    @admin.action(description="List the tools of the selected servers again", permissions=["change"])
    def refresh_tools(self, request, queryset):
        for report in do_refresh_mcp_servers(list(queryset.values_list("name", flat=True))):
            self.message_user(request, str(report), messages.SUCCESS if report.answered else messages.WARNING)
