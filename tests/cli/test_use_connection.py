"""`kindgi runs start --use-connection APP:USERNAME`: a service's run names whose connection it uses."""

from connections.models import App
from tenants.tokens import do_create_token, do_service_account
from tests.cli.conftest import parsed
from tests.factories import default_tenant, principal


def test_a_services_run_names_whose_connection_each_app_uses(cli, monkeypatch):
    App.objects.create(
        name="tracker",
        tenant=default_tenant(),
        authorize_url="https://apps.example/authorize",
        token_url="https://apps.example/token",
        client_id="kindgi",
        api_base_url="https://apps.example/api",
    )
    service, _ = do_service_account(name="nightly", tenant=default_tenant())
    monkeypatch.setenv("KINDGI_TOKEN", do_create_token(user=service, responsible=principal())[1])
    code, out, err = cli(
        "runs",
        "start",
        "--flow=my-pack.check-order",
        '--input={"orderId": "ord_1001"}',
        "--use-connection=tracker:ada",
    )
    assert code == 0, err
    run = parsed(out)
    assert (run["trigger"], run["service"], run["startedBy"]) == ("service", "nightly", None)
    assert run["connections"] == {"tracker": "ada"}

    code, out, err = cli(
        "runs",
        "start",
        "--flow=my-pack.check-order",
        '--input={"orderId": "ord_1001"}',
        "--use-connection=nowhere:ada",
    )
    assert code == 1
    assert "/connections/nowhere: there is no app 'nowhere' here (apps: mailbox, tracker)" in err


def test_use_connection_takes_an_app_and_a_username(cli):
    code, out, err = cli(
        "runs",
        "start",
        "--flow=my-pack.check-order",
        '--input={"orderId": "ord_1001"}',
        "--use-connection=tracker",
    )
    assert code == 2
    assert "--use-connection takes APP:USERNAME, like github:ada; not 'tracker'" in err
    assert out == ""
