from django.apps import AppConfig


class KindgiSiteConfig(AppConfig):
    """The project package, installed for its development commands."""

    name = "kindgi_site"
    verbose_name = "Kindgi site"
