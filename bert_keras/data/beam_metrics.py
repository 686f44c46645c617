"""Beam counters of the data pipelines in one namespace, read back into the summary JSON. Every
record dropped is counted under "dropped.<reason>" and skipped, never a crash."""

from __future__ import annotations

import functools

from apache_beam.metrics import Metrics

NAMESPACE = "bert_keras.data"
DROPPED_PREFIX = "dropped."
# String sets "first.<reason>": where (`file:line`) each file first dropped one (one entry a file).
FIRST_PREFIX = "first."
UNDECODABLE_LINE = "undecodable_line"


@functools.lru_cache(maxsize=None)
def counter(name: str):
  """The counter `name` in NAMESPACE (cached: one per record would be slow)."""
  return Metrics.counter(NAMESPACE, name)


def count_dropped(reason: str, n: int = 1) -> None:
  counter(DROPPED_PREFIX + reason).inc(n)


class FirstDrops:
  """Notes where each (source, reason) first dropped a record; one per DoFn (made in `setup`).
  `dropper(source)` is the readers' `drop(reason, where=None)`, which also counts."""

  def __init__(self):
    self._noted = set()

  def note(self, source: str, reason: str, where=None) -> None:
    if (source, reason) not in self._noted:
      self._noted.add((source, reason))
      location = source if where is None else f"{source}:{where}"
      Metrics.string_set(NAMESPACE, FIRST_PREFIX + reason).add(location)

  def dropper(self, source: str):
    def drop(reason: str, where=None) -> None:
      count_dropped(reason)
      self.note(source, reason, where)
    return drop


def _location_key(location: str):
  path, _, line = location.rpartition(":")
  return (path, int(line)) if line.isdigit() else (location, 0)


def query_first_drops(result) -> dict:
  """{reason: the first "file:line" dropped for it} of a finished pipeline."""
  from apache_beam.metrics.metric import MetricsFilter  # pylint: disable=g-import-not-at-top

  found = {}
  for s in result.metrics().query(MetricsFilter().with_namespace(NAMESPACE)).get("string_sets", []):
    name = s.key.metric.name
    if not name.startswith(FIRST_PREFIX):
      continue
    value = s.committed if s.committed is not None else s.attempted
    found.setdefault(name[len(FIRST_PREFIX):], set()).update(value or ())
  return {reason: min(locations, key=_location_key) for reason, locations in found.items() if locations}


def undecodable_note(dropped: dict, first_dropped: dict) -> str:
  """"N lines were not valid UTF-8 (first: file:line)", or "" when none was."""
  count = int(dropped.get(UNDECODABLE_LINE, 0))
  if not count:
    return ""
  first = first_dropped.get(UNDECODABLE_LINE)
  where = f" (first: {first})" if first else ""
  return f"{count} line{'s were' if count != 1 else ' was'} not valid UTF-8{where}"


def query_counters(result) -> dict:
  """{name: value} of the NAMESPACE counters of a finished pipeline."""
  from apache_beam.metrics.metric import MetricsFilter  # pylint: disable=g-import-not-at-top

  values = {}
  for c in result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))["counters"]:
    value = c.committed if c.committed is not None else c.attempted
    values[c.key.metric.name] = values.get(c.key.metric.name, 0) + (value or 0)
  return values
