import pytest

pytestmark = pytest.mark.django_db


def test_the_home_page_summarises_the_catalog(client, django_assert_max_num_queries):
    with django_assert_max_num_queries(6):
        response = client.get("/")
    assert response.status_code == 200
    text = " ".join(response.text.split())
    assert "5 tools, 2 agents and 4 flows from acme-ops, my-pack." in text
    assert 'href="/admin/"' in response.text


def test_the_admin_asks_for_a_login(client):
    response = client.get("/admin/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")
