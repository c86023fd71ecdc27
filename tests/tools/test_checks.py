from django.core.checks import Error, Warning, run_checks
from django.test import override_settings

from tools.checks import check_mcp_servers, check_packs


def test_the_sample_packs_raise_nothing():
    assert check_packs() == []


@override_settings(KINDGI_PACKS=["tests.pack_fixtures.contradicting"])
def test_w001_names_each_tool_and_contradicting_effect():
    messages = check_packs()
    assert [(type(m), m.id, m.obj) for m in messages] == [
        (Warning, "kindgi.W001", "fixture.sneaky"),
        (Warning, "kindgi.W001", "fixture.sneaky"),
    ]
    assert messages[0].msg == (
        "tool fixture.sneaky@0.1.0 says mutating=False but declares a 'writes' effect on 'db:notes'."
    )
    assert messages[1].msg == (
        "tool fixture.sneaky@0.1.0 says mutating=False but declares a 'emits-event' effect on 'bus:notes'."
    )
    assert "treated as mutating" in messages[0].hint


@override_settings(KINDGI_PACKS=["tests.pack_fixtures.contradicting"])
def test_the_check_runs_with_django_checks():
    assert {m.id for m in run_checks(tags=["kindgi"])} == {"kindgi.W001"}


@override_settings(KINDGI_PACKS=["tests.pack_fixtures.unknown_tool", "tests.pack_fixtures.no_pack"])
def test_e001_reports_every_definition_error():
    messages = check_packs()
    assert all(isinstance(m, Error) and m.id == "kindgi.E001" for m in messages)
    assert [m.msg for m in messages] == [
        "pack module 'tests.pack_fixtures.no_pack' does not define `pack = define_pack(...)`",
        "agent fixture.agent@0.1.0: tools[1]: references unknown tool 'fixture.gone'",
    ]


@override_settings(KINDGI_PACKS="packs.my_pack")
def test_e002_when_the_setting_is_not_a_list():
    [message] = check_packs()
    assert message.id == "kindgi.E002"
    assert "KINDGI_PACKS must be a list of Python module paths, not 'packs.my_pack'" in message.msg


@override_settings(KINDGI_MCP_SERVERS=[{"name": "my-pack", "command": ["python", "server.py"]}])
def test_e003_an_mcp_server_may_not_take_a_packs_name():
    (message,) = check_mcp_servers()
    assert message.id == "kindgi.E003"
    assert message.msg == (
        "KINDGI_MCP_SERVERS: server 'my-pack': name 'my-pack' is a pack's: "
        "an MCP server's tools would share its ids"
    )


@override_settings(
    KINDGI_MCP_SERVERS=[{"name": "files", "command": ["python"], "url": "http://127.0.0.1:9/mcp"}]
)
def test_e003_a_server_is_reached_one_way():
    (message,) = check_mcp_servers()
    assert "give either command (stdio) or url (streamable HTTP), not both" in message.msg


@override_settings(KINDGI_MCP_SERVERS=[{"name": "files", "comand": ["python"]}])
def test_e003_names_an_unknown_field():
    (message,) = check_mcp_servers()
    assert "unknown field(s) comand" in message.msg


@override_settings(
    KINDGI_MCP_SERVERS=[
        {"name": "files", "command": ["python", "server.py"], "env": {}},
        {
            "name": "tracker",
            "url": "http://127.0.0.1:9000/mcp",
            "headers": {"Authorization": "env:TRACKER_TOKEN"},
        },
    ]
)
def test_the_readmes_example_is_right():
    assert check_mcp_servers() == []
