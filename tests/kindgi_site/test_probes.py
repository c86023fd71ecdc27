import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db


def test_healthz_says_the_process_is_up(client):
    response = client.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


def test_readyz_checks_the_database_and_the_channel_layer(client):
    response = client.get("/readyz")
    assert (response.status_code, response.json()) == (
        200,
        {"status": "ok", "database": "ok", "channelLayer": "ok"},
    )


def test_readyz_names_what_is_down(client):
    from channels.layers import channel_layers

    unreachable = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]},
        }
    }
    with override_settings(CHANNEL_LAYERS=unreachable):
        channel_layers.backends.clear()
        response = client.get("/readyz")
    channel_layers.backends.clear()
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"
    assert response.json()["database"] == "ok"
    assert response.json()["channelLayer"].startswith("failing: ")
