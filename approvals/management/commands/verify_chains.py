from django.core.management.base import BaseCommand, CommandError

from approvals.verification import verify_tenant
from tenants.models import Tenant


class Command(BaseCommand):
    help = (
        "Walk each tenant's chains, its decisions and its audit entries, and check each against its head "
        "and every decided approval against its decision. Names the first problem (an entry changed, or "
        "removed from the middle or the end, a decided approval without its decision, a head that does not "
        "match) and exits 1; exits 0 only when everything holds. Prints each tenant's heads, for an outside "
        "system to keep."
    )

    def add_arguments(self, parser):
        parser.add_argument("--tenant", help="Only this tenant (its slug).")

    def handle(self, *args, tenant: str | None, **options):
        tenants = Tenant.objects.order_by("slug")
        if tenant is not None:
            tenants = tenants.filter(slug=tenant)
            if not tenants.exists():
                raise CommandError(f"there is no tenant {tenant!r}")
        problems = []
        for each in tenants:
            found = verify_tenant(each)
            heads = ", ".join(
                f"{chain} #{sequence} {hash}" for chain, (sequence, hash) in sorted(found.heads.items())
            )
            if found.problem is None:
                self.stdout.write(f"{found.slug}: the chains hold; heads: {heads}")
            else:
                problems.append(f"{found.slug}: {found.problem}")
                self.stderr.write(f"{found.slug}: {found.problem}; heads as kept: {heads}")
        if problems:
            raise CommandError(
                f"the chains of {len(problems)} tenant(s) do not hold; the first: {problems[0]}"
            )
