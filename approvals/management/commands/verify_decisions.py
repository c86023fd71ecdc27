from django.core.management.base import BaseCommand, CommandError

from approvals.chain import first_break
from approvals.models import Decision
from tenants.models import Tenant


class Command(BaseCommand):
    help = (
        "Walk each tenant's chain of decisions and name the first decision whose hash does not match "
        "its content or does not follow the one before it (changed, or removed, behind Kindgi's back)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--tenant", help="Only this tenant (its slug).")

    def handle(self, *args, tenant: str | None, **options):
        tenants = Tenant.objects.order_by("slug")
        if tenant is not None:
            tenants = tenants.filter(slug=tenant)
            if not tenants.exists():
                raise CommandError(f"there is no tenant {tenant!r}")
        broken = 0
        for each in tenants:
            decisions = Decision.objects.filter(tenant=each).order_by("sequence").iterator()
            found = first_break(decisions)
            if found is None:
                count = Decision.objects.filter(tenant=each).count()
                self.stdout.write(f"{each.slug}: {count} decision(s), the chain holds")
                continue
            broken += 1
            self.stderr.write(
                f"{each.slug}: decision {found.decision_id} (#{found.sequence}): {found.reason}"
            )
        if broken:
            raise CommandError(f"the decision chain of {broken} tenant(s) does not hold; see above")
