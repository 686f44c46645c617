"""Beam counters of the data pipelines, one namespace, so the summary JSON can read them back.

Every record a pipeline drops is counted under "dropped.<reason>" and skipped, never a crash
(Beam examples/complete/game/user_score.py does the same for bad records).
"""

from __future__ import annotations

import functools

from apache_beam.metrics import Metrics

NAMESPACE = "bert_keras.data"
DROPPED_PREFIX = "dropped."


@functools.lru_cache(maxsize=None)
def counter(name: str):
  """The counter `name` in NAMESPACE (cached: creating one per record would be slow)."""
  return Metrics.counter(NAMESPACE, name)


def count_dropped(reason: str, n: int = 1) -> None:
  counter(DROPPED_PREFIX + reason).inc(n)


def query_counters(result) -> dict:
  """{name: value} of the NAMESPACE counters of a finished pipeline (committed where the runner has them)."""
  from apache_beam.metrics.metric import MetricsFilter  # pylint: disable=g-import-not-at-top

  values = {}
  for c in result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))["counters"]:
    value = c.committed if c.committed is not None else c.attempted
    values[c.key.metric.name] = values.get(c.key.metric.name, 0) + (value or 0)
  return values
