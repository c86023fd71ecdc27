"""The console's Audit page: a tenant's configuration changes, for those who may make them."""

import json
from datetime import UTC, datetime, time

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.dateparse import parse_date

from audit.models import AuditEntry, Surface
from audit.selectors import audit_actors, audit_list_for_tenant, audit_target_types, chain_heads
from core.api.permissions import is_tenant_admin

PAGE = 50


@login_required
def audit_page(request: HttpRequest) -> HttpResponse:
    membership = getattr(request.user, "membership", None)
    if not is_tenant_admin(request.user):
        return render(request, "console/tenant_admins_only.html", {"membership": membership}, status=403)
    tenant = membership.tenant
    chosen = {name: request.GET.get(name, "") for name in ("what", "actor", "surface", "since")}
    since = _day(chosen["since"])
    if since is None:
        chosen["since"] = ""  # not a day (2026-02-30): no filter, as the form shows
    entries = audit_list_for_tenant(
        tenant,
        action=chosen["what"] or None,
        actor=chosen["actor"] or None,
        surface=chosen["surface"] if chosen["surface"] in Surface.values else None,
        since=datetime.combine(since, time(), tzinfo=UTC) if since else None,
    )
    page = Paginator(entries, PAGE).get_page(request.GET.get("page"))
    query = "&".join(f"{name}={value}" for name, value in chosen.items() if value)
    context = {
        "page": page,
        "changes": [(entry, changes_of(entry)) for entry in page],
        "chosen": chosen,
        "query": query,
        "targets": audit_target_types(tenant),
        "actors": audit_actors(tenant),
        "surfaces": Surface.choices,
        "heads": chain_heads(tenant),
    }
    return render(request, "console/audit.html", context)


def _day(text: str):
    try:
        return parse_date(text) if text else None
    except ValueError:  # well formed, but no such day
        return None


def changes_of(entry: AuditEntry) -> list[tuple[str, str, str]]:
    """What an entry changed, field by field: (field, before, after) as shown, "" for absent. For
    a setting made or deleted, each field it had (but those empty); else each field that changed."""
    before, after = entry.before or {}, entry.after or {}
    if not isinstance(before, dict) or not isinstance(after, dict):
        return [("", _shown(entry.before), _shown(entry.after))]
    whole = entry.before is None or entry.after is None
    return [
        (
            field,
            _shown(before[field]) if field in before else "",
            _shown(after[field]) if field in after else "",
        )
        for field in sorted(set(before) | set(after))
        if before.get(field) != after.get(field)
        and not (whole and not (before.get(field) or after.get(field)))
    ]


def _shown(value) -> str:
    """A value as the page shows it: text as it is (quoted when empty, so it shows), anything else
    as JSON."""
    if isinstance(value, str):
        return value or '""'
    return json.dumps(value, ensure_ascii=False)
