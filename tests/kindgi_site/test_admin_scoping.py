"""The admin is no side door: a staff user of tenant B, with every permission of every model, sees,
opens, chooses and changes no row of tenant A in any registered model admin.

The test walks ``admin.site._registry``: a model admin added later is walked too. Which rows are
tenant A's is not asked of the admins: it is every row made while tenant A's world was built."""

from dataclasses import dataclass, field

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission
from django.db.models import Model
from django.forms import ModelChoiceField
from django.forms.models import model_to_dict
from django.test import Client
from django.urls import NoReverseMatch, reverse

from approvals.actions.decisions import check_complete_approval
from approvals.actions.rules import check_save_rule
from approvals.models import Approval, Webhook, WebhookDelivery
from connections.crypto import seal
from connections.models import App, Connection
from mail.models import Mailbox, MailMessage, MailRefusal
from runs.actions import check_start_run
from runs.schedules import check_save_schedule
from tenants.models import Tenant
from tenants.tokens import do_create_token
from tests.factories import member, reviewer
from tools.actions import check_set_override
from tools.models import Agent, McpServer, Tool

pytestmark = pytest.mark.django_db(transaction=True)
SYSTEM = {"acting_user": None, "surface": "system"}

# The packs' catalog, readable by every tenant's staff: no row of it is any tenant's.
SITE_CATALOG = {"tools.agent", "tools.flow"}


def build_world(slug: str) -> Tenant:
    """A tenant with a row of every model the admin shows that can belong to a tenant, made the
    application's way where there is one."""
    tenant = Tenant.objects.create(slug=slug, name=slug.title())
    owner = reviewer(f"{slug}-ada", role="admin", tenant=tenant)
    member(f"{slug}-pat", tenant=tenant)
    do_create_token(user=owner, name=f"{slug} token")
    ask = check_start_run(
        tenant=tenant, principal=owner, agent_id="acme-ops.status-agent", input={"userMessage": f"{slug} up"}
    )
    decided = check_start_run(
        tenant=tenant, principal=owner, agent_id="acme-ops.status-agent", input={"userMessage": f"{slug} ok"}
    )
    check_complete_approval(
        approval_id=Approval.objects.get(run=decided).pk,
        acting_user=reviewer(f"{slug}-rev", role="admin", tenant=tenant),
        decision="approve",
    )
    assert ask.status == "suspended"
    check_save_rule(
        tenant=tenant, fields={"name": f"{slug} rule", "gate": "always_ask"}, reviewers=[owner], **SYSTEM
    )
    webhook = Webhook.objects.create(tenant=tenant, url=f"https://{slug}.example/hook", secret="x" * 20)
    WebhookDelivery.objects.create(webhook=webhook, event="approval.created", payload={})
    check_save_schedule(
        tenant=tenant,
        fields={
            "name": f"{slug} schedule",
            "flow_key": "my-pack.check-order",
            "input": {"orderId": "ord_1001"},
            "cron": "0 9 * * *",
            "owner": owner,
        },
        **SYSTEM,
    )
    app = App.objects.create(
        name=f"{slug}-tracker",
        tenant=tenant,
        authorize_url="https://apps.example/authorize",
        token_url="https://apps.example/token",
        client_id="kindgi",
        api_base_url="https://apps.example/api",
    )
    Connection.objects.create(app=app, owner=owner, tenant=tenant, status="active", access_token=seal("t"))
    mailbox = Mailbox.objects.create(
        tenant=tenant, address=f"help@{slug}.test", owner=owner, agent_key="kindgi-mail.responder"
    )
    MailMessage.objects.create(
        tenant=tenant, mailbox=mailbox, direction="in", message_id=f"<{slug}@x>", from_address="a@x"
    )
    MailRefusal.objects.create(mailbox=mailbox, reason="too-big", sender="a@x", smtp_code=552)
    server = McpServer.objects.create(
        name=f"{slug}-notes", tenant=tenant, transport="http", url="https://mcp.example/"
    )
    Tool.objects.create(
        key=f"{slug}-notes.read", version="1.0.0", pack=f"{slug}-notes", origin="mcp", mcp_server=server
    )
    agent = Agent.objects.get(key="acme-ops.status-agent")
    check_set_override(
        agent=agent, tenant=tenant, tool_id="acme-ops.post-update", gate="never_ask", condition="", **SYSTEM
    )
    return tenant


