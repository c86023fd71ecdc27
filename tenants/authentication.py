from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed

from tenants.tokens import active_token, bearer_token


class BearerTokenAuthentication(BaseAuthentication):
    """``Authorization: Bearer kgi_…`` with a token from ``manage.py create_api_token``."""

    def authenticate(self, request):
        token = bearer_token(get_authorization_header(request).decode("latin-1"))
        if token is None:
            return None
        record = active_token(token)
        if record is None:
            raise AuthenticationFailed("the API token is not valid, or it was revoked")
        # ``request.auth`` is the token's record: a service account's names whom it acts for.
        return record.user, record

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="kindgi"'
