"""Tools from real MCP servers (``tests/mcp_servers/notes.py``, built with the ``mcp`` SDK) in the
catalog and in runs: every call through the one call policy, never read-only whatever the server
claims, results as outside data, every failure as data for the model."""

import html
import os
import signal
import time

import pytest
from django.test import override_settings

from approvals.exceptions import ApprovalInputError
from approvals.models import Approval
from runs.actions import check_start_run
from runs.models import RunStatus
from tests.factories import default_tenant, other_tenant, principal, superuser
from tests.mcp.conftest import stdio_server
from tests.pack_fixtures.probes import SCRIPT
from tests.runs.decide import decide
from tests.runs.helpers import answer, calls, start
from tools.mcp.catalog import do_refresh_mcp_servers
from tools.mcp.client import POOL
from tools.mcp.specs import spec_from_config
from tools.models import McpServer, Tool

pytestmark = pytest.mark.django_db(transaction=True)

DRY_RUN_MESSAGE = (
    'dry-run-effectful-tool: tool "notes.read-note" is not declared read-only (mutating: false), '
    "so it does not run in a dry run"
)


def tool_result(run, call_id: str):
    return next(m for m in run.messages if m.get("callId") == call_id)


def wait_until_gone(pid: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} is still there")


def writes(log) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


class TestTheCatalog:
    def test_each_listed_tool_joins_the_catalog_under_the_server_name_never_read_only(self, notes):
        rows = {row.key: row for row in Tool.objects.filter(origin="mcp")}
        assert sorted(rows) == [
            "notes.crash-server",
            "notes.forget-tool",
            "notes.read-note",
            "notes.server-pid",
            "notes.slow-note",
            "notes.write-note",
        ]
        read = rows["notes.read-note"]
        assert read.remote_name == "read_note"
        assert read.claims == {"title": "Read a note", "readOnlyHint": True}
        assert read.mutating is True
        assert read.is_read_only is False
        assert read.result_is_outside_data is True
        assert read.effects == [{"kind": "external-side-effect", "resource": "mcp:notes"}]
        assert read.input_schema["required"] == ["name"]
        assert read.description == "Read one note by its name."
        assert notes.created == 6

    def test_a_tool_the_server_stops_listing_is_retired_not_deleted(self, notes):
        spec = spec_from_config(McpServer.objects.get(name="notes").config())
        POOL.call_tool(spec, "forget_tool", {"tool_name": "slow_note"})
        (report,) = do_refresh_mcp_servers()
        assert report.retired == 1
        retired = Tool.objects.get(key="notes.slow-note")
        assert retired.retired_at is not None
        assert Tool.objects.filter(origin="mcp", retired_at__isnull=True).count() == 5

    def test_a_server_that_does_not_answer_is_reported_and_keeps_its_tools(self, notes):
        with override_settings(KINDGI_MCP_SERVERS=[{"name": "notes", "command": ["/nonexistent/server"]}]):
            (report,) = do_refresh_mcp_servers(timeout=5)
        assert not report.answered
        assert "nonexistent" in report.error
        server = McpServer.objects.get(name="notes")
        assert server.last_error == report.error
        assert Tool.objects.filter(origin="mcp", retired_at__isnull=True).count() == 6

    def test_a_server_left_out_of_the_setting_is_turned_off_and_its_tools_retire(self, notes):
        with override_settings(KINDGI_MCP_SERVERS=[]):
            assert do_refresh_mcp_servers() == []
        assert McpServer.objects.get(name="notes").enabled is False
        assert not Tool.objects.filter(origin="mcp", retired_at__isnull=True).exists()


