"""Django's admin site, answering every request it cannot serve as a refusal, not an error."""

from django.contrib import admin
from django.contrib.admin.views.autocomplete import AutocompleteJsonView
from django.core.exceptions import PermissionDenied


class RefusingAutocompleteJsonView(AutocompleteJsonView):
    def process_request(self, request):
        """Django reads a reverse relation named as ``field_name`` as a field it can search by,
        and fails with an error of the server: such a field is refused, as an unknown one is."""
        term, model_admin, source_field, to_field_name = super().process_request(request)
        if not hasattr(source_field, "get_limit_choices_to"):
            raise PermissionDenied
        return term, model_admin, source_field, to_field_name


class KindgiAdminSite(admin.AdminSite):
    def autocomplete_view(self, request):
        return RefusingAutocompleteJsonView.as_view(admin_site=self)(request)
