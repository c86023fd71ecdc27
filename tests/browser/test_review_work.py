"""A reviewer's work in Chromium: live updates that keep it, decisions that show who took them,
a page that notices a decision taken elsewhere, and a console that fits a phone."""

import itertools

import httpx
import pytest
from playwright.sync_api import expect

from approvals.models import Approval
from tenants.tokens import do_create_token
from tests.browser.test_console_in_a_browser import (
    PASSWORD,
    decide_by_api,
    sign_in,
    start_status_run,
    wait_for_the_live_socket,
)
from tests.factories import principal, reviewer

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_live_arrival_keeps_the_ticked_boxes_and_the_typed_rationale(server, page, screenshot):
    ada = reviewer("ada")
    for index in range(3):
        start_status_run(server, ada, f"Update {index}")
    sign_in(page, server, "ada")
    boxes = page.locator("input[name=approval]")
    expect(boxes).to_have_count(3)
    for box in boxes.all():
        box.check()
    page.fill("input[name=rationale]", "Half typed")
    wait_for_the_live_socket(page)

    start_status_run(server, ada, "A fourth arrives")
    expect(page.locator("tr.approval-row")).to_have_count(4)
    expect(page.locator("tr.approval-row").last).to_contain_text("A fourth arrives")  # oldest first
    checked = page.locator("input[name=approval]:checked")
    expect(checked).to_have_count(3)
    expect(page.locator("input[name=rationale]")).to_have_value("Half typed")
    screenshot(page, "queue-live-kept")

    # One decided elsewhere leaves; the others stay ticked.
    decide_by_api(server, ada, Approval.objects.get(run__input__userMessage="Update 1").pk)
    expect(page.locator("tr.approval-row")).to_have_count(3)
    expect(page.locator("input[name=approval]:checked")).to_have_count(2)
    expect(page.locator("input[name=rationale]")).to_have_value("Half typed")


