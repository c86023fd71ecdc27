"""What Prometheus reads of the chains: each tenant's heads, so that an outside system keeps
where every chain ended and can tell an entry removed from the end."""

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily, Metric

from audit.models import ChainHead


class ChainHeadsCollector:
    def collect(self) -> Iterator[Metric]:
        sequence = GaugeMetricFamily(
            "kindgi_chain_head_sequence",
            "The sequence of the last entry of each tenant's chain (decisions, audit).",
            labels=["tenant", "chain"],
        )
        hashes = InfoMetricFamily(
            "kindgi_chain_head",
            "The hash of the last entry of each tenant's chain.",
            labels=["tenant", "chain"],
        )
        for slug, chain, at, hash in ChainHead.objects.order_by("tenant__slug", "chain").values_list(
            "tenant__slug", "chain", "sequence", "hash"
        ):
            sequence.add_metric([slug, chain], at)
            hashes.add_metric([slug, chain], {"hash": hash})
        yield sequence
        yield hashes
