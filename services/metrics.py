"""Prometheus metrics of the service (prometheus-client), one collector registry per app:
experiments by status and the queue length (read from the registry at each scrape), games
played and shard latency (counted by this process as shards finish)."""
from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily

from services.registry import STATUSES, Registry

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
SHARD_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


class _RegistryCollector:
    """Gauges computed from the experiment registry when Prometheus scrapes."""

    def __init__(self, registry: Registry):
        self.registry = registry

    def collect(self):
        counts = self.registry.status_counts()
        experiments = GaugeMetricFamily("meeplelab_experiments", "experiments by status",
                                        labels=["status"])
        for status in STATUSES:
            experiments.add_metric([status], counts.get(status, 0))
        yield experiments
        yield GaugeMetricFamily("meeplelab_queue_length", "experiments waiting to run",
                                value=counts.get("queued", 0))


class Metrics:
    """The app's metrics; `shard_done` is the runner's per-shard callback."""

    def __init__(self, registry: Registry):
        self.prometheus = CollectorRegistry()
        self.games = Counter("meeplelab_games_played", "games played by this service",
                             registry=self.prometheus)
        self.shard_seconds = Histogram("meeplelab_shard_seconds", "seconds from a shard "
                                       "task's submission to its result (a task plays one "
                                       "or more shards)", buckets=SHARD_BUCKETS,
                                       registry=self.prometheus)
        self.prometheus.register(_RegistryCollector(registry))

    def shard_done(self, seconds: float, games: int) -> None:
        self.games.inc(games)
        self.shard_seconds.observe(seconds)

    def exposition(self) -> bytes:
        return generate_latest(self.prometheus)
