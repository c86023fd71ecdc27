import pytest
from rest_framework.test import APIClient

from tenants.tokens import do_create_token
from tests.factories import member, other_tenant, reviewer


def client_for(user) -> APIClient:
    _, token = do_create_token(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


@pytest.fixture
def ada(db):
    """A standard reviewer of the default tenant."""
    return reviewer("ada")


@pytest.fixture
def api(ada) -> APIClient:
    return client_for(ada)


@pytest.fixture
def outsider_api(db) -> APIClient:
    """An admin reviewer of another tenant."""
    return client_for(reviewer("eve", role="admin", tenant=other_tenant()))


@pytest.fixture
def member_api(db) -> APIClient:
    """A member of the default tenant who is not a reviewer."""
    return client_for(member("carl"))