class TestNeverReadOnly:
    def test_a_dry_run_stops_before_a_tool_that_claims_to_only_read(self, notes):
        run = check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            flow_id="mcp-probe.read-note",
            input={"name": "welcome"},
            dry_run=True,
        )
        assert run.status == RunStatus.FAILED
        assert run.dry_run is True
        assert run.failure_message == DRY_RUN_MESSAGE
        assert not run.journal.filter(kind="tool.called").exists()

    def test_the_same_flow_for_real_calls_the_server(self, notes):
        run = check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            flow_id="mcp-probe.read-note",
            input={"name": "welcome"},
        )
        assert run.status == RunStatus.COMPLETED
        assert run.output == {"text": "Hello from the notes server."}

    def test_a_read_only_run_hides_mcp_tools_and_refuses_a_call_to_one(self, notes):
        SCRIPT.replies[:] = [calls(("c1", "notes.read-note", {"name": "welcome"})), answer()]
        run = start("mcp-probe.reader", read_only=True)
        assert run.status == RunStatus.COMPLETED
        assert SCRIPT.requests[0].tools == ()
        refusal = tool_result(run, "c1")
        assert refusal["content"]["error"]["code"] == "TOOL_NOT_ALLOWED"
        assert "outsideData" not in refusal  # the policy's word, not the server's
        assert not run.journal.filter(kind="tool.called").exists()

    def test_a_gated_agent_asks_before_it_and_an_approved_call_runs_once(self, notes, notes_log):
        SCRIPT.replies[:] = [
            calls(("c1", "notes.write-note", {"name": "todo", "text": "buy milk"})),
            answer("written"),
        ]
        run = start("mcp-probe.clerk")
        assert run.status == RunStatus.SUSPENDED
        approval = Approval.objects.get(run=run)
        assert approval.tool_key == "notes.write-note"
        assert writes(notes_log) == []

        run = decide(run, "c1")
        assert run.status == RunStatus.COMPLETED
        assert writes(notes_log) == ["todo"]
        result = tool_result(run, "c1")
        assert result["outsideData"] is True
        assert result["content"] == {"name": "todo", "text": "buy milk"}
        # What the model read next: the result inside the outside-data envelope.
        seen = next(m for m in SCRIPT.requests[1].messages if m.get("callId") == "c1")
        assert "Untrusted content" in str(seen["content"])

    def test_an_edit_that_adds_a_field_the_server_never_named_is_refused(self, notes, notes_log):
        SCRIPT.replies[:] = [calls(("c1", "notes.write-note", {"name": "todo", "text": "buy milk"}))]
        run = start("mcp-probe.clerk")
        edited = {"name": "todo", "text": "buy milk", "overwrite_all": True}
        with pytest.raises(ApprovalInputError) as refused:
            decide(run, "c1", arguments=edited)
        unknown = "/arguments/overwrite_all: unknown field (the fields are: name, text)"
        assert refused.value.errors == [unknown]
        assert Approval.objects.get(run=run).status == "pending"
        assert writes(notes_log) == []

    def test_an_approved_call_reaches_a_server_that_died_while_it_waited_once(self, notes, notes_log):
        spec = spec_from_config(McpServer.objects.get(name="notes").config())
        first_pid = POOL.call_tool(spec, "server_pid", {}).structured_content["result"]
        SCRIPT.replies[:] = [
            calls(("c1", "notes.write-note", {"name": "todo", "text": "buy milk"})),
            answer("written"),
        ]
        run = start("mcp-probe.clerk")
        assert run.status == RunStatus.SUSPENDED
        os.kill(first_pid, signal.SIGKILL)
        wait_until_gone(first_pid)

        run = decide(run, "c1")
        assert run.status == RunStatus.COMPLETED
        assert tool_result(run, "c1")["content"] == {"name": "todo", "text": "buy milk"}
        assert writes(notes_log) == ["todo"]
        assert POOL.call_tool(spec, "server_pid", {}).structured_content["result"] != first_pid

    def test_the_clerk_asks_even_before_the_tool_the_server_calls_read_only(self, notes):
        SCRIPT.replies[:] = [calls(("c1", "notes.read-note", {"name": "welcome"}))]
        run = start("mcp-probe.clerk")
        assert run.status == RunStatus.SUSPENDED
        assert Approval.objects.get(run=run).tool_key == "notes.read-note"


