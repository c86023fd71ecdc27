"""A reviewer registering again while a tenant admin demotes or removes them: the admin's change
holds, whichever commits first (PostgreSQL, two real connections)."""

import contextlib
import threading

import pytest
from django.db import connections

from approvals.actions import reviewers
from approvals.actions.reviewers import check_register_reviewer, check_remove_reviewer, check_save_reviewer
from approvals.exceptions import DecisionForbiddenError
from approvals.models import Reviewer
from tests.factories import default_tenant, member, reviewer

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _admin_acts_between_read_and_write(monkeypatch, admin_change):
    """Run ``admin_change`` on another connection after the re-registration has read the
    reviewer and before it writes, the interleaving a lost update needs. A locked read makes the
    admin wait for the registration to commit, so their change lands last; the wait is bounded so
    an unlocked read shows as the old role written back, not as a hang."""
    real_refusal = reviewers.configure_refusal

    def admin_meanwhile(*args, **kwargs):
        def act():
            try:
                admin_change()
            finally:
                connections.close_all()

        admin = threading.Thread(target=act)
        admin.start()
        admin.join(timeout=1.5)
        admin_meanwhile.thread = admin
        return real_refusal(*args, **kwargs)

    monkeypatch.setattr(reviewers, "configure_refusal", admin_meanwhile)
    return admin_meanwhile


def test_a_demotion_during_a_re_registration_is_not_undone(monkeypatch):
    rita = reviewer("rita", role="senior")
    boss = member("boss", tenant_admin=True)
    meanwhile = _admin_acts_between_read_and_write(
        monkeypatch,
        lambda: check_save_reviewer(
            tenant=default_tenant(),
            user=rita,
            role="standard",
            display_name="Rita",
            acting_user=boss,
            surface="admin",
        ),
    )

    check_register_reviewer(acting_user=rita, display_name="Rita Levi", surface="api")
    meanwhile.thread.join(timeout=10)

    assert Reviewer.objects.get(user=rita).role == "standard"


def test_a_removal_during_a_re_registration_is_not_undone(monkeypatch):
    rita = reviewer("rita", role="senior")
    boss = member("boss", tenant_admin=True)
    meanwhile = _admin_acts_between_read_and_write(
        monkeypatch,
        lambda: check_remove_reviewer(Reviewer.objects.get(user=rita), acting_user=boss, surface="admin"),
    )

    # Removed before the registration read, it is refused, which is as right.
    with contextlib.suppress(DecisionForbiddenError):
        check_register_reviewer(acting_user=rita, display_name="Rita Levi", surface="api")
    meanwhile.thread.join(timeout=10)

    assert not Reviewer.objects.filter(user=rita).exists()
