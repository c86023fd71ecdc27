"""This process's own Prometheus metrics, the way every process that serves them reads them."""

import os

from prometheus_client import REGISTRY, CollectorRegistry
from prometheus_client.multiprocess import MultiProcessCollector


def process_registry() -> CollectorRegistry:
    """This process's metrics, or, in multiprocess mode, those of every process sharing the directory."""
    if "PROMETHEUS_MULTIPROC_DIR" in os.environ:
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        return registry
    return REGISTRY
