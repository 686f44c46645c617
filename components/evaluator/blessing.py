"""Blessing logic: a model is blessed when every configured metric is within its bounds.

thresholds: {"accuracy": {"lower_bound": 70}, "loss": {"upper_bound": 0.5}}; a bare number is a
lower bound ({"accuracy": 70}), as in TFX's GenericValueThreshold. Task metrics are on 0-100
(bert_keras/tasks/metrics.py). A metric that is configured but was not computed fails its check (a
misspelt metric name must never bless a model).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from bert_keras.errors import UserError


def normalize_thresholds(thresholds: Mapping[str, Any]) -> dict[str, dict[str, float]]:
  """Validates thresholds and expands bare numbers to {"lower_bound": n}."""
  out = {}
  for metric, bound in thresholds.items():
    if isinstance(bound, (int, float)) and not isinstance(bound, bool):
      bound = {"lower_bound": bound}
    if not isinstance(bound, Mapping) or not bound or set(bound) - {"lower_bound", "upper_bound"}:
      raise UserError(f"threshold for {metric!r} = {bound!r}: expected a number or "
                      f"{{'lower_bound': x, 'upper_bound': y}}")
    for key, value in bound.items():
      if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise UserError(f"threshold {metric}.{key}={value!r} must be a number")
    out[metric] = {k: float(v) for k, v in bound.items()}
  return out


def check_thresholds(metrics: Mapping[str, Any],
                     thresholds: Mapping[str, Any]) -> tuple[bool, list[str], list[str]]:
  """Returns (blessed, passed checks, failed checks), checks as readable strings."""
  passed, failed = [], []
  for metric, bound in sorted(normalize_thresholds(thresholds).items()):
    value = metrics.get(metric)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
      failed.append(f"{metric} missing (have {sorted(metrics)})")
      continue
    for key, limit in sorted(bound.items()):
      ok = value >= limit if key == "lower_bound" else value <= limit
      text = f"{metric}={value:.4g} {'>=' if key == 'lower_bound' else '<='} {limit:.4g}"
      (passed if ok else failed).append(text)
  return not failed, passed, failed
