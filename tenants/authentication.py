from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed

from tenants.tokens import bearer_token, user_for_token


class BearerTokenAuthentication(BaseAuthentication):
    """``Authorization: Bearer kgi_…`` with a token from ``manage.py create_api_token``."""

    def authenticate(self, request):
        token = bearer_token(get_authorization_header(request).decode("latin-1"))
        if token is None:
            return None
        user = user_for_token(token)
        if user is None:
            raise AuthenticationFailed("the API token is not valid, or it was revoked")
        return user, token

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="kindgi"'
