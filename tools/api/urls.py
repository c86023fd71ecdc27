from django.urls import path

from tools.api import views

urlpatterns = [
    path("tools", views.ToolListApi.as_view(), name="tools"),
    path("tools/<str:definition_id>", views.ToolDetailApi.as_view(), name="tool"),
    path("agents", views.AgentListApi.as_view(), name="agents"),
    path("agents/<str:definition_id>", views.AgentDetailApi.as_view(), name="agent"),
    path("agents/<str:definition_id>/overrides", views.AgentOverridesApi.as_view(), name="agent-overrides"),
    path(
        "agents/<str:definition_id>/overrides/<str:tool_id>",
        views.AgentOverrideApi.as_view(),
        name="agent-override",
    ),
    path("flows", views.FlowListApi.as_view(), name="flows"),
    path("flows/<str:definition_id>", views.FlowDetailApi.as_view(), name="flow"),
    path("mcp-servers", views.McpServerListApi.as_view(), name="mcp-servers"),
]
