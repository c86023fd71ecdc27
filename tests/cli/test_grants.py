"""`kindgi grants`: give one, see it in a table, be told what is wrong, revoke it."""

import json

import pytest

from approvals.models import Grant, Reviewer
from tests.cli.conftest import parsed

pytestmark = pytest.mark.django_db(transaction=True)

SPEC = {
    "toolPattern": "acme-ops.post-update",
    "scope": "principal",
    "principal": "ada",
    "maxCalls": 3,
    "forSeconds": 7200,
}


def test_give_list_and_revoke_a_grant(cli, user):
    Reviewer.objects.create(user=user, tenant=user.membership.tenant, role="admin", display_name="Ada")
    code, out, _ = cli("grants", "create", f"--spec={json.dumps(SPEC)}")
    assert code == 0
    made = parsed(out)
    assert (made["granter"], made["status"], made["uses"]) == ("ada", "active", 0)

    code, out, _ = cli("grants", "list", "--output=table")
    assert code == 0
    header, row = out.splitlines()[:2]
    assert header.split() == [
        "id",
        "granter",
        "toolPattern",
        "principal",
        "agentId",
        "uses",
        "maxCalls",
        "status",
        "expiresAt",
    ]
    assert "acme-ops.post-update" in row

    code, _, err = cli("grants", "create", f"--spec={json.dumps(SPEC | {'forSeconds': 100_000})}")
    assert code == 1
    assert "/forSeconds: a whole number of seconds from 1 to 86,400 (KINDGI_GRANT_MAX_SECONDS)" in err
    assert Grant.objects.count() == 1

    code, out, _ = cli("grants", "revoke", str(made["id"]))
    assert (code, parsed(out)["status"]) == (0, "revoked")


def test_allow_goes_with_one_approval(cli):
    code, _, err = cli("approvals", "complete", "a", "b", "--decision=approve", '--allow={"forSeconds": 60}')
    assert code == 2
    assert "--allow gives a grant with one approval" in err
