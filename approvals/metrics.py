"""What Prometheus reads about approvals, from the database when scraped (the same figures from
every web process): pending approvals by tenant, and how long approvals waited for a decision."""

from collections.abc import Iterator
from datetime import timedelta

from django.db.models import Case, CharField, Count, DurationField, ExpressionWrapper, F, Q, Sum, Value, When
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.utils import floatToGoString

from approvals.models import Approval, ApprovalStatus, Decision

# Upper bounds in seconds: from a reviewer at the console to one who answers the next day.
DECISION_BUCKETS = (5, 15, 30, 60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600, 24 * 3600, 3 * 24 * 3600)


class ApprovalsCollector:
    def collect(self) -> Iterator[Metric]:
        yield self._pending()
        yield self._time_to_decision()

    def _pending(self) -> Metric:
        pending = GaugeMetricFamily(
            "kindgi_approvals_pending", "Approvals waiting for a decision, by tenant.", labels=["tenant"]
        )
        rows = (
            Approval.objects.filter(status=ApprovalStatus.PENDING)
            .order_by()
            .values_list("tenant__slug")
            .annotate(count=Count("pk"))
        )
        for tenant, count in rows:
            pending.add_metric([tenant], count)
        return pending

    def _time_to_decision(self) -> Metric:
        """One aggregate query: a count under each bucket's bound, by how the approval ended
        (approved, rejected, or expired with no one deciding)."""
        histogram = HistogramMetricFamily(
            "kindgi_approval_time_to_decision_seconds",
            "Seconds from an approval's creation to its decision.",
            labels=["outcome"],
        )
        waited = ExpressionWrapper(F("decided_at") - F("approval__created_at"), output_field=DurationField())
        outcome = Case(
            When(approval__status=ApprovalStatus.EXPIRED, then=Value("expired")),
            default=F("decision"),
            output_field=CharField(),
        )
        under = {
            f"le_{index}": Count("pk", filter=Q(waited__lte=timedelta(seconds=bound)))
            for index, bound in enumerate(DECISION_BUCKETS)
        }
        rows = (
            # The decisions that settled an approval: one that needed two approvals counts once.
            Decision.objects.filter(settles__isnull=False)
            .order_by()
            .annotate(waited=waited, outcome=outcome)
            .values("outcome")
            .annotate(total=Count("pk"), waited_sum=Sum("waited"), **under)
        )
        for row in rows:
            buckets = [
                (floatToGoString(bound), row[f"le_{index}"]) for index, bound in enumerate(DECISION_BUCKETS)
            ]
            buckets.append(("+Inf", row["total"]))
            waited_sum = row["waited_sum"] or timedelta(0)
            histogram.add_metric([row["outcome"]], buckets, sum_value=waited_sum.total_seconds())
        return histogram
