"""How the OpenAPI schema describes API-token authentication."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "tenants.authentication.BearerTokenAuthentication"
    name = "bearer"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "kgi_<prefix>_<secret>",
            "description": "An API token from `manage.py create_api_token` or `kindgi dev`.",
        }
