import pytest

from approvals.actions.reviewers import check_register_reviewer
from approvals.exceptions import ApprovalInputError, DecisionForbiddenError
from approvals.models import Reviewer
from tenants.exceptions import NotAMemberError
from tests.factories import member

pytestmark = pytest.mark.django_db


def test_registering_and_registering_again_updates_the_record():
    ada = member("ada", tenant_admin=True)
    first = check_register_reviewer(
        acting_user=ada, role="standard", display_name="Ada Lovelace", surface="api"
    )
    assert (first.role, first.display_name, first.tenant.slug) == ("standard", "Ada Lovelace", "acme")
    again = check_register_reviewer(
        acting_user=ada, role="standard", display_name="  Ada King ", surface="api"
    )
    assert again.pk == first.pk
    assert Reviewer.objects.get().display_name == "Ada King"


def test_an_unknown_role_is_refused_with_the_valid_ones():
    with pytest.raises(ApprovalInputError) as error:
        check_register_reviewer(acting_user=member("ada"), role="boss", display_name="", surface="api")
    assert error.value.errors == [
        "/role: 'boss' is not a reviewer role (valid roles: standard, senior, admin)",
        "/displayName: a display name is required",
    ]
    assert not Reviewer.objects.exists()


def test_only_a_tenant_admin_registers_a_reviewer():
    """Who decides the tenant's approvals is its configuration: a member does not make themselves
    a reviewer, at any role (DESIGN §6)."""
    for role in ("standard", "senior"):
        with pytest.raises(DecisionForbiddenError, match="only a tenant admin registers a reviewer"):
            check_register_reviewer(
                acting_user=member(f"ada-{role}"), role=role, display_name="Ada", surface="api"
            )
    assert not Reviewer.objects.exists()
    boss = check_register_reviewer(
        acting_user=member("bea", tenant_admin=True), role="admin", display_name="Bea", surface="api"
    )
    assert boss.role == "admin"


def test_roles_come_from_settings(settings):
    settings.KINDGI_REVIEWER_ROLES = ["junior", "lead"]
    assert (
        check_register_reviewer(
            acting_user=member("ada", tenant_admin=True), role="junior", display_name="Ada", surface="api"
        ).role
        == "junior"
    )
    with pytest.raises(ApprovalInputError, match="valid roles: junior, lead"):
        check_register_reviewer(acting_user=member("bob"), role="standard", display_name="Bob", surface="api")


def test_a_user_outside_any_tenant_cannot_register():
    from django.contrib.auth import get_user_model

    loner = get_user_model().objects.create_user(username="loner")
    with pytest.raises(NotAMemberError):
        check_register_reviewer(acting_user=loner, role="standard", display_name="Loner", surface="api")


def test_registering_again_keeps_a_higher_role_and_may_rename():
    from tests.factories import reviewer

    boss = reviewer("ada", role="admin")
    again = check_register_reviewer(acting_user=boss, role="standard", display_name="Ada K.", surface="api")
    assert (again.role, again.display_name) == ("admin", "Ada K.")
    assert again.registration_note == (
        "changed your display name from 'Ada' to 'Ada K.'; "
        "kept your role 'admin': a reviewer's role is a tenant admin's to change"
    )
    senior = reviewer("sam", role="senior")
    renamed = check_register_reviewer(acting_user=senior, role="senior", display_name="Samuel", surface="api")
    assert (renamed.role, renamed.display_name, renamed.registration_note) == (
        "senior",
        "Samuel",
        "changed your display name from 'Sam' to 'Samuel'",
    )
    with pytest.raises(DecisionForbiddenError):
        check_register_reviewer(acting_user=senior, role="admin", display_name="Samuel", surface="api")
    assert Reviewer.objects.get(user=senior).role == "senior"


def test_the_api_says_when_the_role_was_kept(db):
    from tests.api.conftest import client_for
    from tests.factories import reviewer

    api = client_for(reviewer("ada", role="admin"))
    response = api.post(
        "/api/v1/reviewers/register", {"role": "standard", "displayName": "Ada"}, format="json"
    ).json()
    assert (response["role"], response["note"]) == (
        "admin",
        "kept your role 'admin': a reviewer's role is a tenant admin's to change",
    )


def test_registering_again_changes_only_what_the_spec_names_and_says_what_changed(db):
    """The development admin is a reviewer already: the quickstart's register names what it
    changes, and a spec without a display name keeps theirs."""
    from tests.api.conftest import client_for
    from tests.factories import member

    admin = member("admin", tenant_admin=True)
    check_register_reviewer(acting_user=admin, role="admin", display_name="Development admin", surface="api")
    api = client_for(admin)

    def register(spec):
        return api.post("/api/v1/reviewers/register", spec, format="json")

    kept = register({"role": "admin"}).json()
    assert (kept["displayName"], kept["role"], kept["note"]) == (
        "Development admin",
        "admin",
        "already registered as 'Development admin' with the role 'admin': nothing changed",
    )
    changed = register({"role": "standard", "displayName": "Ada Lovelace"}).json()
    assert (changed["displayName"], changed["role"], changed["note"]) == (
        "Ada Lovelace",
        "standard",
        "changed your display name from 'Development admin' to 'Ada Lovelace'; "
        "changed your role from 'admin' to 'standard'",
    )
    renamed_only = register({"displayName": "Ada"}).json()
    assert (renamed_only["displayName"], renamed_only["role"]) == ("Ada", "standard")

    # A new reviewer names both; nothing is written when they do not.
    newcomer = client_for(member("nina", tenant_admin=True))
    refused = newcomer.post("/api/v1/reviewers/register", {"displayName": "Nina"}, format="json")
    assert refused.status_code == 400
    assert refused.json()["error"]["details"]["errors"] == ["/role: a new reviewer names a role"]
    refused = newcomer.post("/api/v1/reviewers/register", {"role": "standard"}, format="json")
    assert refused.json()["error"]["details"]["errors"] == ["/displayName: a display name is required"]
    assert not Reviewer.objects.filter(user__username="nina").exists()