def keys(model: type[Model]) -> set:
    return set(model._default_manager.values_list("pk", flat=True))


@dataclass
class World:
    theirs: dict[type[Model], set] = field(default_factory=dict)  # tenant A's rows, by model
    ours: dict[type[Model], set] = field(default_factory=dict)  # tenant B's


@pytest.fixture
def world() -> World:
    models = list(admin.site._registry)
    before = {model: keys(model) for model in models}
    build_world("bravo")
    after_b = {model: keys(model) for model in models}
    build_world("alpha")
    after_a = {model: keys(model) for model in models}
    return World(
        theirs={model: after_a[model] - after_b[model] for model in models},
        ours={model: after_b[model] - before[model] for model in models},
    )


@pytest.fixture
def staff_of_b() -> Client:
    bea = member("bea", tenant=Tenant.objects.get(slug="bravo"), tenant_admin=True)
    bea.is_staff = True
    bea.save()
    bea.user_permissions.set(Permission.objects.all())
    browser = Client()
    browser.force_login(bea)
    return browser


def url(model, view: str, *args) -> str | None:
    try:
        return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)
    except NoReverseMatch:
        return None


def choices_in(response) -> list[tuple[str, ModelChoiceField]]:
    """Every choice field of the page's form and of its inlines' forms, by name."""
    context = response.context
    forms = [context["adminform"].form] if "adminform" in context else []
    for inline in context.get("inline_admin_formsets", []):
        forms += [*inline.formset.forms, inline.formset.empty_form]
    return [
        (name, form_field)
        for form in forms
        for name, form_field in form.fields.items()
        if isinstance(form_field, ModelChoiceField)
    ]


def offered_of_a(response, world: World) -> list[str]:
    found = []
    for name, form_field in choices_in(response):
        model = form_field.queryset.model
        if shown := set(form_field.queryset.values_list("pk", flat=True)) & world.theirs.get(model, set()):
            found.append(f"{name}: {model._meta.label} {sorted(map(str, shown))}")
    return found


def test_no_model_admin_shows_or_offers_or_changes_tenant_as_rows(world, staff_of_b):
    problems = []
    for model, model_admin in admin.site._registry.items():
        label, theirs = model._meta.label_lower, world.theirs[model]
        listing = staff_of_b.get(url(model, "changelist"))
        if not theirs:
            if label not in SITE_CATALOG and listing.status_code != 403:
                problems.append(
                    f"{label}: no row of tenant A was made, yet another tenant's staff may open it"
                )
            continue
        if listing.status_code == 200:
            if "alpha" in listing.text.lower():
                problems.append(f"{label}: its list names tenant A (alpha)")
            if shown := {row.pk for row in listing.context["cl"].queryset} & theirs:
                problems.append(f"{label}: lists tenant A's {sorted(map(str, shown))}")
            problems += filters_offer(label, listing.context["cl"], world)
        elif listing.status_code != 403:
            problems.append(f"{label}: its list answered {listing.status_code}")
        for pk in theirs:
            for view in ("change", "delete", "history"):
                if (address := url(model, view, pk)) and staff_of_b.get(address).status_code == 200:
                    problems.append(f"{label}: its {view} page opens tenant A's {pk}")
        pages = [url(model, "add")] + [
            url(model, "change", pk) for pk in sorted(world.ours[model], key=str)[:1]
        ]
        for address in filter(None, pages):
            page = staff_of_b.get(address)
            if page.status_code == 200:
                problems += [f"{label}: {address} offers {offered}" for offered in offered_of_a(page, world)]
                if "alpha" in page.text.lower():
                    problems.append(f"{label}: {address} names tenant A (alpha)")
        problems += actions_leave_alone(model, model_admin, theirs, staff_of_b)
        problems += autocomplete_offers(model, model_admin, world, staff_of_b)
    assert problems == [], "\n".join(problems)


