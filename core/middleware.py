"""What every form post goes through: the same scrubbing step as the API's bodies
(``core.secrets``), so that a provider key typed into a console or admin form is never stored."""

from core.secrets import provider_secrets, scrub_secrets


class ScrubSecretsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method == "POST" and (secrets := provider_secrets()):
            posted = request.POST
            if any(secret in value for secret in secrets for values in posted.lists() for value in values[1]):
                scrubbed = posted.copy()
                for name, values in posted.lists():
                    scrubbed.setlist(name, [scrub_secrets(value) for value in values])
                scrubbed._mutable = False
                request.POST = scrubbed
        return self.get_response(request)
