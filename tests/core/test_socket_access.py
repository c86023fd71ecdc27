"""Nothing stays open once access is taken away: sockets close within seconds (4401 when the
credentials are gone, 4403 when the tenant is no longer theirs); paths that name nothing close
cleanly with 4404; token clients need send no Origin."""

import time

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from kindgi_site.asgi import application
from runs.actions import check_start_run
from tenants.models import ApiToken, Membership
from tenants.tokens import do_create_token, do_revoke_token
from tests.factories import default_tenant, member, other_tenant, principal

pytestmark = pytest.mark.django_db(transaction=True)
ORIGIN = (b"origin", b"http://127.0.0.1")


def bearer(token):
    return (b"authorization", f"Bearer {token}".encode())


def a_run():
    return check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="my-pack.check-order",
        input={"orderId": "ord_1001"},
    )


def close_code_after(path, headers, take_away) -> tuple[int, float]:
    """Connect, take access away, and return the close code and how long it took to come."""

    async def scenario():
        socket = WebsocketCommunicator(application, path, headers=headers)
        connected, _ = await socket.connect()
        assert connected
        await sync_to_async(take_away)()
        taken = time.monotonic()
        while True:
            output = await socket.receive_output(timeout=5)
            if output["type"] == "websocket.close":
                return output["code"], time.monotonic() - taken

    return async_to_sync(scenario)()


@pytest.mark.parametrize("path", ["/ws/approvals/", "run"])
@pytest.mark.parametrize(
    ("what", "take_away", "code"),
    [
        ("the token is revoked", lambda user: do_revoke_token(ApiToken.objects.get(user=user)), 4401),
        (
            "the user is deactivated",
            lambda user: get_user_model().objects.filter(pk=user.pk).update(is_active=False),
            4401,
        ),
        ("the membership is removed", lambda user: Membership.objects.filter(user=user).delete(), 4403),
    ],
)
def test_a_token_socket_closes_within_seconds_once_access_is_gone(path, what, take_away, code):
    ada = member("ada")
    token = do_create_token(user=ada)[1]
    if path == "run":
        path = f"/ws/runs/{a_run().pk}/"
    closed, seconds = close_code_after(path, [ORIGIN, bearer(token)], lambda: take_away(ada))
    assert closed == code, what
    assert seconds < 5, what


def test_a_session_socket_closes_once_its_user_signs_out():
    ada = member("ada")
    browser = Client()
    browser.force_login(ada)
    cookie = (b"cookie", f"sessionid={browser.cookies['sessionid'].value}".encode())
    closed, seconds = close_code_after("/ws/approvals/", [ORIGIN, cookie], browser.logout)
    assert closed == 4401
    assert seconds < 5


@pytest.mark.parametrize("path", ["/ws/runs/abc/", "/ws/runs/", "/ws/nothing/here/"])
def test_a_path_that_names_nothing_closes_cleanly_with_4404(path):
    token = do_create_token(user=member("ada"))[1]

    async def scenario():
        socket = WebsocketCommunicator(application, path, headers=[ORIGIN, bearer(token)])
        connected, _ = await socket.connect()
        assert connected
        output = await socket.receive_output(timeout=5)
        assert output == {"type": "websocket.close", "code": 4404}

    async_to_sync(scenario)()


def close_at_connect(path, headers) -> dict:
    async def scenario():
        socket = WebsocketCommunicator(application, path, headers=headers)
        connected, _ = await socket.connect()
        assert connected, "refused at the handshake: the client sees an HTTP 403 and no reason"
        return await socket.receive_output(timeout=5)

    return async_to_sync(scenario)()


@pytest.mark.parametrize("whose", ["no run at all", "another tenant's run"])
def test_a_run_the_caller_may_not_see_closes_with_4404_whether_or_not_it_exists(whose):
    """As docs/api.md says: a path that names nothing closes with 4404. Another tenant's run is
    nothing to this caller, and its close says no more than a run that does not exist."""
    run_id = "00000000-0000-4000-8000-000000000000" if whose == "no run at all" else a_run().pk
    token = do_create_token(user=member("eve", tenant=other_tenant()))[1]
    output = close_at_connect(f"/ws/runs/{run_id}/", [ORIGIN, bearer(token)])
    assert output == {"type": "websocket.close", "code": 4404}


@pytest.mark.parametrize("route", ["/ws/approvals/", "a run", "no run at all", "/ws/runs/abc/"])
@pytest.mark.parametrize(
    ("who", "code"), [("no credentials", 4401), ("a revoked token", 4401), ("a user of no tenant", 4403)]
)
def test_a_caller_who_may_see_nothing_is_told_why_at_connect(route, who, code):
    path = {
        "a run": f"/ws/runs/{a_run().pk}/",
        "no run at all": "/ws/runs/00000000-0000-4000-8000-000000000000/",
    }.get(route, route)
    headers = [ORIGIN]
    if who == "a revoked token":
        record, token = do_create_token(user=member("ada"))
        do_revoke_token(record)
        headers.append(bearer(token))
    elif who == "a user of no tenant":
        headers.append(bearer(do_create_token(user=get_user_model().objects.create_user("loner"))[1]))
    assert close_at_connect(path, headers) == {"type": "websocket.close", "code": code}


def test_a_run_id_in_upper_case_is_the_same_run():
    token = do_create_token(user=member("ada"))[1]
    path = f"/ws/runs/{str(a_run().pk).upper()}/"

    async def scenario():
        socket = WebsocketCommunicator(application, path, headers=[ORIGIN, bearer(token)])
        assert (await socket.connect())[0]
        while (await socket.receive_json_from(timeout=5))["type"] != "replay.done":
            pass
        await socket.disconnect()

    async_to_sync(scenario)()


def test_a_token_client_may_send_no_origin_and_a_cookie_may_not():
    ada = member("ada")
    token = do_create_token(user=ada)[1]
    browser = Client()
    browser.force_login(ada)
    cookie = (b"cookie", f"sessionid={browser.cookies['sessionid'].value}".encode())

    async def connects(headers) -> bool:
        socket = WebsocketCommunicator(application, "/ws/approvals/", headers=headers)
        connected, _ = await socket.connect()
        await socket.disconnect()
        return connected

    assert async_to_sync(connects)([bearer(token)])
    assert not async_to_sync(connects)([cookie])
    assert not async_to_sync(connects)([(b"origin", b"https://evil.example"), bearer(token)])
