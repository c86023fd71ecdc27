"""Tenants (the site's), API tokens (a tenant's), and Django's own users, groups and task
results, each scoped as ``core.admin`` says: this app's admin loads after theirs, so it registers
them again, scoped."""

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User
from django_tasks_db.admin import DBTaskResultAdmin
from django_tasks_db.models import DBTaskResult

from audit.actions import do_delete_setting, do_save_setting
from audit.models import Surface
from core.admin import SiteWideAdminMixin, TenantScopedAdminMixin
from core.errors import DomainError
from tenants.authority import ConfigurationAdminMixin
from tenants.memberships import MEMBERSHIP, TENANT
from tenants.models import ApiToken, Membership, Tenant
from tenants.tokens import check_create_token, check_revoke_token


class MembershipInline(TenantScopedAdminMixin, admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Tenant)
class TenantAdmin(SiteWideAdminMixin, TenantScopedAdminMixin, admin.ModelAdmin):
    """Tenants and who belongs to them, and who is their admin: the site's, for superusers. Each
    change is an entry of the tenant's audit chain (``tenants.memberships``)."""

    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]

    def save_model(self, request, obj, form, change):
        do_save_setting(obj, kind=TENANT, tenant=obj, acting_user=request.user, surface=Surface.ADMIN)

    def save_formset(self, request, form, formset, change):
        if formset.model is not Membership:
            return super().save_formset(request, form, formset, change)
        tenant = form.instance
        changed = formset.save(commit=False)  # what changed, for the admin's history too
        for membership in changed:
            do_save_setting(
                membership, kind=MEMBERSHIP, tenant=tenant, acting_user=request.user, surface=Surface.ADMIN
            )
        for membership in formset.deleted_objects:
            do_delete_setting(
                membership, kind=MEMBERSHIP, tenant=tenant, acting_user=request.user, surface=Surface.ADMIN
            )
        return None


class ApiTokenForm(forms.ModelForm):
    # Who is making it (set by ApiTokenAdmin.get_form).
    acting_user = None

    class Meta:
        model = ApiToken
        fields = ["user", "name"]

    def clean(self):
        """Checked as ``check_create_token`` checks it, so the form says what is wrong: the token
        is a service account's, whose runs stand on whoever makes it, or the maker's own."""
        data = super().clean()
        user = data.get("user")
        membership = getattr(user, "membership", None)
        if user is None or membership is None:
            return data
        if not membership.is_service_account and user != self.acting_user:
            self.add_error(
                "user", "A person's token is theirs alone to make: choose a service account, or yourself."
            )
        elif membership.is_service_account:
            mine = getattr(self.acting_user, "membership", None)
            if mine is None or mine.tenant_id != membership.tenant_id or mine.is_service_account:
                self.add_error(
                    "user",
                    f"A service's token answers for its runs to whoever makes it: a person of "
                    f"{membership.tenant} (or `manage.py create_api_token --service … --responsible USER`).",
                )
        return data


@admin.register(ApiToken)
class ApiTokenAdmin(ConfigurationAdminMixin, admin.ModelAdmin):
    """Create a token here (it is shown once, in a message) or revoke it; the hash never shows.
    A tenant admin makes service accounts' tokens (their runs stand on whoever makes them) and
    their own, and revokes any of their tenant's, through the same doors as the commands, each an
    audit entry. Nothing else of a token changes once it is made."""

    form = ApiTokenForm
    list_display = ["__str__", "user", "name", "responsible", "created_at", "last_used_at", "revoked_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter)]
    list_select_related = ["user", "responsible"]
    search_fields = ["prefix", "user__username", "name"]
    actions = ["revoke"]
    RECORDED = ["prefix", "created_at", "last_used_at", "revoked_at"]

    def get_fields(self, request, obj=None):
        return ["user", "name"] if obj is None else ["user", "name", "responsible", *self.RECORDED]

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else ["user", "name", "responsible", *self.RECORDED]

    def has_delete_permission(self, request, obj=None):
        return False  # revoke instead: the record stays for the audit

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        form.acting_user = request.user
        return form

    def save_model(self, request, obj, form, change):
        if change:
            return  # nothing of a token changes once it is made (every field is read-only)
        record, token = check_create_token(
            acting_user=request.user, surface=Surface.ADMIN, user=obj.user, name=obj.name
        )
        obj.pk = record.pk
        messages.warning(request, f"The new token is {token} — copy it now: it will not be shown again.")

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        revoked = 0
        for record in queryset.select_related("user__membership__tenant"):
            try:
                check_revoke_token(record, acting_user=request.user, surface=Surface.ADMIN)
                revoked += 1
            except DomainError as error:
                messages.error(request, f"{record}: {error}")
        messages.success(request, f"Revoked {revoked} token(s).")


admin.site.unregister(User)
admin.site.unregister(Group)
admin.site.unregister(DBTaskResult)


@admin.register(User)
class TenantUserAdmin(TenantScopedAdminMixin, UserAdmin):
    """People and service accounts: a tenant's staff see their own tenant's, to look at and to
    choose in forms; accounts, passwords and site permissions are a superuser's to change."""

    def has_add_permission(self, request, *args):
        return request.user.is_superuser and super().has_add_permission(request, *args)

    def has_change_permission(self, request, obj=None):
        return request.user.is_superuser and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser and super().has_delete_permission(request, obj)


@admin.register(Group)
class SiteGroupAdmin(SiteWideAdminMixin, GroupAdmin):
    pass


@admin.register(DBTaskResult)
class SiteTaskResultAdmin(SiteWideAdminMixin, DBTaskResultAdmin):
    pass