def filters_offer(label: str, changelist, world: World) -> list[str]:
    """A list's filters by a relation name none of tenant A's rows."""
    problems = []
    for spec in changelist.filter_specs:
        related = getattr(getattr(spec, "field", None), "related_model", None)
        choices = getattr(spec, "lookup_choices", None) or ()
        if related is None:
            continue
        offered = {pk for pk, _ in choices} & {*world.theirs.get(related, set())}
        if offered:
            problems.append(
                f"{label}: its filter by {spec.field.name} offers tenant A's {sorted(map(str, offered))}"
            )
    return problems


def actions_leave_alone(model, model_admin, theirs: set, browser: Client) -> list[str]:
    """Each action, posted with tenant A's rows (and its confirmation), changes none of them."""
    rows = {row.pk: model_to_dict(row) for row in model._default_manager.filter(pk__in=theirs)}
    problems = []
    for name in model_admin.get_actions(_request_of(browser)):
        body = {
            "action": name,
            "_selected_action": [str(pk) for pk in theirs],
            "post": "yes",
            "decide": "1",
            "rationale": "by another tenant's staff",
        }
        browser.post(url(model, "changelist"), body)
    after = {row.pk: model_to_dict(row) for row in model._default_manager.filter(pk__in=theirs)}
    if after != rows:
        changed = sorted(str(pk) for pk in rows if after.get(pk) != rows[pk])
        problems.append(f"{model._meta.label_lower}: an action changed tenant A's {changed}")
    return problems


def autocomplete_offers(model, model_admin, world: World, browser: Client) -> list[str]:
    problems = []
    for name in model_admin.autocomplete_fields:
        remote = model._meta.get_field(name).remote_field.model
        found = browser.get(
            "/admin/autocomplete/",
            {
                "app_label": model._meta.app_label,
                "model_name": model._meta.model_name,
                "field_name": name,
                "term": "",
            },
        )
        if found.status_code != 200:
            continue
        ids = {str(item["id"]) for item in found.json()["results"]}
        if shown := ids & {str(pk) for pk in world.theirs.get(remote, set())}:
            problems.append(
                f"{model._meta.label_lower}.{name}: autocomplete offers tenant A's {sorted(shown)}"
            )
    return problems


def _request_of(browser: Client):
    """A request of the signed-in staff user, for asking an admin which actions it offers."""
    from django.contrib.auth import get_user_model
    from django.test import RequestFactory

    request = RequestFactory().get("/admin/")
    request.user = get_user_model().objects.get(username="bea")
    return request


def test_a_superuser_sees_every_tenants_rows(world, admin_client):
    """The scoping narrows what other staff see, not what the site's superusers see."""
    for model in admin.site._registry:
        theirs = world.theirs[model]
        if not theirs:
            continue
        listing = admin_client.get(url(model, "changelist"))
        assert listing.status_code == 200, model
        assert theirs <= {row.pk for row in listing.context["cl"].queryset}, model


def test_the_api_token_form_offers_only_the_staff_users_tenant(world, staff_of_b):
    """The reproduction: tenant B's staff minted a token for tenant A's superuser."""
    from django.contrib.auth import get_user_model

    root = get_user_model().objects.create_superuser("root-of-alpha", password="a-long-test-password")
    from tenants.models import Membership

    Membership.objects.create(user=root, tenant=Tenant.objects.get(slug="alpha"))
    form = staff_of_b.get(reverse("admin:tenants_apitoken_add")).context["adminform"].form
    offered = set(form.fields["user"].queryset.values_list("username", flat=True))
    assert "root-of-alpha" not in offered
    assert "bravo-ada" in offered
    made = staff_of_b.post(reverse("admin:tenants_apitoken_add"), {"user": root.pk, "name": "mine now"})
    assert made.status_code == 200  # the form again, with its error
    assert "Select a valid choice" in made.text
    assert not root.api_tokens.exists()


def test_the_autocomplete_refuses_what_it_cannot_search_and_never_fails(world, staff_of_b):
    """Every relation of every model the admin shows, forward or reverse, named as the field to
    search by: an answer or a refusal, never an error of the server."""
    for model in admin.site._registry:
        for relation in model._meta.get_fields():
            if not relation.is_relation:
                continue
            query = {"app_label": model._meta.app_label, "model_name": model._meta.model_name}
            answer = staff_of_b.get("/admin/autocomplete/", query | {"field_name": relation.name, "term": ""})
            assert answer.status_code in (200, 403, 404), (
                model._meta.label,
                relation.name,
                answer.status_code,
            )