def test_a_decision_taken_elsewhere_appears_on_an_open_page_with_its_record(server, page, screenshot):
    ada, bob = reviewer("ada"), reviewer("bob", role="senior")
    run = start_status_run(server, ada, "Checkout is back to normal.")
    approval = Approval.objects.get(run_id=run["id"])
    sign_in(page, server, "ada")
    page.goto(f"{server.url}/console/approvals/{approval.pk}/")
    expect(page.locator("#approve")).to_be_visible()
    wait_for_the_live_socket(page)

    # Bob decides through the API, as his CLI would; Ada's page must notice.
    token = do_create_token(user=bob)[1]
    response = httpx.post(
        f"{server.url}/api/v1/approvals/{approval.pk}/complete",
        json={
            "decision": "approve",
            "rationale": "Checked with on-call",
            "arguments": {"message": "All clear."},
        },
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    # Without a reload: the offer is gone, and the record says who, how and why.
    expect(page.locator("#approve")).to_have_count(0)
    record = page.locator(".decision-record")
    expect(record).to_contain_text("Bob (senior)")
    expect(record).to_contain_text("Checked with on-call")
    expect(page.locator("#approval-status")).to_have_text("approved")
    expect(page.locator("table.diff del")).to_have_text("Checkout is back to normal.")
    expect(page.locator("table.diff ins")).to_have_text("All clear.")
    screenshot(page, "approval-decided")
    page.reload()
    expect(page.locator(".decision-record")).to_contain_text("Bob (senior)")


def test_the_console_fits_a_phone(server, browser, screenshot):
    ada = reviewer("ada")
    start_status_run(server, ada, "A long message " * 8)
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    sign_in(page, server, "ada")
    expect(page.locator("tr.approval-row")).to_have_count(1)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the queue is {width}px wide on a 390px screen"
    screenshot(page, "queue-phone")
    context.close()


def test_cancelling_a_run_asks_first_and_the_site_has_an_icon(server, page):
    ada = reviewer("ada")
    run = start_status_run(server, ada, "Maybe later.")
    sign_in(page, server, "ada")
    page.goto(f"{server.url}/console/runs/{run['id']}/")
    expect(page.locator("#confirm-cancel")).not_to_be_visible()
    page.click("#cancel summary")
    page.click("#confirm-cancel")
    expect(page.locator("#run-status")).to_have_text("cancelled")
    icon = httpx.get(f"{server.url}/favicon.ico", timeout=10)
    assert (icon.status_code, icon.headers["content-type"]) == (200, "image/svg+xml")


# Every drawn box of the timeline, as Chromium laid it out, in the SVG's own units.
TIMELINE_BOXES = """() => {
  const svg = document.querySelector("svg.timeline");
  const box = (element) => { const b = element.getBBox(); return [b.x, b.y, b.x + b.width, b.y + b.height]; };
  return {
    left: Number(svg.dataset.plotLeft), right: Number(svg.dataset.plotRight),
    width: svg.viewBox.baseVal.width, height: svg.viewBox.baseVal.height,
    texts: [...svg.querySelectorAll("text")].map((t) => ({text: t.textContent, box: box(t)})),
    bars: [...svg.querySelectorAll(".tl-bar rect")].map(box),
  };
}"""


def test_the_timeline_of_a_flow_has_an_axis_its_step_run_nested_and_no_label_over_another(
    server, page, screenshot
):
    ada = reviewer("ada")
    token = do_create_token(user=ada)[1]
    response = httpx.post(
        f"{server.url}/api/v1/runs",
        json={"flowId": "acme-ops.status-flow", "input": {"userMessage": "Checkout is back to normal."}},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert response.status_code == 201, response.text
    flow = response.json()
    sign_in(page, server, "ada")
    page.goto(f"{server.url}/console/runs/{flow['id']}/")
    timeline = page.locator("svg.timeline")
    # Suspended: the wait runs to now, and the caption says the drawing is still going.
    expect(timeline).to_contain_text("waiting for step respond")
    expect(page.locator(".timeline-caption")).to_contain_text("so far")
    decide_by_api(server, ada, Approval.objects.get(run__parent_id=flow["id"]).pk)
    expect(page.locator("#run-status")).to_have_text("completed")
    expect(timeline).to_contain_text("waited for step respond: completed")
    expect(timeline).to_contain_text("step respond: acme-ops.status-agent (completed)")
    expect(timeline).to_contain_text("approved by Ada")
    expect(timeline).to_contain_text("acme-ops.post-update")
    screenshot(page, "timeline")

    drawn = page.evaluate(TIMELINE_BOXES)
    assert [t["text"] for t in drawn["texts"]][:1] == ["0"]  # the axis starts at 0
    for left, top, right, bottom in drawn["bars"]:
        assert drawn["left"] - 0.5 <= left <= right <= drawn["right"] + 0.5
        assert 0 <= top <= bottom <= drawn["height"]
    for text in drawn["texts"]:
        left, top, right, bottom = text["box"]
        assert 0 <= left <= right <= drawn["width"], text
    for first, second in itertools.combinations(drawn["texts"], 2):
        a, b = first["box"], second["box"]
        assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (first, second)


def test_the_admin_approves_with_a_confirmation_through_the_same_door(server, page, screenshot):
    from tests.approvals.test_admin import staff

    ada = staff(reviewer("ada"))
    for index in range(2):
        start_status_run(server, ada, f"Admin update {index}")
    page.goto(f"{server.url}/admin/login/?next=/admin/approvals/approval/")
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", PASSWORD)
    page.click("input[type=submit]")
    rows = page.locator("#result_list tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("acts outside Kindgi, on external:status-page")
    expect(rows.first).to_contain_text('{"message": "Admin update 1"}')
    screenshot(page, "admin-approvals")
    page.locator("#action-toggle").check()
    page.select_option("select[name=action]", "approve_selected")
    page.click("button[name=index]")
    expect(page.locator("#decide-list tbody tr")).to_have_count(2)
    expect(page.locator("#decide-list")).to_contain_text('{"message": "Admin update 0"}')
    page.fill("textarea[name=rationale]", "Both checked")
    screenshot(page, "admin-approve-confirm")
    page.click("input[type=submit][value='Approve 2']")
    expect(page.locator(".messagelist")).to_contain_text("Approved 2 approval(s).")
    assert set(Approval.objects.values_list("status", flat=True)) == {"approved"}


def test_insight_shows_the_figures_and_the_distribution(server, page, screenshot):
    from datetime import timedelta

    from tests.console.test_insight import recorded

    reviewer("ada")
    recorded(8, took=timedelta(seconds=40))
    recorded(3, took=timedelta(minutes=20), edited=True)
    recorded(2, took=timedelta(hours=6), status="rejected", tool="acme-ops.delete", age=timedelta(hours=8))
    sign_in(page, server, "ada")
    page.get_by_role("link", name="Insight").click()
    expect(page.locator("#median")).to_have_text("40 s")
    expect(page.locator("#p90")).to_have_text("6 h")  # the 12th of 13
    expect(page.locator("#reject-rate")).to_have_text("15%")
    columns = page.locator("#distribution g.column")
    expect(columns).to_have_count(7)
    expect(columns.first.locator("text.count")).to_have_text("8")
    screenshot(page, "insight")
    # The tallest column fits the chart, and no bucket's words run into the next one's.
    boxes = page.evaluate(
        """() => [...document.querySelectorAll('#distribution text.bucket')].map((t) => {
             const b = t.getBBox(); return [b.x, b.x + b.width]; })"""
    )
    assert all(right < next_left for (_, right), (next_left, _) in itertools.pairwise(boxes))


def test_a_tenant_admin_tries_a_rule_on_past_calls_then_saves_it(server, page, screenshot):
    from approvals.models import ApprovalRule
    from runs.actions import check_start_run
    from tests.factories import default_tenant

    tia = reviewer("tia")
    tia.membership.is_tenant_admin = True
    tia.membership.save()
    for text in ("Called back", "Refund sent"):
        check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            flow_id="my-pack.note-order",
            input={"orderId": "ord_1001", "text": text},
        )
    sign_in(page, server, "tia")
    page.get_by_role("link", name="Rules").click()
    page.fill("input[name=name]", "Refunds need a senior")
    page.fill("input[name=tool_pattern]", "my-pack.add-order-note")
    page.fill("input[name=condition]", '/text == "Refund sent"')
    page.select_option("select[name=gate]", "always_ask")
    page.select_option("select[name=required_role]", "senior")
    page.click("#simulate")
    expect(page.locator("#changed")).to_have_text("1 would go another way")
    expect(page.locator("#changes")).to_contain_text('"text": "Refund sent"')  # key order: the database's
    expect(page.locator("#changes")).not_to_contain_text("Called back")
    screenshot(page, "rules-simulated")
    assert not ApprovalRule.objects.exists()
    page.click("#save")
    expect(page.locator(".flash, .messages, [role=status]").first).to_contain_text("Saved the rule")
    rule = ApprovalRule.objects.get()
    assert (rule.condition, rule.required_role) == ('/text == "Refund sent"', "senior")


def test_a_bulk_decision_through_the_api_refuses_one_and_the_queue_shows_the_others_gone(
    server, page, screenshot
):
    ada = reviewer("ada")
    for index in range(3):
        start_status_run(server, ada, f"Bulk {index}")
    sign_in(page, server, "ada")
    rows = page.locator("tr.approval-row")
    expect(rows).to_have_count(3)
    wait_for_the_live_socket(page)
    ids = [str(a.pk) for a in Approval.objects.order_by("created_at")]
    response = httpx.post(
        f"{server.url}/api/v1/approvals/decisions",
        json={
            "decisions": [
                {"approvalId": ids[0], "decision": "approve"},
                {"approvalId": ids[1], "decision": "reject"},  # no rationale: refused, on its own
                {"approvalId": ids[2], "decision": "reject", "rationale": "Not today"},
            ]
        },
        headers={"Authorization": f"Bearer {do_create_token(user=ada)[1]}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["status"] for r in results] == ["decided", "refused", "decided"]
    assert results[1]["httpStatus"] == 400
    expect(rows).to_have_count(1)  # live: the two decided left the queue
    expect(rows.first).to_contain_text("Bulk 1")
    screenshot(page, "queue-after-bulk-api")
