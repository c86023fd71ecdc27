"""What the apps' admins share: showing JSON, admins that only show, and the tenant scoping
every model admin uses, so that the admin is a surface like the API and no side door.

A superuser sees and chooses the whole site. Any other staff user sees, opens, chooses and acts
on only their own tenant's rows, in every list, form, foreign-key and many-to-many choice, inline,
action and autocomplete; a site-wide model is for superusers only. Which rows of a model are a
tenant's is said once, here (``TENANT_ROWS``), and a model it does not name offers a non-superuser
nothing: a model admin added later that forgets to scope shows nothing rather than everything,
and the registry test (``tests/kindgi_site/test_admin_scoping.py``) names it.
"""

import json
from collections.abc import Callable

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.utils.html import format_html


def pretty_json(value) -> str:
    """JSON, indented and escaped, in a <pre>."""
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False))


class ReadOnlyAdminMixin:
    """For records the application writes (runs, journals, decisions): look, never touch."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def _tenant_field(tenant) -> Q:
    return Q(tenant=tenant)


# Which rows of each model belong to a tenant, by the model's label. The site's own rows (the
# packs' catalog, the servers and apps from settings) belong to no tenant: a tenant's staff may
# read the catalog, but not another tenant's tools.
TENANT_ROWS: dict[str, Callable[[object], Q]] = {
    "auth.user": lambda tenant: Q(membership__tenant=tenant),
    "tenants.tenant": lambda tenant: Q(pk=tenant.pk),
    "tenants.membership": _tenant_field,
    "tenants.apitoken": lambda tenant: Q(user__membership__tenant=tenant),
    "tools.tool": lambda tenant: (
        Q(mcp_server__isnull=True) | Q(mcp_server__tenant__isnull=True) | Q(mcp_server__tenant=tenant)
    ),
    "tools.agent": lambda tenant: Q(),
    "tools.flow": lambda tenant: Q(),
    "tools.agentgateoverride": _tenant_field,
    "tools.mcpserver": _tenant_field,
    "runs.run": _tenant_field,
    "runs.journalentry": lambda tenant: Q(run__tenant=tenant),
    "runs.schedule": _tenant_field,
    "approvals.reviewer": _tenant_field,
    "approvals.approval": _tenant_field,
    "approvals.decision": _tenant_field,
    "approvals.approvalrule": _tenant_field,
    "approvals.webhook": _tenant_field,
    "approvals.webhookdelivery": lambda tenant: Q(webhook__tenant=tenant),
    "connections.app": _tenant_field,
    "connections.connection": _tenant_field,
    "mail.mailbox": _tenant_field,
    "mail.mailmessage": _tenant_field,
    "mail.mailrefusal": lambda tenant: Q(mailbox__tenant=tenant),
    "audit.auditentry": _tenant_field,
    "audit.chainhead": _tenant_field,
}


def tenant_of(user):
    """The tenant whose rows ``user`` may see in the admin, or None (a superuser sees all; a
    staff user of no tenant, nothing)."""
    membership = getattr(user, "membership", None)
    return membership.tenant if membership is not None else None


def rows_for(user, rows: QuerySet) -> QuerySet:
    """Those of ``rows`` that ``user`` may see and choose in the admin."""
    if user.is_superuser:
        return rows
    tenant = tenant_of(user)
    scope = TENANT_ROWS.get(rows.model._meta.label_lower)
    if tenant is None or scope is None:
        return rows.none()
    return rows.filter(scope(tenant))


class TenantScopedAdminMixin:
    """For every model admin and inline of a tenant's data: lists, objects, choices and actions
    are the signed-in staff user's tenant's (``rows_for``); a superuser's, the site's."""

    def get_queryset(self, request):
        return rows_for(request.user, super().get_queryset(request))

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        return _scoped(field, request.user)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        field = super().formfield_for_manytomany(db_field, request, **kwargs)
        return _scoped(field, request.user)

    def get_list_filter(self, request):
        """A list filter on a relation offers only the related rows the list shows (never another
        tenant's, by name); a filter by tenant, which has one value for them, is left out."""
        filters = super().get_list_filter(request)
        if request.user.is_superuser:
            return filters
        scoped = []
        for entry in filters:
            name = entry if isinstance(entry, str) else entry[0] if isinstance(entry, tuple | list) else None
            field = _relation(self.model, name) if isinstance(name, str) else None
            if field is None:
                scoped.append(entry)
            elif field.related_model._meta.label_lower != "tenants.tenant":
                scoped.append((name, admin.RelatedOnlyFieldListFilter))
        return scoped

    def get_formset(self, request, obj=None, **kwargs):
        """For an inline: its forms' hidden ids choose among the scoped rows too, so that a posted
        id of another tenant's row names nothing."""
        formset = super().get_formset(request, obj, **kwargs)
        user = request.user

        class ScopedFormSet(formset):
            def add_fields(self, form, index):
                super().add_fields(form, index)
                _scoped(form.fields.get(self._pk_field.name), user)

        return ScopedFormSet


def _relation(model, path: str):
    """The relation ``path`` (``tenant``, ``mailbox__tenant``) of ``model`` ends at, or None."""
    from django.core.exceptions import FieldDoesNotExist

    field = None
    for part in path.split("__"):
        try:
            field = model._meta.get_field(part)
        except FieldDoesNotExist:
            return None
        if not field.is_relation:
            return None
        model = field.related_model
    return field


def _scoped(field, user):
    if field is not None and getattr(field, "queryset", None) is not None:
        field.queryset = rows_for(user, field.queryset)
    return field


class SiteWideAdminMixin:
    """For what belongs to the whole site (tenants, groups, task results): superusers only,
    whatever permissions another staff user was given (and a superuser only what the admin
    itself allows)."""

    def has_module_permission(self, request):
        return request.user.is_superuser and super().has_module_permission(request)

    def has_view_permission(self, request, obj=None):
        return request.user.is_superuser and super().has_view_permission(request, obj)

    def has_add_permission(self, request, *args):
        return request.user.is_superuser and super().has_add_permission(request, *args)

    def has_change_permission(self, request, obj=None):
        return request.user.is_superuser and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser and super().has_delete_permission(request, obj)
