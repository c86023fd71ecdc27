"""The catalog on the wire: tools, agents and flows with their schemas, camelCase."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import JsonObjectField, StrictCharField, StrictSerializer
from kindgi.gates import GateOverride
from tools.models import Agent, AgentGateOverride, Flow, McpServer, Tool


class EffectSerializer(serializers.Serializer):
    kind = serializers.CharField()
    resource = serializers.CharField()


class ToolSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="key")
    readOnly = serializers.BooleanField(source="is_read_only")
    effects = EffectSerializer(many=True)
    resultIsOutsideData = serializers.BooleanField(source="result_is_outside_data")
    mayWait = serializers.BooleanField(source="may_wait")
    inputSchema = JsonObjectField(source="input_schema")
    outputSchema = JsonObjectField(source="output_schema")
    retired = serializers.BooleanField(source="is_retired")
    mcpServer = serializers.CharField(
        source="mcp_server.name", allow_null=True, default=None, help_text="For MCP tools: their server."
    )
    claims = JsonObjectField(help_text="For MCP tools: the server's annotations, its claims, not trusted.")
    connection = serializers.SerializerMethodField(
        help_text="The app whose connection the tool acts through (null: none)."
    )
    summary = serializers.SerializerMethodField(
        help_text='A call in a sentence for its reviewer, naming arguments in braces: \'Post "{message}" to '
        "the public status page'. Null: the tool has none (its approvals are summed up by its "
        "description and arguments)."
    )

    class Meta:
        model = Tool
        fields = [
            "id",
            "version",
            "pack",
            "description",
            "summary",
            "mutating",
            "readOnly",
            "effects",
            "resultIsOutsideData",
            "idempotent",
            "mayWait",
            "execution",
            "origin",
            "inputSchema",
            "outputSchema",
            "retired",
            "mcpServer",
            "claims",
            "connection",
        ]
        read_only_fields = fields

    def get_connection(self, tool: Tool) -> str | None:
        return tool.connection or None

    def get_summary(self, tool: Tool) -> str | None:
        return tool.summary or None


class ToolRefSerializer(serializers.Serializer):
    id = serializers.CharField()
    version = serializers.CharField()


class OverridesSerializer(serializers.Serializer):
    code = serializers.DictField(child=serializers.CharField(), help_text="Declared in the agent's code.")
    admin = serializers.DictField(
        child=serializers.CharField(),
        help_text="Set by an admin, for every tenant or for yours (yours win); they beat the code.",
    )
    effective = serializers.DictField(child=serializers.CharField())


class AgentSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="key")
    tools = ToolRefSerializer(source="tool_refs", many=True)
    retrieval = ToolRefSerializer(many=True, help_text="Read-only tools run with the user's message first.")
    parameters = serializers.ListField(
        child=JsonObjectField(), help_text="[{name, schema, required, description}]"
    )
    capabilities = serializers.ListField(
        child=JsonObjectField(), help_text='[{"needs": [{"feature": "tool-use"}]}]'
    )
    parallelToolCalls = serializers.BooleanField(source="parallel_tool_calls")
    gatesEnabled = serializers.BooleanField(source="gates_enabled")
    overrides = serializers.SerializerMethodField()
    inputSchema = JsonObjectField(source="input_schema")
    retired = serializers.BooleanField(source="is_retired")

    class Meta:
        model = Agent
        fields = [
            "id",
            "version",
            "pack",
            "name",
            "description",
            "instructions",
            "model",
            "tools",
            "retrieval",
            "parameters",
            "capabilities",
            "parallelToolCalls",
            "gatesEnabled",
            "overrides",
            "inputSchema",
            "retired",
        ]
        read_only_fields = fields

    @extend_schema_field(OverridesSerializer)
    def get_overrides(self, agent: Agent) -> dict:
        admin = agent.admin_override_texts(self.context.get("tenant_id"))
        return {"code": agent.code_overrides, "admin": admin, "effective": {**agent.code_overrides, **admin}}


class FlowNodeSerializer(serializers.Serializer):
    id = serializers.CharField()
    kind = serializers.ChoiceField(choices=["tool", "agent"])
    tool = serializers.CharField(required=False)
    agent = serializers.CharField(required=False)
    version = serializers.CharField()
    input = JsonObjectField(help_text='Literals and {"$ref": "#/input/…" | "#/nodes/<id>/output/…"}.')


class FlowSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="key")
    inputSchema = JsonObjectField(source="input_schema")
    nodes = FlowNodeSerializer(many=True)
    output = JsonObjectField(help_text="The output mapping.")
    retired = serializers.BooleanField(source="is_retired")

    class Meta:
        model = Flow
        fields = ["id", "version", "pack", "description", "inputSchema", "nodes", "output", "retired"]
        read_only_fields = fields


class OverrideSerializer(serializers.ModelSerializer):
    toolId = serializers.CharField(source="tool_key")
    scope = serializers.SerializerMethodField(help_text='"tenant": yours; "site": every tenant\'s.')
    changedBy = serializers.CharField(source="changed_by.username", allow_null=True, default=None)
    updatedAt = serializers.DateTimeField(source="updated_at")

    class Meta:
        model = AgentGateOverride
        fields = ["toolId", "gate", "condition", "scope", "changedBy", "updatedAt"]
        read_only_fields = fields

    def get_scope(self, override: AgentGateOverride) -> str:
        return "site" if override.tenant_id is None else "tenant"


class OverrideListSerializer(serializers.Serializer):
    agentId = serializers.CharField()
    agentVersion = serializers.CharField()
    items = OverrideSerializer(many=True)


class SetOverrideSerializer(StrictSerializer):
    gate = serializers.ChoiceField(choices=[gate.value for gate in GateOverride])
    condition = StrictCharField(
        required=False, allow_blank=True, default="", help_text="e.g. /amountCents > 10000; empty: always."
    )


class McpServerSerializer(serializers.ModelSerializer):
    scope = serializers.SerializerMethodField(help_text="site: for every tenant; tenant: your own.")
    answering = serializers.BooleanField(source="answers")
    lastError = serializers.CharField(source="last_error")
    listedAt = serializers.DateTimeField(source="listed_at", allow_null=True)
    checkedAt = serializers.DateTimeField(source="checked_at", allow_null=True)
    tools = serializers.IntegerField(source="tools_in_service", help_text="Its tools in service.")

    class Meta:
        model = McpServer
        fields = [
            "name",
            "scope",
            "transport",
            "enabled",
            "answering",
            "lastError",
            "listedAt",
            "checkedAt",
            "tools",
        ]
        read_only_fields = fields

    def get_scope(self, server: McpServer) -> str:
        return "site" if server.tenant_id is None else "tenant"


class McpServerListSerializer(serializers.Serializer):
    items = McpServerSerializer(many=True)
