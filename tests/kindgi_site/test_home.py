import pytest

pytestmark = pytest.mark.django_db


def test_the_home_page_summarises_the_catalog(client, django_assert_max_num_queries):
    with django_assert_max_num_queries(6):
        response = client.get("/")
    assert response.status_code == 200
    text = " ".join(response.text.split())
    assert "9 tools, 4 agents and 4 flows from acme-ops, kindgi-mail, my-pack." in text
    assert 'href="/admin/"' in response.text


def test_the_admin_asks_for_a_login(client):
    response = client.get("/admin/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_the_home_page_names_what_exists_and_promises_nothing_later(client):
    response = client.get("/")
    text = " ".join(response.text.split())
    for link in ('href="/console/queue/"', 'href="/api/docs/"', 'href="/api/schema/"', 'href="/admin/"'):
        assert link in response.text
    for page in ("/console/queue/", "/api/docs/", "/admin/"):
        assert client.get(page).status_code in (200, 302), page
    assert "later release" not in text
    assert "under construction" not in text


def test_loading_packs_that_are_loaded_says_the_catalog_is_up_to_date(capsys):
    from django.core.management import call_command

    call_command("load_packs")
    assert capsys.readouterr().out.strip() == (
        "Catalog up to date with the packs (acme-ops, kindgi-mail, my-pack): 9 tools, 4 agents, 4 flows"
    )
