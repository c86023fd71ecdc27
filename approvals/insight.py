"""How a tenant's people decide: time to decision, by tool and by agent, reject and edit rates,
long waits. Read-only and bounded: a fixed number of queries, each an aggregate the database
computes, however many approvals the tenant has."""

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, QuerySet, Value
from django.db.models.functions import Coalesce, NullIf

from approvals.models import Approval, ApprovalStatus

# The distribution's buckets: (words, upper bound). The last has no bound.
BUCKETS: list[tuple[str, timedelta | None]] = [
    ("under 1 min", timedelta(minutes=1)),
    ("1–5 min", timedelta(minutes=5)),
    ("5–15 min", timedelta(minutes=15)),
    ("15–60 min", timedelta(hours=1)),
    ("1–4 h", timedelta(hours=4)),
    ("4–24 h", timedelta(days=1)),
    ("over 1 day", None),
]
WINDOWS = {"7": 7, "30": 30, "90": 90}
TOP = 15  # rows in the by-tool and by-agent tables
OLDEST = 5
DECIDED_BY_A_PERSON = (ApprovalStatus.APPROVED, ApprovalStatus.REJECTED, ApprovalStatus.CHANGES_REQUESTED)
OUTCOMES = ("total", "approved", "rejected", "changes_requested", "edited", "expired", "pending")


@dataclass
class Breakdown:
    """Approvals of one tool (or agent): how many, and how they ended."""

    name: str
    total: int
    approved: int
    rejected: int
    changes_requested: int
    edited: int
    expired: int
    pending: int

    @property
    def decided(self) -> int:
        return self.approved + self.rejected + self.changes_requested

    @property
    def reject_rate(self) -> float | None:
        return self.rejected / self.decided if self.decided else None

    @property
    def edit_rate(self) -> float | None:
        return self.edited / self.approved if self.approved else None


@dataclass
class Insight:
    days: int
    since: datetime
    total: int
    decided: int
    median: timedelta | None
    p90: timedelta | None
    buckets: list[tuple[str, int]]
    waited_past_hour: int
    waited_past_day: int
    approved: int
    rejected: int
    changes_requested: int
    edited: int
    by_tool: list[Breakdown] = field(default_factory=list)
    by_agent: list[Breakdown] = field(default_factory=list)
    oldest_waiting: list[Approval] = field(default_factory=list)

    @property
    def reject_rate(self) -> float | None:
        return self.rejected / self.decided if self.decided else None

    @property
    def edit_rate(self) -> float | None:
        return self.edited / self.approved if self.approved else None

    @property
    def changes_rate(self) -> float | None:
        return self.changes_requested / self.decided if self.decided else None

    @property
    def busiest_bucket(self) -> int:
        return max((count for _, count in self.buckets), default=0)


def _time_to_decision():
    return ExpressionWrapper(F("decided_at") - F("created_at"), output_field=DurationField())


def decision_insight(tenant, *, days: int, now: datetime) -> Insight:
    since = now - timedelta(days=days)
    approvals = Approval.objects.filter(tenant=tenant, created_at__gte=since)
    decided = approvals.filter(status__in=DECIDED_BY_A_PERSON, decided_at__isnull=False).annotate(
        took=_time_to_decision()
    )
    waited = ExpressionWrapper(
        Coalesce(F("decided_at"), Value(now)) - F("created_at"), output_field=DurationField()
    )
    counts = approvals.annotate(waited=waited).aggregate(
        total=Count("pk"),
        decided=Count("pk", filter=Q(status__in=DECIDED_BY_A_PERSON, decided_at__isnull=False)),
        **_outcome_counts(),
        past_hour=Count("pk", filter=Q(waited__gt=timedelta(hours=1))),
        past_day=Count("pk", filter=Q(waited__gt=timedelta(days=1))),
        **_bucket_counts(),
    )
    return Insight(
        days=days,
        since=since,
        total=counts["total"],
        decided=counts["decided"],
        median=_quantile(decided, counts["decided"], 0.5),
        p90=_quantile(decided, counts["decided"], 0.9),
        buckets=[(words, counts[f"bucket_{index}"]) for index, (words, _) in enumerate(BUCKETS)],
        waited_past_hour=counts["past_hour"],
        waited_past_day=counts["past_day"],
        approved=counts["approved"],
        rejected=counts["rejected"],
        changes_requested=counts["changes_requested"],
        edited=counts["edited"],
        by_tool=_breakdown(approvals, "tool_key"),
        by_agent=_breakdown(
            approvals.annotate(who=Coalesce(NullIf("agent_key", Value("")), "flow_key")), "who"
        ),
        oldest_waiting=list(
            Approval.objects.filter(tenant=tenant, status=ApprovalStatus.PENDING)
            .exclude(expires_at__lte=now)
            .order_by("created_at")
            .only(
                "id",
                "tool_key",
                "agent_key",
                "flow_key",
                "node_id",
                "created_at",
                "required_role",
                "summary",
                "arguments",
            )[:OLDEST]
        ),
    )


def _outcome_counts() -> dict:
    return {
        "approved": Count("pk", filter=Q(status=ApprovalStatus.APPROVED)),
        "rejected": Count("pk", filter=Q(status=ApprovalStatus.REJECTED)),
        "changes_requested": Count("pk", filter=Q(status=ApprovalStatus.CHANGES_REQUESTED)),
        "edited": Count("pk", filter=Q(status=ApprovalStatus.APPROVED, decision__arguments__isnull=False)),
    }


def _bucket_counts() -> dict:
    """One conditional count per bucket of the time people took to decide."""
    person_decided = Q(status__in=DECIDED_BY_A_PERSON, decided_at__isnull=False)
    counts, lower = {}, None
    for index, (_, upper) in enumerate(BUCKETS):
        condition = person_decided
        if lower is not None:
            condition &= Q(waited__gte=lower)
        if upper is not None:
            condition &= Q(waited__lt=upper)
        counts[f"bucket_{index}"] = Count("pk", filter=condition)
        lower = upper
    return counts


def _quantile(decided: QuerySet, count: int, fraction: float) -> timedelta | None:
    """The nearest-rank quantile: one query that skips to its row."""
    if not count:
        return None
    rank = max(int(-(-count * fraction // 1)) - 1, 0)  # ceil(count * fraction), from 0
    return decided.order_by("took").values_list("took", flat=True)[rank]


def _breakdown(approvals: QuerySet, key: str) -> list[Breakdown]:
    rows = (
        approvals.values(key)
        .annotate(
            total=Count("pk"),
            **_outcome_counts(),
            expired=Count("pk", filter=Q(status=ApprovalStatus.EXPIRED)),
            pending=Count("pk", filter=Q(status=ApprovalStatus.PENDING)),
        )
        .order_by("-total", key)[:TOP]
    )
    return [
        Breakdown(
            name=row[key] or "",
            **{name: row[name] for name in OUTCOMES},
        )
        for row in rows
    ]
