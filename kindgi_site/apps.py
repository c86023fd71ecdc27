from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class KindgiSiteConfig(AppConfig):
    """The project package, installed for its development commands."""

    name = "kindgi_site"
    verbose_name = "Kindgi site"

    def ready(self):
        from core.tracing import configure

        # Every process sets Django up (web, workers, the sweeper, commands): each turns traces
        # on here, before a request handler loads the middleware Django's instrumentation adds.
        configure()


class KindgiAdminConfig(admin_apps.AdminConfig):
    """Django's admin, with the site ``kindgi_site.admin_site`` says (named in INSTALLED_APPS)."""

    default = False
    default_site = "kindgi_site.admin_site.KindgiAdminSite"
