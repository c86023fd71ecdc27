"""`kindgi schedules`: make one, see it in a table, be told what is wrong, delete it."""

import json

import pytest

from runs.models import Schedule
from tests.cli.conftest import parsed

pytestmark = pytest.mark.django_db(transaction=True)

SPEC = {
    "name": "orders at 9",
    "flowId": "my-pack.check-order",
    "input": {"orderId": "ord_1001"},
    "cron": "0 9 * * 1-5",
}


def test_make_list_and_delete_a_schedule(cli):
    code, out, _ = cli("schedules", "create", f"--spec={json.dumps(SPEC)}")
    assert code == 0
    made = parsed(out)
    assert (made["owner"], made["cron"], made["enabled"]) == ("ada", "0 9 * * 1-5", True)

    code, out, _ = cli("schedules", "list", "--output=table")
    assert code == 0
    header, row = out.splitlines()[:2]
    assert header.split() == ["id", "name", "agentId", "flowId", "cron", "owner", "enabled", "nextRunAt"]
    assert made["id"] in row
    assert "0 9 * * 1-5" in row

    code, _, err = cli("schedules", "create", f"--spec={json.dumps(SPEC | {'name': 'x', 'cron': '9am'})}")
    assert code == 1
    assert "/cron: '9am' has 1 fields, not 5" in err
    assert Schedule.objects.count() == 1

    code, _, err = cli("schedules", "delete", made["id"])
    assert code == 0
    assert f"Deleted the schedule {made['id']}." in err
    assert not Schedule.objects.exists()