class TestFailuresAreData:
    def run_reader(self, *specs):
        SCRIPT.replies[:] = [calls(*specs), answer("carried on")]
        run = start("mcp-probe.reader")
        assert run.status == RunStatus.COMPLETED
        assert run.output["reply"] == "carried on"
        return run

    def test_an_is_error_result(self, notes):
        run = self.run_reader(("c1", "notes.read-note", {"name": "missing"}))
        error = tool_result(run, "c1")["content"]["error"]
        assert error["code"] == "MCP_TOOL_ERROR"
        assert "no note named 'missing'" in error["message"]
        assert error["retryable"] is True

    def test_arguments_the_server_schema_refuses_never_reach_it(self, notes):
        run = self.run_reader(("c1", "notes.read-note", {"nom": "welcome"}))
        error = tool_result(run, "c1")["content"]["error"]
        assert error["code"] == "INVALID_TOOL_INPUT"
        assert "'name' is a required property" in error["message"]
        assert not run.journal.filter(kind="tool.called").exists()

    def test_a_server_killed_mid_call_and_the_next_call_reconnects(self, notes):
        run = self.run_reader(
            ("c1", "notes.crash-server", {}), ("c2", "notes.read-note", {"name": "welcome"})
        )
        crashed = tool_result(run, "c1")["content"]["error"]
        assert crashed["code"] == "MCP_SERVER_UNAVAILABLE"
        assert crashed["retryable"] is True
        assert tool_result(run, "c2")["content"] == {
            "name": "welcome",
            "text": "Hello from the notes server.",
        }

    def test_a_field_the_server_schema_does_not_name_is_refused(self, notes):
        run = self.run_reader(("c1", "notes.read-note", {"name": "welcome", "as_admin": True}))
        error = tool_result(run, "c1")["content"]["error"]
        assert error["code"] == "INVALID_TOOL_INPUT"
        assert error["message"].endswith("/as_admin: unknown field (the fields are: name)")
        assert not run.journal.filter(kind="tool.called").exists()

    def test_kindgis_own_word_about_a_call_is_not_wrapped_as_outside_data(self, notes):
        run = self.run_reader(
            ("c1", "notes.read-note", {"nom": "welcome"}),
            ("c2", "notes.read-note", {"name": "missing"}),
            ("c3", "notes.crash-server", {}),
        )
        own, from_server, unreachable = (tool_result(run, call_id) for call_id in ("c1", "c2", "c3"))
        assert own["content"]["error"]["code"] == "INVALID_TOOL_INPUT"
        assert "outsideData" not in own
        assert unreachable["content"]["error"] == {
            "code": "MCP_SERVER_UNAVAILABLE",
            "message": "The MCP server notes could not be reached, or the connection to it broke.",
            "retryable": True,
            "recommendedAction": "Retry later, or tell the user the tool is unavailable.",
        }
        assert "outsideData" not in unreachable
        # what the server itself said, even an error, stays outside data
        assert from_server["content"]["error"]["code"] == "MCP_TOOL_ERROR"
        assert from_server["outsideData"] is True
        seen = {m["callId"]: str(m["content"]) for m in SCRIPT.requests[1].messages if m.get("callId")}
        assert "Untrusted content" not in seen["c1"]
        assert "Untrusted content" not in seen["c3"]
        assert "Untrusted content" in seen["c2"]

    def test_a_call_that_takes_too_long(self, notes):
        with override_settings(KINDGI_MCP_TIMEOUT_SECONDS=1):
            run = self.run_reader(("c1", "notes.slow-note", {"seconds": 5}))
        error = tool_result(run, "c1")["content"]["error"]
        assert error["code"] == "MCP_TIMEOUT"
        assert error["retryable"] is True

    def test_a_tool_the_server_removed_since_it_was_listed(self, notes):
        spec = spec_from_config(McpServer.objects.get(name="notes").config())
        POOL.call_tool(spec, "forget_tool", {"tool_name": "read_note"})
        run = self.run_reader(("c1", "notes.read-note", {"name": "welcome"}))
        error = tool_result(run, "c1")["content"]["error"]
        assert error["code"] == "MCP_TOOL_ERROR"
        assert "Unknown tool" in error["message"]


