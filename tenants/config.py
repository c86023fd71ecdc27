"""A tenant's configuration version, and what each process keeps compiled while it holds.

The version is one number that moves whenever the tenant's approval rules, the gate overrides
that apply to its runs, or its webhook change: in the change's own transaction, whichever way
the change is made (signals on those models). A process reads the version with the rows it
reads anyway (a run's claim reads the run with its tenant) and serves what it compiled at that
version from ``cached``; a change made in any process moves the number, so every process
compiles again before it next serves that tenant. Nothing else needs to be told.
"""

import threading
from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import Any

from django.db.models import F

from tenants.models import Tenant

MAX_ENTRIES = 4096

_lock = threading.Lock()
_entries: OrderedDict[tuple, tuple[int, Any]] = OrderedDict()
# How many times each kind (a key's first item) was compiled rather than found: for tests.
compiled: Counter = Counter()


def bump_config_version(tenant_id=None) -> None:
    """Move ``tenant_id``'s version on; with None (a site-wide override), every tenant's."""
    tenants = Tenant.objects.all() if tenant_id is None else Tenant.objects.filter(pk=tenant_id)
    tenants.update(config_version=F("config_version") + 1)


def config_changed(sender, instance, **kwargs) -> None:
    """A signal receiver for the models a tenant's configuration is made of (with ``tenant_id``)."""
    if kwargs.get("raw"):
        return  # loading fixtures
    bump_config_version(instance.tenant_id)


def config_members_changed(sender, instance, action: str, **kwargs) -> None:
    """For a rule's named reviewers (a many-to-many): the rule's tenant, whichever side changed."""
    if action not in ("post_add", "post_remove", "post_clear"):
        return
    tenant_id = getattr(instance, "tenant_id", None)
    if tenant_id is None and hasattr(instance, "membership"):
        tenant_id = instance.membership.tenant_id  # the user's side of the relation
    bump_config_version(tenant_id)  # None (a user of no tenant): every tenant's, to be safe


def cached(key: tuple, version: int | None, compile: Callable[[], Any]) -> Any:
    """What ``compile()`` made for ``key`` at ``version``; compiled again once the version moved.
    With no version (nothing to trust), compiled every time. At most ``MAX_ENTRIES`` are kept,
    the least recently used leaving first."""
    if version is None:
        return compile()
    with _lock:
        found = _entries.get(key)
        if found is not None and found[0] == version:
            _entries.move_to_end(key)
            return found[1]
    value = compile()
    with _lock:
        compiled[key[0]] += 1
        _entries[key] = (version, value)
        _entries.move_to_end(key)
        while len(_entries) > MAX_ENTRIES:
            _entries.popitem(last=False)
    return value


def forget() -> None:
    """Drop everything, and count again from nothing (for tests)."""
    with _lock:
        _entries.clear()
        compiled.clear()