class TestTenants:
    def test_a_tenants_own_server_is_invisible_to_another_tenant(self, notes, notes_log, tmp_path):
        McpServer.objects.create(
            name="private-notes",
            tenant=default_tenant(),
            command_approved_by=superuser(),
            **{k: v for k, v in stdio_server("private-notes", tmp_path / "p.log").items() if k != "name"},
        )
        do_refresh_mcp_servers(["private-notes"])
        SCRIPT.replies[:] = [calls(("c1", "private-notes.read-note", {"name": "welcome"})), answer()]
        mine = start("mcp-probe.private")
        assert tool_result(mine, "c1")["content"]["name"] == "welcome"
        assert [spec.id for spec in SCRIPT.requests[0].tools][:1] == ["private-notes.crash-server"]

        SCRIPT.reset()
        SCRIPT.replies[:] = [calls(("c1", "private-notes.read-note", {"name": "welcome"})), answer()]
        theirs = check_start_run(
            tenant=other_tenant(),
            principal=principal(other_tenant()),
            agent_id="mcp-probe.private",
            input={"userMessage": "go"},
        )
        assert SCRIPT.requests[0].tools == ()
        assert tool_result(theirs, "c1")["content"]["error"]["code"] == "TOOL_NOT_ALLOWED"
        assert not theirs.journal.filter(kind="tool.called").exists()


class TestStreamableHttp:
    def test_listing_and_calling_with_a_header_read_from_the_environment(self, http_notes):
        server = {
            "name": "notes",
            "url": http_notes["url"],
            "headers": {"Authorization": "env:NOTES_AUTHORIZATION"},
        }
        with override_settings(
            KINDGI_PACKS=["packs.my_pack", "tests.pack_fixtures.probes", "tests.pack_fixtures.mcp_agents"],
            KINDGI_MCP_SERVERS=[server],
        ):
            (report,) = do_refresh_mcp_servers()
            assert report.answered, report.error
            assert report.created == 6
            # The secret stays in the environment: the row holds only its name.
            assert McpServer.objects.get(name="notes").headers == {"Authorization": "env:NOTES_AUTHORIZATION"}
            SCRIPT.replies[:] = [calls(("c1", "notes.write-note", {"name": "a", "text": "b"})), answer()]
            run = start("mcp-probe.reader")
        assert tool_result(run, "c1")["content"] == {"name": "a", "text": "b"}
        assert writes(http_notes["log"]) == ["a"]

    def test_a_wrong_token_is_a_server_that_does_not_answer(self, http_notes, monkeypatch):
        monkeypatch.setenv("NOTES_AUTHORIZATION", "Bearer wrong")
        server = {
            "name": "notes",
            "url": http_notes["url"],
            "headers": {"Authorization": "env:NOTES_AUTHORIZATION"},
        }
        with override_settings(KINDGI_MCP_SERVERS=[server]):
            (report,) = do_refresh_mcp_servers(timeout=5)
        assert not report.answered
        assert "wrong" not in report.error
        assert "s3cret" not in report.error


class TestReviewers:
    def test_the_approval_page_shows_where_the_tool_comes_from_and_its_claims_as_claims(self, notes):
        from tests.console.test_console import signed_in
        from tests.factories import reviewer

        SCRIPT.replies[:] = [calls(("c1", "notes.read-note", {"name": "welcome"}))]
        run = start("mcp-probe.clerk")
        page = html.unescape(
            signed_in(reviewer("ada")).get(f"/console/approvals/{run.approvals.get().pk}/").text
        )
        assert "the MCP server <code>notes</code>, as its tool <code>read_note</code>" in page
        assert "<code>readOnlyHint</code>: true" in page
        assert "(the server's word, not checked)" in page
        assert "external side effect" in page
        assert "no: it changes things" in page


class TestConnections:
    def test_one_connection_per_server_shared_by_threads_at_once(self, notes):
        from concurrent.futures import ThreadPoolExecutor

        spec = spec_from_config(McpServer.objects.get(name="notes").config())
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(lambda _: POOL.call_tool(spec, "server_pid", {}), range(16)))
        pids = {result.structured_content["result"] for result in results}
        assert len(pids) == 1
        assert all(not result.is_error for result in results)
